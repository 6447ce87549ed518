// Internals of propagate-shardings, private to passes/propagate/ (the
// projection and the per-factor decision, which the unit tests check, are
// public in FactorPropagation.h):
//
//   propagate_import.cpp      Shardy's import step: closed constraints
//                             copied onto their operands
//   propagate_graph.cpp       the propagation edges of a function: ops with a
//                             rule, constraints, function results,
//                             manual_computation boundaries
//   propagate.cpp             the driver: user priorities, op priorities, the
//                             fixed point, closing
//   propagate_manual.cpp      the rule across a manual_computation boundary
//   propagate_origins.cpp     where each axis came from (opt-in)
//   propagate_memo.cpp        outcomes of edge visits, replayed when a visit
//                             repeats an earlier one
#pragma once

#include "ir/AxisAlgebra.h"
#include "ir/IR.h"
#include "ir/ShardingKey.h"
#include "passes/propagate/FactorPropagation.h"
#include "passes/propagate/ShardingOrigins.h"
#include "passes/rules/ShardingRules.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace shardc::propagation {

// ---- Shardy's import step (propagate_import.cpp) ----------------------------------

/// Copies the sharding of each fully closed sharding_constraint onto its
/// operand when the constraint decides it (Shardy's
/// sdy-apply-sharding-constraints: the operand has no sharding, is a
/// function parameter or an ordinary op's result, and no other
/// sharding_constraint or manual_computation asks it for a different
/// sharding). Returns the shardings it set.
std::vector<const std::optional<Sharding> *> applyShardingConstraints(Module &module);

// ---- the graph of one function ----------------------------------------------------

/// One tensor of an edge: where its sharding lives.
struct Slot {
  std::optional<Sharding> *sharding = nullptr;
  int64_t elements = 1; // of its tensor: conflicts prefer the larger
  /// The driver's number for the place (several slots may share one).
  uint32_t id = 0;
  /// Axes this tensor may not take in this edge, besides the edge's
  /// `forbidden` (a manual_computation in/out sharding: the manual axes it
  /// does not already have).
  std::vector<AxisRef> blocked;
};

/// A propagation step: an op with a factor rule, or an identity between two
/// places that must agree (a sharding_constraint, a returned value and the
/// function's result, a manual_computation operand and its in_sharding).
struct Edge {
  const Op *op = nullptr; // null for function results
  /// Owned by Graph::rules; edges of ops with the same kind and shapes share
  /// one (a long program has few distinct rules).
  const ShardingRule *rule = nullptr;
  std::vector<Slot> operands, results;
  /// Manual axes of the enclosing manual_computations: no tensor of this
  /// edge may take them.
  std::vector<AxisRef> forbidden;
  bool passThroughOp = false; // op priority 0 (elementwise, reshape, transpose, identities)
  bool broadcast = false;     // factors go backward only until the last stage
  bool elementwise = false;
  /// An operand (not a scalar) is used more than once: a pass-through op
  /// waits for stage 1 (Shardy's single-use pass-through priority).
  bool multiUseOperand = false;
  Loc loc;
};

/// A manual_computation in/out sharding: propagation works on a copy (in
/// Graph::attributeShardings) and writes it back into the op at the end.
struct AttributeSharding {
  Sharding *written;
  std::optional<Sharding> *working;
};

/// The edges of every function and the snippet, in program order, and the
/// storage of the shardings they refer to that are no value's.
struct Graph {
  std::vector<std::vector<Edge>> functions; // one edge list per function
  std::deque<std::optional<Sharding>> attributeStorage;
  std::vector<AttributeSharding> attributeShardings;
  std::deque<ShardingRule> rules;
  /// Body arguments whose closed dims were copied from their in_sharding
  /// (without the manual axes) before propagation, and manual_computation
  /// results that start as their out_sharding: their axes count as
  /// propagated, not written.
  std::vector<const std::optional<Sharding> *> copiedFromInSharding;
  /// The manual axes of each manual_computation in/out sharding that
  /// propagation works on (the attribute's working copy, or the result that
  /// starts as its out_sharding): a dim held back for its user priority
  /// keeps them, as Shardy defers only the free axes (its data-flow edge).
  std::unordered_map<const std::optional<Sharding> *, std::vector<AxisRef>> manualAxesOf;
};

