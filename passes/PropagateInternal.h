// Internals of propagate-shardings, shared by its files and the unit tests:
//
//   propagate_projection.cpp  axis arithmetic; tensor sharding -> factor
//                             shardings (splitting axes into sub-axes) and back
//                             (merging them)
//   propagate_factors.cpp     the per-factor decision for one op: compatible
//                             axes, legality per tensor, conflicts between
//                             factors (Shardy's aggressive strategy)
//   propagate_graph.cpp       the propagation edges of a function: ops with a
//                             rule, constraints, function results,
//                             manual_computation boundaries
//   propagate.cpp             the driver: user priorities, op priorities, the
//                             fixed point, closing
//   propagate_manual.cpp      the rule across a manual_computation boundary
//   propagate_origins.cpp     where each axis came from (opt-in)
#pragma once

#include "ir/IR.h"
#include "passes/ShardingOrigins.h"
#include "passes/ShardingRules.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace shardc::propagation {

// ---- axis arithmetic on one mesh --------------------------------------------
//
// An axis or sub-axis is the range [pre, pre*size) of its mesh axis's
// "pre-size product" coordinate; a full axis "x"=4 is (1)4.

/// Size of the full mesh axis `name` (1 when the mesh lacks it).
int64_t fullAxisSize(const std::string &name, const Mesh &mesh);
/// The pre-size of `a`: 1 for a full axis.
int64_t preSizeOf(const AxisRef &a);
/// The number of devices `a` splits into.
int64_t sizeOf(const AxisRef &a, const Mesh &mesh);
/// Product of the sizes of `axes`.
int64_t productOf(const std::vector<AxisRef> &axes, const Mesh &mesh);
/// `"x":(pre)size`, or the full axis `"x"` when it covers the whole axis.
AxisRef makeAxis(const std::string &name, int64_t pre, int64_t size, const Mesh &mesh);
/// Same axis or sub-axis (a full axis equals its (1)n form).
bool sameAxis(const AxisRef &a, const AxisRef &b, const Mesh &mesh);
bool sameAxes(const std::vector<AxisRef> &a, const std::vector<AxisRef> &b, const Mesh &mesh);
/// `a` is a prefix of `b` (or equal): same name and pre-size, size(a) divides size(b).
bool isPrefixOf(const AxisRef &a, const AxisRef &b, const Mesh &mesh);
/// `b` lies inside `a`.
bool contains(const AxisRef &a, const AxisRef &b, const Mesh &mesh);
/// The ranges of `a` and `b` intersect.
bool overlaps(const AxisRef &a, const AxisRef &b, const Mesh &mesh);
/// The largest prefix of `a` that does not overlap `b`; nullopt when none.
std::optional<AxisRef> prefixWithoutOverlap(const AxisRef &a, const AxisRef &b, const Mesh &mesh);
/// Appends `a`, merging it into the last axis when they are consecutive
/// sub-axes ("x":(1)2 then "x":(2)2 gives "x" on a mesh with "x"=4).
void appendMerging(std::vector<AxisRef> &axes, const AxisRef &a, const Mesh &mesh);

/// How a list of axes relates to another (Shardy's isAxisListPrefixOf).
enum class PrefixStatus { Equal, StrictPrefix, NotAPrefix };
PrefixStatus axisListPrefix(const std::vector<AxisRef> &first, const std::vector<AxisRef> &second,
                            const Mesh &mesh);

// ---- projection ---------------------------------------------------------------

/// One factor of one tensor.
struct FactorSharding {
  bool present = false;          // the tensor has this factor
  std::vector<AxisRef> axes;     // major to minor
  std::vector<AxisRef> overflow; // axes left over when a non-minor-most factor
                                 // and the next axis are coprime
  bool closed = false;           // its dim is closed (or follows an overflow)
  bool minorMost = false;        // last factor of its dim
  std::vector<int> majors;       // the factors before it in its dim
};

/// One tensor of an op, projected onto the op's factors.
struct TensorProjection {
  /// False: the tensor takes no part (another mesh, a maximal mesh).
  bool present = true;
  std::vector<FactorSharding> factors; // by factor index
  /// Axes this tensor may not take: explicitly replicated, already on a dim
  /// without factors, or manual in an enclosing manual_computation.
  std::vector<AxisRef> blocked;
  int64_t elements = 1; // conflicts prefer the larger tensor
};

/// All tensors of one op: operands first, then results.
struct Projection {
  std::vector<TensorProjection> tensors;
  size_t numOperands = 0;
};

