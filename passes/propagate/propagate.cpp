// propagate-shardings: completes every value's sharding (OpenXLA Shardy's
// default pipeline: user priorities, then op priorities, aggressive conflict
// resolution). The driver; the steps live in propagate_import.cpp,
// propagate_projection.cpp, propagate_factors.cpp, propagate_graph.cpp,
// propagate_priorities.cpp, propagate_origins.cpp and propagate_close.cpp
// (see PropagateInternal.h).
//
//   0. Shardy's import step: a fully closed sharding_constraint that decides
//      its operand's sharding is copied onto it (propagate_import.cpp).
//   1. Edges: every op with a factor rule, every sharding_constraint/reshard,
//      returned value <-> function result, manual_computation boundaries.
//   2. User priorities: a dim with priority p > 0 starts closed and empty, its
//      axes held back as if explicitly replicated (nothing else may take them
//      on that tensor), and is released, as written, before round p. A later
//      round can only add axes, so it never overrides an earlier decision.
//      manual_computation in/out shardings and the body arguments that start
//      from them are deferred too, keeping their manual axes.
//   3. Each round first pushes the function results' shardings onto the
//      returned values (as Shardy does), then runs Shardy's op-priority
//      stages, each to a fixed point of forward then backward sweeps over
//      the edges:
//        stage 0: only pass-through ops (elementwise, reshape, transpose, the
//                 identity edges) none of whose operands has another use,
//                 every factor both ways (a value used twice waits, so
//                 backward propagation reaches its uses first);
//        stage 1: every pass-through op;
//        stage 2: also the pass-through factors of every other op
//                 (broadcast: backward only);
//        stage 3: every factor of every op, a broadcast's backward only;
//        stage 4: every factor of every op.
//   4. Visiting an edge: pick its mesh (the mesh most of its sharded tensors
//      name, the first on a tie; empty meshes never count; none when a
//      tensor is on a maximal mesh); tensors on another mesh take no part,
//      those on an empty mesh take the edge's mesh. Project, decide per factor,
//      project back; a tensor that gains axes is updated (a tensor without a
//      sharding gets one with every dim open).
//   5. Close (Shardy's export, propagate_close.cpp): every dim closed, no priorities, no
//      replicated axes. A value that no sharding
//      reached gets a replicated sharding when the program has exactly one
//      mesh with axes; otherwise it stays without one. A sharding_constraint
//      or reshard attribute becomes its result's sharding; a
//      manual_computation's in/out shardings take what propagation gave
//      their free axes.
//
// Worked example (examples/mlp.shd): %h = matmul %x, %w1 takes "x" on its
// rows from %x and "y" on its columns from %w1; add and relu pass [{"x"},
// {"y"}] on to %a; the second matmul's result is closed at [{"x"}, {}].
#include "passes/propagate/Propagate.h"
#include "passes/propagate/PropagateInternal.h"
#include "passes/propagate/ShardingOrigins.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <unordered_map>

namespace shardc {
namespace {

using namespace propagation;

/// The driver's bookkeeping of one edge, apart from the edge so that a sweep
/// over settled edges reads two arrays in order (the edges and their slots
/// are far apart in memory on a long program): a visit with op-priority
/// directions `settledDirections` (edgeDirections) changed nothing at clock
/// `settledClock`; until one of its tensors changes, a visit with the same
/// directions would change nothing either, whatever the round or stage.
struct EdgeState {
  uint64_t settledClock = 0;
  int8_t settledDirections = -1;
  std::array<int8_t, kStages> directions{}; // edgeDirections per stage
  uint32_t firstSlot = 0;                   // its slots' numbers: slotIds_[firstSlot, + numSlots)
  uint32_t numSlots = 0;
  /// edgeMesh's answer when the clock read meshClock (none before the first
  /// visit): it changes only when a tensor of the edge does.
  bool meshKnown = false;
  uint64_t meshClock = 0;
  const Mesh *mesh = nullptr;
};

/// A dim held back until its priority's round.
struct Deferred {
  Storage *storage;
  size_t dim;
  DimSharding original;
  int64_t priority;
  std::optional<uint32_t> id = std::nullopt; // its slot number, when an edge refers to it
};

class Propagator {
public:
  Propagator(Module &module, ShardingOrigins *origins) : module_(module), origins_(origins) {}