/// Builds the edges of `module`. Also gives each sharding_constraint and
/// reshard result the constraint's sharding when it has none of its own, and
/// each manual_computation body argument without a sharding the closed dims
/// of its in_sharding (its free axes): the body sees exactly what the
/// in_sharding gives, as in Shardy where they are one sharding.
Graph buildGraph(Module &module);

/// Shardy's op-priority stages, run in order in every user-priority round.
constexpr int kStages = 5;

/// Which tensors of `edge` may lead factor `f` in op-priority stage `stage`
/// (Shardy's op priorities): stage 0 only pass-through ops none of whose
/// operands has another use, stage 1 every pass-through op, stage 2 also the
/// pass-through factors of every op (a broadcast's backward only), stage 3
/// every factor of every op but a broadcast's only backward, stage 4
/// everything (permutation and need-replication factors, Shardy's default,
/// included).
Direction edgeDirection(const Edge &edge, int f, int stage);

/// Which set of directions edgeDirection gives `edge` in `stage`: equal
/// numbers mean equal directions for every factor (a pass-through op's are
/// the same in every stage).
int edgeDirections(const Edge &edge, int stage);

/// The mesh most of the edge's sharded tensors name, the first on a tie;
/// empty meshes never count. Null when no tensor is sharded on a mesh with
/// axes, or when one is on a maximal mesh (nothing propagates there).
const Mesh *edgeMesh(const Edge &edge, const Module &module);

/// Holds dim `d` of `sharding` back for a later user-priority round: closed,
/// its axes moved to the replicated ones so that nothing else takes them
/// there. The leading `manualAxes` (when given: a manual_computation in/out
/// sharding) stay, as Shardy's priority belongs to the data-flow edge, which
/// holds only the free axes.
void holdBack(Sharding &sharding, size_t d, const std::vector<AxisRef> *manualAxes);

// ---- repeated visits (propagate_memo.cpp) -----------------------------------------

/// Tensor `t` of `edge`: its operands, then its results.
inline const Slot &slotAt(const Edge &edge, size_t t) {
  return t < edge.operands.size() ? edge.operands[t] : edge.results[t - edge.operands.size()];
}

using Storage = std::optional<Sharding>;

/// What one visit of an edge wrote: for each tensor that gained axes (in
/// visiting order), the dims that did and their new axes.
struct EdgeOutcome {
  struct TensorChange {
    uint32_t tensor; // operands then results
    std::vector<std::pair<uint32_t, std::vector<AxisRef>>> dims;
  };
  std::vector<TensorChange> changes;
};

/// Outcomes of edge visits, keyed by everything a visit reads: the rule (edges
/// of ops of one kind and shapes share one), the stage's directions, the mesh,
/// the forbidden and blocked axes, each tensor's element count and sharding
/// (axes with their source locations, so that a replayed axis points where a
/// computed one would), and which tensors are one value. A program that
/// repeats its layers visits the same edge many times over; each visit after
/// the first replays the outcome. Shardings enter the key as numbers, one per
/// distinct sharding, each tensor's looked up again only after it changed.
class EdgeMemo {
public:
  /// The key of visiting `edge` on `mesh` in `stage`, kept for find and
  /// insert. `changedAt` and `clock` are the driver's change clock (by slot
  /// number, the clock of its last change; now).
  void key(const Edge &edge, int stage, const Mesh &mesh, const std::vector<uint64_t> &changedAt,
           uint64_t clock);
  /// The outcome of an earlier visit with the key, or null.
  const EdgeOutcome *find() const;
  /// Records the outcome of the visit with the key (up to a bound: a program
  /// with no repetition would only fill memory).
  void insert(EdgeOutcome outcome);

private:
  /// The number of `slot`'s sharding (0: none).
  uint64_t shardingNumber(const Slot &slot, const std::vector<uint64_t> &changedAt, uint64_t clock);