/// Projects `sharding` (null: no sharding yet, every dim open and empty) of a
/// tensor whose dims map to `dims` onto the rule's factors. Step by step:
/// the axes of each dim go to its factors major to minor; a factor that is not
/// the dim's minor-most takes axes until it is full, splitting an axis by gcd
/// where it is larger ("x"=4 over factors 2,2 gives "x":(1)2 and "x":(2)2);
/// the minor-most factor takes whatever is left (non-divisible included).
TensorProjection projectTensor(const Sharding *sharding, const TensorFactors &dims,
                               const ShardingRule &rule, const Mesh &mesh,
                               const std::vector<AxisRef> &forbidden);
/// The same, into `out` (reusing its vectors' memory).
void projectTensor(TensorProjection &out, const Sharding *sharding, const TensorFactors &dims,
                   const ShardingRule &rule, const Mesh &mesh,
                   const std::vector<AxisRef> &forbidden);

/// The dims of `tensor` back as axes lists (merging consecutive sub-axes). A
/// dim without factors keeps `oldDims[d]` (when given). Stops in a dim after a
/// factor with overflow axes or one that is not full (a later factor would
/// need a strided view).
std::vector<std::vector<AxisRef>> projectBack(const TensorProjection &tensor,
                                              const TensorFactors &dims, const ShardingRule &rule,
                                              const Mesh &mesh,
                                              const std::vector<DimSharding> *oldDims);

/// Whether `tensor` may add axes to factor `f` now: present, open, no
/// overflow, and every factor before it in its dim already full.
bool canGrow(const TensorProjection &tensor, int f, const ShardingRule &rule, const Mesh &mesh);

// ---- the per-factor decision ---------------------------------------------------

enum class Direction { None, Forward, Backward, Both };

/// What one op's factor propagation did.
struct FactorUpdate {
  std::vector<bool> changed; // per tensor (operands then results)
  std::vector<int> source;   // per factor: the tensor its axes came from, -1 if none
  std::vector<std::vector<AxisRef>> compatible; // per factor, before per-tensor legality
  /// Working memory of propagateFactors, kept between calls.
  std::vector<int64_t> sourceSize;
  std::vector<int> order;
  std::vector<AxisRef> candidate;
};

/// Decides, per factor, the axes every tensor gains and writes them into
/// `projection` (only ever appending). `direction(f)` says which tensors may
/// lead factor f; `elementwise` keeps axes from moving sideways between
/// operands past what the results have (Shardy's rule for elementwise ops).
FactorUpdate propagateFactors(Projection &projection, const ShardingRule &rule,
                              const std::function<Direction(int)> &direction, bool elementwise,
                              const Mesh &mesh);
/// The same, into `out` (reusing its vectors' memory).
void propagateFactors(Projection &projection, const ShardingRule &rule,
                      const std::function<Direction(int)> &direction, bool elementwise,
                      const Mesh &mesh, FactorUpdate &out);

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
  bool broadcast = false;     // pass-through factors go backward only (op priority 1)
  bool elementwise = false;
  Loc loc;
  /// The driver's bookkeeping: a visit with op-priority directions
  /// `settledDirections` (edgeDirections) changed nothing at clock
  /// `settledClock`; until one of its tensors changes, a visit with the same
  /// directions would change nothing either, whatever the round or stage.
  int settledDirections = -1;
  uint64_t settledClock = 0;
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
  /// (without the manual axes) before propagation: their axes count as
  /// propagated, not written.
  std::vector<const std::optional<Sharding> *> copiedFromInSharding;
};

/// Builds the edges of `module`. Also gives each sharding_constraint and
/// reshard result the constraint's sharding when it has none of its own, and
/// each manual_computation body argument without a sharding the closed dims
/// of its in_sharding (its free axes): the body sees exactly what the
/// in_sharding gives, as in Shardy where they are one sharding.
Graph buildGraph(Module &module);

/// Which tensors of `edge` may lead factor `f` in op-priority stage `stage`
/// (Shardy's op priorities): stage 0 only pass-through ops, stage 1 also the
/// pass-through factors of every op (a broadcast's backward only), stage 2
/// everything. Need-replication and permutation factors never propagate.
Direction edgeDirection(const Edge &edge, int f, int stage);

/// Which set of directions edgeDirection gives `edge` in `stage`: equal
/// numbers mean equal directions for every factor (a pass-through op's are
/// the same in every stage).
int edgeDirections(const Edge &edge, int stage);

/// The mesh most of the edge's sharded tensors name, the first on a tie;
/// maximal and empty meshes never count. Null when no tensor is sharded on a
/// mesh with axes.
const Mesh *edgeMesh(const Edge &edge, const Module &module);

/// The identity rule of a tensor type: one pass-through factor per dim
/// (size-1 dims get none).
ShardingRule identityRule(const TensorType &type, size_t numOperands, size_t numResults);

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
/// open and empty.
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

using Storage = std::optional<Sharding>;

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

} // namespace shardc::propagation