  void run() {
    std::vector<const Storage *> copiedFromConstraint = applyShardingConstraints(module_);
    graph_ = buildGraph(module_);
    collectStorage();
    if (origins_) {
      for (const Storage *s : storage_)
        recorder_.recordWritten(s);
      for (const Storage &s : graph_.attributeStorage)
        recorder_.recordWritten(&s);
      for (const Storage *s : graph_.copiedFromInSharding)
        recorder_.markPropagated(s);
      for (const Storage *s : copiedFromConstraint)
        recorder_.markCopiedFromConstraint(s);
    }
    std::vector<int64_t> rounds = deferPriorities();
    numberSlots();
    for (int64_t round : rounds) {
      round_ = round;
      release(round);
      size_t first = 0; // of the function's edges in states_
      for (std::vector<Edge> &edges : graph_.functions) {
        EdgeState *states = states_.data() + first;
        // Shardy pushes the function results' shardings onto the returned
        // values before anything else, so a written result is there first.
        for (size_t e = 0; e < edges.size(); ++e)
          if (!edges[e].op)
            visit(edges[e], states[e], 0);
        for (int stage = 0; stage < kStages; ++stage)
          fixedPoint(edges, states, stage);
        first += edges.size();
      }
    }
    closeShardings(module_, storage_, ranks_, graph_);
    if (origins_)
      recorder_.exportTo(*origins_, valueOf_, resultOf_);
  }

private:
  // ---- storage -------------------------------------------------------------------

  void collectStorage() {
    auto addValue = [&](Value &v) {
      if (!v.typeKnown)
        return;
      storage_.push_back(&v.sharding);
      ranks_.push_back(v.type.rank());
      if (origins_)
        valueOf_[&v.sharding] = &v;
    };
    auto addBlock = [&](Block &b) {
      for (auto &arg : b.args)
        addValue(*arg);
      walkOps(b, [&](Op &op) {
        for (auto &r : op.results)
          addValue(*r);
        for (Block *region : op.regions())
          for (auto &arg : region->args)
            addValue(*arg);
      });
    };
    auto addFunction = [&](Function &f) {
      addBlock(f.body);
      for (ResultSpec &spec : f.results) {
        if (spec.typeInvalid)
          continue;
        storage_.push_back(&spec.sharding);
        ranks_.push_back(spec.type.rank());
        if (origins_)
          resultOf_[&spec.sharding] = &spec;
      }
    };
    addFunction(module_.snippet);
    for (auto &f : module_.functions)
      addFunction(*f);
  }

  /// Gives every slot the number of its place, for the change clock (the
  /// places numbered in the order edges first name them), and every edge its
  /// EdgeState.
  void numberSlots() {
    size_t slots = 0;
    for (const std::vector<Edge> &edges : graph_.functions)
      for (const Edge &edge : edges)
        slots += edge.operands.size() + edge.results.size();
    std::unordered_map<const Storage *, uint32_t> ids(slots);
    auto number = [&](Slot &slot) {
      slot.id = ids.try_emplace(slot.sharding, static_cast<uint32_t>(ids.size())).first->second;
      slotIds_.push_back(slot.id);
    };
    slotIds_.reserve(slots);
    for (std::vector<Edge> &edges : graph_.functions)
      for (Edge &edge : edges) {
        EdgeState &state = states_.emplace_back();
        for (int stage = 0; stage < kStages; ++stage)
          state.directions[stage] = static_cast<int8_t>(edgeDirections(edge, stage));
        state.firstSlot = static_cast<uint32_t>(slotIds_.size());
        state.numSlots = static_cast<uint32_t>(edge.operands.size() + edge.results.size());
        std::for_each(edge.operands.begin(), edge.operands.end(), number);
        std::for_each(edge.results.begin(), edge.results.end(), number);
      }
    changedAt_.assign(ids.size(), 0);
    for (Deferred &d : deferred_)
      if (auto it = ids.find(d.storage); it != ids.end())
        d.id = it->second;
  }

