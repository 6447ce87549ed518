// The reshard planner's search on one mesh (ReshardPlanner.h).
//
// 1. Cut the axes of source, target and partial axes into common atoms.
// 2. Dijkstra over layouts: from each layout, every single-atom step the
//    collectives allow (gather the minor-most atom of a dim, slice a free
//    atom onto a dim, all_to_all the minor-most atom of one dim onto
//    another, reduce or reduce-scatter a partial atom) and a few multi-atom
//    steps that cost less than their pieces (reduce every partial atom at
//    once, gather a whole dim, slice a whole target dim, permute straight
//    to the target's tiling). Cost = bytes per device, ties broken by the
//    number of steps.
// 3. Padding: a step that adds or removes the minor atom of a dim is exact
//    only when the padded blocks nest (b_outer == m * b_inner, or the dim
//    was whole); otherwise that step is not offered and the whole-dim
//    gather is (its data is a contiguous prefix of the gathered buffer).
// 4. Consecutive gathers (or slices) of one dim are merged into one
//    multi-axis collective, and atoms back into axes.
#include "passes/reshard/ReshardPlannerInternal.h"

#include <fmt/format.h>

#include <algorithm>

#include <queue>
#include <stdexcept>
#include <unordered_map>

namespace shardc {

const char *reshardStepName(ReshardStepKind kind) {
  switch (kind) {
  case ReshardStepKind::AllSlice:
    return "all_slice";
  case ReshardStepKind::AllGather:
    return "all_gather";
  case ReshardStepKind::AllToAll:
    return "all_to_all";
  case ReshardStepKind::AllReduce:
    return "all_reduce";
  case ReshardStepKind::ReduceScatter:
    return "reduce_scatter";
  case ReshardStepKind::CollectivePermute:
    return "collective_permute";
  case ReshardStepKind::Relabel:
    return "relabel";
  case ReshardStepKind::Broadcast:
    return "broadcast";
  }
  return "?";
}

namespace reshard {
namespace {

/// A step of the search, in atoms.
struct Move {
  ReshardStepKind kind;
  std::vector<Atom> atoms;
  int64_t dim = -1, concatDim = -1;
  int64_t bytes = 0;
  bool wholeDim = false;
};

/// Whether adding (or removing) a minor atom of size m to a dim of size D
/// already split `outer` ways keeps every element in place: the padded
/// blocks nest.
bool nests(int64_t dimSize, int64_t outer, int64_t m) {
  return outer == 1 || m * localDimSize(dimSize, outer * m) == localDimSize(dimSize, outer);
}

bool uses(const Layout &layout, const Atom &atom) {
  for (const auto &dim : layout.dims)
    for (const Atom &a : dim)
      if (a == atom)
        return true;
  for (const Atom &a : layout.partial)
    if (a == atom)
      return true;
  return false;
}

class Search {
public:
  Search(const AtomTable &atoms, const TensorType &type, const Layout &to,
         const std::string &partialKind)
      : atoms_(atoms), allAtoms_(atoms.allAtoms()), type_(type), to_(to),
        partialKind_(partialKind) {}

