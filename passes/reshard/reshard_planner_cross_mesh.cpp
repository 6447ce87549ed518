// Reshard planning across two meshes over the same devices (other axis names
// or another device order, examples/two_meshes.shd), and to or from a
// maximal mesh.
//
// 1. Candidates: every layout S' on the source mesh that tiles the tensor
//    like the target (the same number of shards per dim), built from the
//    source mesh's axes cut into prime-sized atoms, in any order per dim.
// 2. For each: the same-mesh plan source -> S', then, when every device
//    already holds under S' the block the target gives it, a relabel (0
//    bytes), else a collective_permute (L).
// 3. Always also: gather to replicated, relabel, slice on the target mesh.
// 4. The cheapest wins (then the fewest steps).
#include "passes/reshard/ReshardPlannerInternal.h"

#include "ir/ShardingLayout.h"

#include <functional>
#include <stdexcept>

namespace shardc::reshard {
namespace {

constexpr size_t kMaxCandidates = 4000;

/// Every way to give dim d an ordered run of unused atoms whose sizes
/// multiply to counts[d], for all dims.
void enumerateTilings(const std::vector<Atom> &atoms, const std::vector<int64_t> &counts,
                      std::vector<Layout> &out) {
  Layout current;
  current.dims.resize(counts.size());
  std::vector<bool> used(atoms.size(), false);
  std::function<void(size_t, int64_t)> fill = [&](size_t d, int64_t remaining) {
    if (out.size() >= kMaxCandidates)
      return;
    if (d == counts.size()) {
      out.push_back(current);
      return;
    }
    if (remaining == 1) {
      fill(d + 1, d + 1 < counts.size() ? counts[d + 1] : 1);
      return;
    }
    for (size_t i = 0; i < atoms.size(); ++i) {
      if (used[i] || remaining % atoms[i].size != 0)
        continue;
      used[i] = true;
      current.dims[d].push_back(atoms[i]);
      fill(d, remaining / atoms[i].size);
      current.dims[d].pop_back();
      used[i] = false;
    }
  };
  if (!counts.empty())
    fill(0, counts[0]);
}

bool samePlacement(const Mesh &a, const Sharding &sa, const Mesh &b, const Sharding &sb,
                   const std::vector<int64_t> &shape) {
  std::vector<DeviceBlock> blocksA = deviceBlocks(a, shape, sa);
  std::vector<DeviceBlock> blocksB = deviceBlocks(b, shape, sb);
  if (blocksA.size() != blocksB.size())
    return false;
  for (size_t i = 0; i < blocksA.size(); ++i)
    if (blocksA[i].device != blocksB[i].device || blocksA[i].start != blocksB[i].start ||
        blocksA[i].extent != blocksB[i].extent)
      return false;
  return true;
}

ReshardStep crossStep(ReshardStepKind kind, const ReshardRequest &r, int64_t bytes,
                      const Sharding &after) {
  ReshardStep step;
  step.kind = kind;
  step.mesh = r.targetMesh;
  step.bytes = bytes;
  step.after = after;
  step.localShapeAfter = localShape(r.type.shape, after, *r.targetMesh);
  return step;
}

void append(ReshardPlan &plan, const ReshardPlan &more) {
  plan.steps.insert(plan.steps.end(), more.steps.begin(), more.steps.end());
  plan.bytes += more.bytes;
  plan.fallback |= more.fallback;
}

bool better(const ReshardPlan &a, const ReshardPlan &b) {
  return a.bytes != b.bytes ? a.bytes < b.bytes : a.steps.size() < b.steps.size();
}

} // namespace

ReshardPlan planAcrossMeshes(const ReshardRequest &r) {
  const Mesh &from = *r.sourceMesh;
  const Mesh &to = *r.targetMesh;
  const size_t rank = r.type.rank();
  const bool fromWhole = from.axes.empty(), toWhole = to.axes.empty();
  if (!fromWhole && !toWhole && from.deviceCount() != to.deviceCount())
    throw std::invalid_argument("reshard planner: meshes of different device counts");

  auto samePlan = [&](const Mesh &mesh, const Sharding &src, std::vector<AxisRef> partial,
                      const Sharding &dst) {
    ReshardRequest same = r;
    same.sourceMesh = same.targetMesh = &mesh;
    same.source = src;
    same.partialAxes = std::move(partial);
    same.target = dst;
    return planReshard(same);
  };
  const Sharding replicatedFrom = Sharding::replicatedOn(from.name, rank);
  const Sharding replicatedTo = Sharding::replicatedOn(to.name, rank);

  // Candidate 0: gather everything, relabel (or broadcast from the one
  // device of a maximal mesh), slice on the target mesh.
  ReshardPlan best = samePlan(from, r.source, r.partialAxes, replicatedFrom);
  if (from.isMaximal() && !(to.isMaximal() && to.deviceIds == from.deviceIds))
    best.steps.push_back(crossStep(ReshardStepKind::Broadcast, r, r.type.bytes(), replicatedTo));
  else
    best.steps.push_back(crossStep(ReshardStepKind::Relabel, r, 0, replicatedTo));
  best.bytes += best.steps.back().bytes;
  append(best, samePlan(to, replicatedTo, {}, r.target));
  if (fromWhole || toWhole)
    return best;

  // Candidates S' on the source mesh with the target's tiling.
  AtomTable atoms(from);
  for (size_t axis = 0; axis < from.axes.size(); ++axis)
    atoms.addPrimeCuts(static_cast<int>(axis));
  for (const DimSharding &dim : r.source.dims)
    for (const AxisRef &axis : dim.axes)
      atoms.addCuts(axis);
  for (const AxisRef &axis : r.partialAxes)
    atoms.addCuts(axis);
  if (!atoms.nests())
    return best;
  std::vector<int64_t> counts;
  for (const DimSharding &dim : r.target.dims)
    counts.push_back(shardCount(dim, to));
  std::vector<Layout> tilings;
  enumerateTilings(atoms.allAtoms(), counts, tilings);
  std::optional<Layout> source = atoms.layoutOf(r.source, r.partialAxes);
  if (!source)
    return best;
  for (const Layout &tiling : tilings) {
    Sharding middle = atoms.toSharding(tiling);
    bool relabel = samePlacement(from, middle, to, r.target, r.type.shape);
    ReshardPlan plan;
    if (!(*source == tiling)) {
      std::optional<ReshardPlan> sub = searchPlan(atoms, r.type, *source, tiling, r.partialKind);
      if (!sub)
        continue;
      plan = *sub;
    }
    int64_t bytes = relabel ? 0 : localBytes(tiling, r.type);
    plan.steps.push_back(
        crossStep(relabel ? ReshardStepKind::Relabel : ReshardStepKind::CollectivePermute, r, bytes,
                  r.target));
    plan.bytes += bytes;
    if (better(plan, best))
      best = plan;
  }
  return best;
}

} // namespace shardc::reshard