  // ---- user priorities -----------------------------------------------------------

  /// Holds back every dim with a priority > 0, the values' and the
  /// manual_computation in/out shardings'; returns the rounds to run.
  std::vector<int64_t> deferPriorities() {
    std::set<int64_t> rounds = {0};
    for (Storage *s : storage_)
      defer(s, rounds);
    for (Storage &s : graph_.attributeStorage)
      defer(&s, rounds);
    return {rounds.begin(), rounds.end()};
  }

  /// Defers the dims of `*s` with a priority > 0.
  void defer(Storage *s, std::set<int64_t> &rounds) {
    if (!*s)
      return;
    Sharding &sharding = **s;
    auto manual = graph_.manualAxesOf.find(s);
    for (size_t d = 0; d < sharding.dims.size(); ++d) {
      int64_t p = sharding.dims[d].priority.value_or(0);
      sharding.dims[d].priority.reset();
      if (p <= 0)
        continue;
      deferred_.push_back(Deferred{s, d, sharding.dims[d], p});
      rounds.insert(p);
      holdBack(sharding, d, manual == graph_.manualAxesOf.end() ? nullptr : &manual->second);
    }
  }

  void release(int64_t round) {
    for (Deferred &d : deferred_) {
      if (d.priority != round || !*d.storage)
        continue;
      Sharding &sharding = **d.storage;
      std::vector<AxisRef> &replicated = sharding.replicated;
      for (const AxisRef &a : d.original.axes)
        for (auto it = replicated.begin(); it != replicated.end(); ++it)
          if (it->name == a.name && it->preSize == a.preSize && it->size == a.size) {
            replicated.erase(it);
            break;
          }
      sharding.dims[d.dim] = d.original;
      sharding.dims[d.dim].priority.reset();
      ++clock_;
      if (d.id)
        changedAt_[*d.id] = clock_;
    }
  }

  // ---- the fixed point -------------------------------------------------------------

  /// `states`: those of `edges`, in the same order.
  void fixedPoint(std::vector<Edge> &edges, EdgeState *states, int stage) {
    // Axes only ever grow, so this ends; the bound guards against a bug.
    for (int sweep = 0; sweep < 10000; ++sweep) {
      bool changed = false;
      for (size_t e = 0; e < edges.size(); ++e)
        changed |= visit(edges[e], states[e], stage);
      for (size_t e = edges.size(); e-- > 0;)
        changed |= visit(edges[e], states[e], stage);
      if (!changed)
        return;
    }
  }

  /// Whether an edge settled with the directions of `stage` and none of its
  /// tensors changed since.
  bool settled(const EdgeState &state, int stage) const {
    return state.settledDirections == state.directions[stage] &&
           unchangedSince(state, state.settledClock);
  }

  /// Whether none of the edge's tensors changed after the clock read `clock`.
  bool unchangedSince(const EdgeState &state, uint64_t clock) const {
    const uint32_t *ids = slotIds_.data() + state.firstSlot;
    return std::all_of(ids, ids + state.numSlots,
                       [&](uint32_t id) { return changedAt_[id] <= clock; });
  }

  /// edgeMesh, asked again only after a tensor of the edge changed: it reads
  /// the mesh name of every tensor, each in a value of its own elsewhere in
  /// memory, where the clocks are one array.
  const Mesh *meshOf(const Edge &edge, EdgeState &state) {
    if (!state.meshKnown || !unchangedSince(state, state.meshClock)) {
      state.mesh = edgeMesh(edge, module_);
      state.meshClock = clock_;
      state.meshKnown = true;
    }
    return state.mesh;
  }

  bool visit(Edge &edge, EdgeState &state, int stage) {
    if (settled(state, stage))
      return false;
    bool changed = update(edge, state, stage);
    // An edge that changed something is visited again: its new shardings
    // may let it do more (Shardy likewise revisits until nothing changes).
    state.settledDirections = changed ? -1 : state.directions[stage];
    state.settledClock = clock_;
    return changed;
  }