  /// Every step from `from`, with the layout it leads to.
  std::vector<std::pair<Layout, Move>> moves(const Layout &from) const {
    std::vector<std::pair<Layout, Move>> out;
    const int64_t bytes = localBytes(from, type_);
    const size_t rank = from.dims.size();
    // Partial atoms: reduce them all at once, or reduce-scatter one onto a dim.
    if (!from.partial.empty()) {
      Layout next = from;
      next.partial.clear();
      int64_t n = atomProduct(from.partial);
      out.push_back(
          {next, Move{ReshardStepKind::AllReduce, from.partial, -1, -1, 2 * (n - 1) * bytes / n}});
      for (size_t i = 0; i < from.partial.size() && partialKind_ == "sum"; ++i) {
        const Atom &a = from.partial[i];
        for (size_t d = 0; d < rank; ++d) {
          int64_t local = localShapeOf(from, type_.shape)[d];
          if (local % a.size != 0 || !nests(type_.shape[d], atomProduct(from.dims[d]), a.size))
            continue;
          Layout scattered = from;
          scattered.partial.erase(scattered.partial.begin() + static_cast<long>(i));
          scattered.dims[d].push_back(a);
          out.push_back({scattered, Move{ReshardStepKind::ReduceScatter,
                                         {a},
                                         (int64_t)d,
                                         -1,
                                         (a.size - 1) * bytes / a.size}});
        }
      }
    }
    for (size_t d = 0; d < rank; ++d) {
      const auto &dim = from.dims[d];
      if (dim.empty())
        continue;
      const Atom &a = dim.back();
      int64_t outer = atomProduct(dim) / a.size;
      Layout gathered = from;
      gathered.dims[d].pop_back();
      if (nests(type_.shape[d], outer, a.size))
        out.push_back(
            {gathered,
             Move{ReshardStepKind::AllGather, {a}, (int64_t)d, -1, (a.size - 1) * bytes}});
      if (dim.size() > 1 || !nests(type_.shape[d], outer, a.size)) {
        Layout whole = from;
        whole.dims[d].clear();
        int64_t n = atomProduct(dim);
        out.push_back(
            {whole, Move{ReshardStepKind::AllGather, dim, (int64_t)d, -1, (n - 1) * bytes, true}});
      }
      // all_to_all: the minor atom of dim d moves to the minor end of dim e.
      for (size_t e = 0; e < rank; ++e) {
        if (e == d || !nests(type_.shape[d], outer, a.size) ||
            !nests(type_.shape[e], atomProduct(from.dims[e]), a.size) ||
            localShapeOf(from, type_.shape)[e] % a.size != 0)
          continue;
        Layout moved = gathered;
        moved.dims[e].push_back(a);
        out.push_back({moved, Move{ReshardStepKind::AllToAll,
                                   {a},
                                   (int64_t)e,
                                   (int64_t)d,
                                   (a.size - 1) * bytes / a.size}});
      }
    }
    // all_slice: a free atom onto the minor end of a dim (free).
    for (const Atom &a : allAtoms_) {
      if (uses(from, a))
        continue;
      for (size_t d = 0; d < rank; ++d) {
        if (!nests(type_.shape[d], atomProduct(from.dims[d]), a.size))
          continue;
        Layout sliced = from;
        sliced.dims[d].push_back(a);
        out.push_back({sliced, Move{ReshardStepKind::AllSlice, {a}, (int64_t)d, -1, 0}});
      }
    }
    // A whole target dim onto an unsharded dim at once (always exact).
    for (size_t d = 0; d < rank; ++d) {
      if (!from.dims[d].empty() || to_.dims[d].size() < 2)
        continue;
      bool free = true;
      for (const Atom &a : to_.dims[d])
        free &= !uses(from, a);
      if (!free)
        continue;
      Layout sliced = from;
      sliced.dims[d] = to_.dims[d];
      out.push_back({sliced, Move{ReshardStepKind::AllSlice, to_.dims[d], (int64_t)d, -1, 0}});
    }
    // Straight to the target when only the devices differ (same tiling).
    if (from.partial.empty() && !(from == to_)) {
      bool sameTiling = true;
      for (size_t d = 0; d < rank; ++d)
        sameTiling &= atomProduct(from.dims[d]) == atomProduct(to_.dims[d]);
      if (sameTiling)
        out.push_back({to_, Move{ReshardStepKind::CollectivePermute, {}, -1, -1, bytes}});
    }
    return out;
  }

private:
  const AtomTable &atoms_;
  const std::vector<Atom> allAtoms_; // the table's, made once per search
  const TensorType &type_;
  const Layout &to_;
  const std::string &partialKind_;
};

/// Turns the search's moves into steps: merged axes, layouts after, pairs.
ReshardPlan buildPlan(const AtomTable &atoms, const TensorType &type, const Layout &from,
                      const std::vector<std::pair<Layout, Move>> &path,
                      const std::string &partialKind) {
  ReshardPlan plan;
  Layout before = from;
  std::vector<Atom> mergedAtoms;
  for (size_t i = 0; i < path.size(); ++i) {
    const auto &[layout, move] = path[i];
    ReshardStep step;
    step.kind = move.kind;
    step.mesh = &atoms.mesh();
    step.dim = move.dim;
    step.concatDim = move.concatDim;
    step.bytes = move.bytes;
    step.wholeDimGather = move.wholeDim;
    step.reduceKind = partialKind;
    step.after = atoms.toSharding(layout);
    step.localShapeAfter = localShapeOf(layout, type.shape);
    std::vector<Atom> stepAtoms = move.atoms;
    if (move.kind == ReshardStepKind::CollectivePermute) {
      auto pairs =
          permutePairs(atoms.mesh(), atoms.toSharding(before), step.after, type.shape.size());
      if (!pairs)
        throw std::logic_error("reshard planner: no permutation between equal tilings");
      step.pairs = *pairs;
      bool identity = true;
      for (auto [s, t] : step.pairs)
        identity &= s == t;
      if (identity)
        step.bytes = 0;
    }
    // Merge with the previous step: gathers of one dim (this one removes the
    // atom before the previous one's) and slices of one dim (in order).
    ReshardStep *last = plan.steps.empty() ? nullptr : &plan.steps.back();
    if (last && last->kind == step.kind && last->dim == step.dim &&
        (step.kind == ReshardStepKind::AllGather || step.kind == ReshardStepKind::AllSlice)) {
      if (step.kind == ReshardStepKind::AllGather)
        mergedAtoms.insert(mergedAtoms.begin(), stepAtoms.begin(), stepAtoms.end());
      else
        mergedAtoms.insert(mergedAtoms.end(), stepAtoms.begin(), stepAtoms.end());
      last->axes = atoms.toAxes(mergedAtoms);
      last->bytes += step.bytes;
      last->after = step.after;
      last->localShapeAfter = step.localShapeAfter;
      last->wholeDimGather |= step.wholeDimGather;
    } else {
      mergedAtoms = stepAtoms;
      step.axes = atoms.toAxes(stepAtoms);
      plan.steps.push_back(step);
    }
    before = layout;
  }
  for (const ReshardStep &s : plan.steps)
    plan.bytes += s.bytes;
  return plan;
}

} // namespace

std::optional<ReshardPlan> searchPlan(const AtomTable &atoms, const TensorType &type,
                                      const Layout &from, const Layout &to,
                                      const std::string &partialKind) {
  constexpr size_t kMaxLayouts = 20000;
  struct Node {
    Layout layout;
    int64_t bytes = 0;
    int steps = 0;
    std::string parent;
    Move move{};
    bool done = false;
  };
  // By layout key (references stay valid as nodes are added).
  std::unordered_map<std::string, Node> nodes;
  using Entry = std::tuple<int64_t, int, std::string>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> queue;
  const std::string start = from.key();
  nodes[start] = Node{from, 0, 0, "", Move{}, false};
  queue.push({0, 0, start});
  Search search(atoms, type, to, partialKind);
  const std::string goal = to.key();
  while (!queue.empty()) {
    auto [bytes, steps, key] = queue.top();
    queue.pop();
    Node &node = nodes[key];
    if (node.done)
      continue;
    node.done = true;
    if (key == goal) {
      std::vector<std::pair<Layout, Move>> path;
      for (std::string k = goal; k != start; k = nodes[k].parent)
        path.insert(path.begin(), {nodes[k].layout, nodes[k].move});
      return buildPlan(atoms, type, from, path, partialKind);
    }
    if (nodes.size() > kMaxLayouts)
      return std::nullopt;
    const Layout &current = node.layout;
    for (auto &[next, move] : search.moves(current)) {
      std::string nextKey = next.key();
      int64_t nextBytes = bytes + move.bytes;
      auto it = nodes.find(nextKey);
      if (it != nodes.end() &&
          (it->second.done || std::make_pair(it->second.bytes, it->second.steps) <=
                                  std::make_pair(nextBytes, steps + 1)))
        continue;
      queue.push({nextBytes, steps + 1, nextKey});
      nodes[std::move(nextKey)] = Node{std::move(next), nextBytes, steps + 1, key, move, false};
    }
  }
  return std::nullopt;
}

ReshardPlan gatherAllPlan(const AtomTable &atoms, const TensorType &type, const Layout &from,
                          const Layout &to, const std::string &partialKind) {
  std::vector<std::pair<Layout, Move>> path;
  Layout layout = from;
  if (!layout.partial.empty()) {
    int64_t n = atomProduct(layout.partial);
    Move move{ReshardStepKind::AllReduce, layout.partial, -1, -1,
              2 * (n - 1) * localBytes(layout, type) / n};
    layout.partial.clear();
    path.push_back({layout, move});
  }
  for (size_t d = 0; d < layout.dims.size(); ++d) {
    if (layout.dims[d].empty())
      continue;
    int64_t n = atomProduct(layout.dims[d]);
    Move move{ReshardStepKind::AllGather,
              layout.dims[d],
              (int64_t)d,
              -1,
              (n - 1) * localBytes(layout, type),
              true};
    layout.dims[d].clear();
    path.push_back({layout, move});
  }
  for (size_t d = 0; d < to.dims.size(); ++d) {
    if (to.dims[d].empty())
      continue;
    layout.dims[d] = to.dims[d];
    path.push_back({layout, Move{ReshardStepKind::AllSlice, to.dims[d], (int64_t)d, -1, 0}});
  }
  ReshardPlan plan = buildPlan(atoms, type, from, path, partialKind);
  plan.fallback = true;
  return plan;
}

} // namespace reshard

namespace {

void checkRequest(const ReshardRequest &r) {
  if (!r.sourceMesh || !r.targetMesh)
    throw std::invalid_argument("reshard planner: no mesh");
  if (r.source.dims.size() != r.type.rank() || r.target.dims.size() != r.type.rank())
    throw std::invalid_argument(fmt::format("reshard planner: sharding rank doesn't match "
                                            "tensor rank: {}, {} vs {}",
                                            r.source.dims.size(), r.target.dims.size(),
                                            r.type.rank()));
}

} // namespace

ReshardPlan planReshard(const ReshardRequest &request) {
  using namespace reshard;
  checkRequest(request);
  if (request.sourceMesh != request.targetMesh &&
      request.sourceMesh->name != request.targetMesh->name)
    return planAcrossMeshes(request);
  AtomTable atoms(*request.sourceMesh);
  for (const Sharding *s : {&request.source, &request.target})
    for (const DimSharding &dim : s->dims)
      for (const AxisRef &axis : dim.axes)
        if (!atoms.addCuts(axis))
          throw std::invalid_argument("reshard planner: unknown axis " + axis.str());
  for (const AxisRef &axis : request.partialAxes)
    if (!atoms.addCuts(axis))
      throw std::invalid_argument("reshard planner: unknown axis " + axis.str());
  if (!atoms.nests()) {
    // The source and the target cut one axis where no common refinement
    // exists ("x":(1)2 against "x":(1)3 of "x"=6): go through the replicated
    // layout, each half planned on its own atoms.
    const Sharding replicated =
        Sharding::replicatedOn(request.target.meshName, request.type.rank());
    const bool sourceReplicated =
        request.partialAxes.empty() &&
        std::all_of(request.source.dims.begin(), request.source.dims.end(),
                    [](const DimSharding &d) { return d.axes.empty(); });
    const bool targetReplicated =
        std::all_of(request.target.dims.begin(), request.target.dims.end(),
                    [](const DimSharding &d) { return d.axes.empty(); });
    if (sourceReplicated || targetReplicated)
      throw std::invalid_argument("reshard planner: sub-axes of one axis that do not nest "
                                  "(no common refinement)");
    ReshardRequest gather = request;
    gather.target = replicated;
    ReshardRequest slice = request;
    slice.source = replicated;
    slice.partialAxes.clear();
    ReshardPlan plan = planReshard(gather);
    ReshardPlan rest = planReshard(slice);
    plan.steps.insert(plan.steps.end(), rest.steps.begin(), rest.steps.end());
    plan.fallback = true;
    return plan;
  }
  std::optional<Layout> from = atoms.layoutOf(request.source, request.partialAxes);
  std::optional<Layout> to = atoms.layoutOf(request.target, {});
  if (!from || !to)
    throw std::invalid_argument("reshard planner: unknown axis");
  if (*from == *to)
    return ReshardPlan{};
  if (std::optional<ReshardPlan> plan =
          searchPlan(atoms, request.type, *from, *to, request.partialKind))
    return *plan;
  return gatherAllPlan(atoms, request.type, *from, *to, request.partialKind);
}

std::string describePlan(const ReshardPlan &plan) {
  std::string out;
  for (const ReshardStep &s : plan.steps) {
    out += reshardStepName(s.kind);
    if (s.kind == ReshardStepKind::AllToAll)
      out += fmt::format(" split_dim={} concat_dim={}", s.dim, s.concatDim);
    else if (s.dim >= 0)
      out += fmt::format(" dim={}", s.dim);
    if (!s.axes.empty()) {
      out += " axes={";
      for (size_t i = 0; i < s.axes.size(); ++i)
        out += (i ? ", " : "") + s.axes[i].str();
      out += "}";
    }
    if (s.kind == ReshardStepKind::AllReduce && s.reduceKind != "sum")
      out += " kind=" + s.reduceKind;
    out += fmt::format(" bytes={}\n", s.bytes);
  }
  return out;
}

} // namespace shardc