  KeyWords key_, scratch_;
  std::unordered_map<KeyWords, EdgeOutcome, KeyWordsHash> outcomes_;
  std::unordered_map<KeyWords, uint64_t, KeyWordsHash> shardingNumbers_;
  /// By slot number: the clock when its number was taken, and the number.
  std::vector<std::pair<uint64_t, uint64_t>> numberOfSlot_;
};

// ---- manual_computation boundaries (propagate_manual.cpp) -------------------------

/// The rule between the global view `global` of a manual_computation in/out
/// sharding `sharding` and the body's local tensor `local`: per dim, a
/// need-replication factor for the manual axes (when any) then a
/// pass-through factor shared with the local dim. The global tensor is the
/// operand when `globalFirst`, else the result. Nullopt when `local` is not
/// the local type of `sharding`.
std::optional<ShardingRule> manualBoundaryRule(const TensorType &global, const TensorType &local,
                                               const Sharding &sharding,
                                               const std::vector<AxisRef> &manualAxes,
                                               const Mesh &mesh, bool globalFirst);

/// The manual axes `sharding` does not name: propagation may not add them
/// (they would change the body's local types).
std::vector<AxisRef> absentManualAxes(const Sharding &sharding,
                                      const std::vector<AxisRef> &manualAxes);

/// What a body argument starts with: its in_sharding's closed dims without
/// the manual axes (closed, as they cannot grow there either), open dims
/// open and empty; each dim keeps its priority (Shardy's data-flow edge of
/// the argument carries the in_sharding's priorities).
Sharding bodyView(const Sharding &sharding, const std::vector<AxisRef> &manualAxes);

// ---- origins (propagate_origins.cpp) ----------------------------------------------

/// One visit of an edge: its tensors (operands, then results), their factor
/// mappings, the projection and what propagateFactors decided.
struct EdgeVisit {
  std::vector<const Slot *> slots;
  std::vector<const TensorFactors *> mappings;
  Projection projection;
  FactorUpdate update;
  Loc loc;
};

/// Where each axis of each sharding came from, while propagation runs, keyed
/// by where the sharding lives. Only used when a caller asks for origins.
class OriginRecorder {
public:
  /// Records the axes written on `sharding`, with their dims' priorities
  /// (before the driver holds any back).
  void recordWritten(const Storage *sharding);
  /// Marks every axis recorded for `sharding` as propagated (a body
  /// argument's axes copied from its in_sharding keep that annotation's Loc).
  void markPropagated(const Storage *sharding);
  /// Marks every axis recorded for `sharding` as copied from the
  /// sharding_constraint that uses it (applyShardingConstraints): the
  /// constraint's annotation is its origin.
  void markCopiedFromConstraint(const Storage *sharding);
  /// Records the axes of `dims`, the new dims of tensor `t` of `visit`, that
  /// are new to it: each came through the factor of its dim that holds it,
  /// and has the origin it has on that factor's source tensor.
  void recordPropagated(const EdgeVisit &visit, size_t t, const std::vector<DimSharding> &dims,
                        int64_t round, const Mesh &mesh);
  /// Hands the table over, keyed by value and function result.
  void exportTo(ShardingOrigins &out, const std::map<const Storage *, const Value *> &values,
                const std::map<const Storage *, const ResultSpec *> &results) const;

private:
  AxisOrigin originOf(const EdgeVisit &visit, size_t t, size_t d, const AxisRef &axis,
                      int64_t round, const Mesh &mesh) const;

  std::map<const Storage *, std::vector<DimOrigins>> table_;
};

/// Step 5, Shardy's export (propagate_close.cpp): closes every sharding
/// propagation worked on (`storage`, each of a tensor of rank `ranks[i]`)
/// and the attribute shardings of `graph`, and gives a value no sharding
/// reached its replicated sharding when the module has one mesh with axes
/// (with several, when its edges' sharded tensors are all on one mesh).
void closeShardings(Module &module, const std::vector<Storage *> &storage,
                    const std::vector<size_t> &ranks, const Graph &graph);

} // namespace shardc::propagation