  bool update(Edge &edge, EdgeState &state, int stage) {
    const ShardingRule &rule = *edge.rule;
    bool anyDirection = false;
    for (size_t f = 0; f < rule.numFactors() && !anyDirection; ++f)
      anyDirection = edgeDirection(edge, static_cast<int>(f), stage) != Direction::None;
    if (!anyDirection)
      return false;
    const Mesh *mesh = meshOf(edge, state);
    if (!mesh)
      return false;
    // An edge visited with the same inputs before writes what it wrote then
    // (the origins recorder needs each visit's projection: not replayed).
    if (!origins_) {
      memo_.key(edge, stage, *mesh, changedAt_, clock_);
      if (const EdgeOutcome *known = memo_.find())
        return replay(edge, *known, *mesh);
    }

    // One EdgeVisit serves every visit: its vectors keep their memory.
    EdgeVisit &visit = visit_;
    visit.loc = edge.loc;
    visit.slots.clear();
    visit.mappings.clear();
    for (size_t i = 0; i < edge.operands.size(); ++i) {
      visit.slots.push_back(&edge.operands[i]);
      visit.mappings.push_back(&rule.operands[i]);
    }
    for (size_t i = 0; i < edge.results.size(); ++i) {
      visit.slots.push_back(&edge.results[i]);
      visit.mappings.push_back(&rule.results[i]);
    }

    visit.projection.numOperands = edge.operands.size();
    visit.projection.tensors.resize(visit.slots.size());
    for (size_t t = 0; t < visit.slots.size(); ++t) {
      const Storage &s = *visit.slots[t]->sharding;
      TensorProjection &tensor = visit.projection.tensors[t];
      if (!s || s->meshName == mesh->name || onEmptyMesh(*s)) {
        projectTensor(tensor, s ? &*s : nullptr, *visit.mappings[t], rule, *mesh, edge.forbidden);
      } else {
        projectTensor(tensor, nullptr, {}, rule, *mesh, {});
        tensor.present = false;
      }
      const std::vector<AxisRef> &blocked = visit.slots[t]->blocked;
      tensor.blocked.insert(tensor.blocked.end(), blocked.begin(), blocked.end());
      tensor.elements = visit.slots[t]->elements;
    }

    propagateFactors(
        visit.projection, rule, [&](int f) { return edgeDirection(edge, f, stage); },
        edge.elementwise, *mesh, visit.update);

    EdgeOutcome outcome;
    bool changed = false;
    for (size_t t = 0; t < visit.slots.size(); ++t)
      if (visit.update.changed[t])
        changed |= store(visit, t, rule, *mesh, outcome);
    if (!origins_)
      memo_.insert(std::move(outcome));
    return changed;
  }

  /// Applies a recorded outcome to `edge`'s tensors as store() applied it.
  bool replay(const Edge &edge, const EdgeOutcome &outcome, const Mesh &mesh) {
    const size_t numOperands = edge.operands.size();
    for (const EdgeOutcome::TensorChange &change : outcome.changes) {
      const Slot &slot = slotAt(edge, change.tensor);
      size_t rank = (change.tensor < numOperands ? edge.rule->operands[change.tensor]
                                                 : edge.rule->results[change.tensor - numOperands])
                        .size();
      Storage &s = *slot.sharding;
      Sharding next = startOfStore(s, rank, mesh);
      for (const auto &[d, axes] : change.dims)
        next.dims[d].axes = axes;
      s = std::move(next);
      changedAt_[slot.id] = ++clock_;
    }
    return !outcome.changes.empty();
  }

  /// What store() changes dims of: the tensor's sharding, moved to the
  /// edge's mesh (an empty-mesh sharding takes it, its closed dims closed),
  /// or, for a tensor without one, every dim open and empty.
  static Sharding startOfStore(const Storage &s, size_t rank, const Mesh &mesh) {
    Sharding next = s ? *s : Sharding::replicatedOn(mesh.name, rank);
    next.meshName = mesh.name;
    if (!s)
      for (DimSharding &dim : next.dims)
        dim.open = true;
    return next;
  }

