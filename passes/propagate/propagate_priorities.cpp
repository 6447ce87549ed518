// propagate-shardings, part 6: the per-edge choices of the driver: which
// factors may move in each of Shardy's op-priority stages, and which mesh an
// edge works on; and how a dim waits for its user priority's round.
#include "passes/propagate/PropagateInternal.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace shardc::propagation {

Direction edgeDirection(const Edge &edge, int f, int stage) {
  // Need-replication factors move too (Shardy blocks no factor kind), like
  // permutation and reduction ones: after the pass-through factors.
  FactorKind kind = edge.rule->factorKinds[f];
  if (edge.passThroughOp)
    return stage == 0 && edge.multiUseOperand ? Direction::None : Direction::Both;
  if (stage >= 4)
    return Direction::Both;
  // Shardy holds a broadcast's forward direction back until the last stage,
  // so a factor reaching its result from its users (a dot's contracting dim)
  // comes first.
  if (stage == 3 || (stage == 2 && kind == FactorKind::PassThrough))
    return edge.broadcast ? Direction::Backward : Direction::Both;
  return Direction::None;
}

int edgeDirections(const Edge &edge, int stage) {
  // 0: nothing, 1: the pass-through factors, 2: every factor that may move,
  // 3: every factor backward (a broadcast in stage 3).
  if (edge.passThroughOp)
    return stage == 0 && edge.multiUseOperand ? 0 : 2;
  if (stage <= 1)
    return 0;
  if (stage == 2)
    return 1;
  return stage == 3 && edge.broadcast ? 3 : 2;
}

const Mesh *edgeMesh(const Edge &edge, const Module &module) {
  std::vector<std::pair<const Mesh *, int>> counts;
  bool maximal = false;
  auto count = [&](const Slot &slot) {
    if (!*slot.sharding)
      return;
    const Mesh *mesh = module.findMesh((*slot.sharding)->meshName);
    maximal = maximal || (mesh && mesh->isMaximal());
    if (!mesh || mesh->isEmpty() || mesh->isMaximal())
      return;
    for (auto &[m, n] : counts)
      if (m == mesh) {
        ++n;
        return;
      }
    counts.emplace_back(mesh, 1);
  };
  for (const Slot &slot : edge.operands)
    count(slot);
  for (const Slot &slot : edge.results)
    count(slot);
  // Shardy: a maximal-mesh tensor leaves the op without a common mesh, so
  // nothing propagates through it.
  if (maximal)
    return nullptr;
  const Mesh *best = nullptr;
  int bestCount = 0;
  for (auto &[m, n] : counts)
    if (n > bestCount) {
      best = m;
      bestCount = n;
    }
  return best;
}

void holdBack(Sharding &sharding, size_t d, const std::vector<AxisRef> *manualAxes) {
  DimSharding &dim = sharding.dims[d];
  auto isManual = [&](const AxisRef &axis) {
    return manualAxes && std::any_of(manualAxes->begin(), manualAxes->end(),
                                     [&](const AxisRef &m) { return m.name == axis.name; });
  };
  // In/out shardings list their manual axes first (the verifier checks it).
  auto firstFree = std::find_if_not(dim.axes.begin(), dim.axes.end(), isManual);
  sharding.replicated.insert(sharding.replicated.end(), firstFree, dim.axes.end());
  dim.axes.erase(firstFree, dim.axes.end());
  dim.open = false;
}

} // namespace shardc::propagation