  /// Writes the projected-back dims of `tensor` into its slot when they add
  /// axes, and what it wrote into `outcome`. Never removes an axis, never
  /// touches a closed dim.
  bool store(const EdgeVisit &visit, size_t t, const ShardingRule &rule, const Mesh &mesh,
             EdgeOutcome &outcome) {
    Storage &s = *visit.slots[t]->sharding;
    const TensorFactors &dims = *visit.mappings[t];
    std::vector<std::vector<AxisRef>> newDims =
        projectBack(visit.projection.tensors[t], dims, rule, mesh, s ? &s->dims : nullptr);
    Sharding next = startOfStore(s, dims.size(), mesh);
    EdgeOutcome::TensorChange change{static_cast<uint32_t>(t), {}};
    for (size_t d = 0; d < next.dims.size() && d < newDims.size(); ++d) {
      DimSharding &dim = next.dims[d];
      if (!dim.open || sameAxes(dim.axes, newDims[d], mesh) ||
          axisListPrefix(dim.axes, newDims[d], mesh) != PrefixStatus::StrictPrefix ||
          clashes(newDims[d], next, d, mesh))
        continue;
      dim.axes = newDims[d];
      change.dims.emplace_back(static_cast<uint32_t>(d), dim.axes);
    }
    bool changed = !change.dims.empty();
    if (changed) {
      outcome.changes.push_back(std::move(change));
      if (origins_)
        recorder_.recordPropagated(visit, t, next.dims, round_, mesh);
      s = std::move(next);
      changedAt_[visit.slots[t]->id] = ++clock_;
    }
    return changed;
  }

  /// Whether `sharding` names a mesh without axes or devices (`@empty`): it
  /// takes the mesh propagation brings (Shardy).
  bool onEmptyMesh(const Sharding &sharding) const {
    const Mesh *mesh = module_.findMesh(sharding.meshName);
    return mesh && mesh->isEmpty();
  }

  /// Whether `axes` on dim `d` would overlap (or could not coexist with) an
  /// axis of another dim of `sharding` or a replicated one. Each projection is consistent in
  /// itself, but a value used twice by one op (`einsum "ij,ji->ij" (%a, %a)`) is updated from two
  /// projections.
  static bool clashes(const std::vector<AxisRef> &axes, const Sharding &sharding, size_t d,
                      const Mesh &mesh) {
    auto hit = [&](const AxisRef &b) {
      for (const AxisRef &a : axes)
        if (overlaps(a, b, mesh) || !canCoexist(a, b, mesh))
          return true;
      return false;
    };
    for (size_t other = 0; other < sharding.dims.size(); ++other)
      if (other != d &&
          std::any_of(sharding.dims[other].axes.begin(), sharding.dims[other].axes.end(), hit))
        return true;
    return std::any_of(sharding.replicated.begin(), sharding.replicated.end(), hit);
  }

  Module &module_;
  ShardingOrigins *origins_;
  Graph graph_;
  std::vector<Storage *> storage_;
  std::vector<size_t> ranks_; // of storage_[i]'s tensor
  // Only kept for origins:
  std::map<const Storage *, const Value *> valueOf_;
  std::map<const Storage *, const ResultSpec *> resultOf_;
  std::vector<Deferred> deferred_;
  OriginRecorder recorder_;
  EdgeVisit visit_; // update()'s working memory
  EdgeMemo memo_;   // outcomes of earlier visits
  int64_t round_ = 0;
  uint64_t clock_ = 0;              // counts sharding changes
  std::vector<uint64_t> changedAt_; // by slot number: the clock of its last change
  std::vector<EdgeState> states_;   // of every edge, the functions' edge lists one after another
  std::vector<uint32_t> slotIds_;   // the slots' numbers, edge after edge (EdgeState::firstSlot)
};

} // namespace

bool propagateShardings(Module &module, DiagnosticEngine &diags, ShardingOrigins *origins) {
  // The pass assumes well-formed, typed, verified IR.
  if (diags.hasErrors())
    return false;
  Propagator(module, origins).run();
  return true;
}

bool propagateShardings(Module &module, DiagnosticEngine &diags) {
  return propagateShardings(module, diags, nullptr);
}

} // namespace shardc
