// Internals of the partitioner, private to passes/partition/: the per-device
// body being built, the local value of each global value, and the helpers
// that emit ops and collectives.
#pragma once

#include "passes/partition/FactorAssignment.h"
#include "passes/partition/Partition.h"
#include "passes/partition/PartitionReport.h"
#include "passes/reshard/ReshardPlanner.h"
#include "passes/rules/ShardingRules.h"

#include "ir/AxisAlgebra.h"
#include "ir/IR.h"
#include "ir/ShardingKey.h"

#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace shardc::partition {

/// A program the partitioner cannot turn into per-device code: reported as
/// the internal error `<op> - cannot partition: <why>` at `loc` (exit 3):
/// every program the checks accept must partition.
struct Unsupported : std::runtime_error {
  Unsupported(Loc where, const std::string &why) : std::runtime_error(why), loc(where) {}
  Loc loc;
};

/// A program the checks accept but partitioning does not support: a user
/// error (exit 1) at `loc`, with a note at `noteLoc`.
struct NotSupported : std::runtime_error {
  NotSupported(Loc where, const std::string &why, Loc noteAt, std::string noteText)
      : std::runtime_error(why), loc(where), noteLoc(noteAt), note(std::move(noteText)) {}
  Loc loc;
  Loc noteLoc;
  std::string note;
};

/// What a global value is on each device: a local value, how it is laid
/// out, and, for a partial result, the axes it still has to be reduced over.
struct Local {
  Value *value = nullptr;
  Sharding sharding;
  std::vector<AxisRef> partial;
  std::string partialKind = "sum";
};

/// Fresh value names for one function (the original names where free).
class NameTable {
public:
  void reserve(const std::string &name) { take(name); }
  std::string fresh(const std::string &hint);

private:
  // Every name taken, and each numbering base's last number, in one
  // open-addressing table (linear probing, at most half full): a lookup is
  // a hash and about one probe. An ordered set of the names and a map of
  // the counters took about 3,500 instructions per fresh name at 100,000
  // ops (18 levels of string comparisons, twice); std::unordered_set was
  // slower still (a node allocation per name, and its rehashes).
  struct Slot {
    size_t hash = 0;
    uint32_t name = 0;  ///< index + 1 into names_; 0: empty
    bool taken = false; ///< (false: only a base, with its counter)
    int counter = 0;    ///< the last number given to `name`_N
  };
  /// The index of `name`'s slot (of `hash`), or of the empty slot where it
  /// would go; the table is not empty.
  size_t probe(std::string_view name, size_t hash) const;
  /// The slot of `name`, added (not taken) when missing.
  Slot &slot(std::string_view name);
  /// Takes `name`; false when it was taken already.
  bool take(std::string_view name);
  bool contains(std::string_view name) const;
  void grow();

  std::vector<std::string> names_;
  std::vector<Slot> slots_;
};

/// How often a `while` is taken to repeat when ways to compute an op are
/// weighed: its trip count is unknown, and this makes bytes per iteration
/// decide before bytes moved once in front of it.
constexpr double kWhileRuns = 1e6;

/// A way to compute an op: the axes of each factor, and the layouts they
/// give its operands and its result (partial over the axes of its sharded
/// reduction factors).
struct Assignment {
  std::vector<std::vector<AxisRef>> factorAxes;
  std::vector<Sharding> operands;
  Local result;
};

/// What partitioning one function computes once and looks up after: a
/// program repeats its layers, and with them the same questions.
struct PartitionCaches {
  /// Reshard plans, by request (planReshard is a pure function; the search
  /// is the costly part of partitioning).
  std::unordered_map<KeyWords, ReshardPlan, KeyWordsHash> plans;
  /// The ops' sharding rules, each distinct one made once.
  ShardingRuleCache rules;
  /// Assignments (assignFactors and the layouts it gives), by the op's rule
  /// and kind, the mesh, which tensor chooses first, and the operands' and
  /// results' shardings (cachedAssignment in partition_ops.cpp).
  std::unordered_map<KeyWords, Assignment, KeyWordsHash> assignments;
};

/// The body of one per-device manual_computation being built.
struct Body {
  const Module &module;
  const Mesh &mesh;
  Block &block;
  NameTable &names;
  CollectiveReport *report;
  /// Ordered: the values of a body are allocated in program order, so a
  /// tree keyed by their addresses is walked mostly along its recent, cached
  /// part (hashed, partitioning 100,000 ops was no faster).
  std::map<const Value *, Local> locals;
  /// The function's (shared by its nested bodies).
  PartitionCaches *caches = nullptr;
  /// Whether a reshard already emitted in this body (or one around it)
  /// serves a later request for the same local value and layout, and
  /// whether ops are computed their cheapest way.
  PartitionOptions options{false, false};
  /// Those reshards, by local value and request; a nested body starts from
  /// a copy (what it adds is not visible outside it).
  std::unordered_map<KeyWords, Local, KeyWordsHash> reshards;
  /// How often this body's ops run per run of the manual_computation: a
  /// `for` multiplies its trip count, a `while` kWhileRuns. It weighs the
  /// bytes of the ways to compute an op (chooseAssignment).
  double runs = 1;
  /// In a loop's body: the values visible before the loop. A reshard of one
  /// of them is hoisted in front of the loop, where it runs `hoistedRuns`
  /// times.
  const std::map<const Value *, Local> *beforeLoop = nullptr;
  double hoistedRuns = 1;

  /// Appends `kind` with these operands and attributes and one result of
  /// `type`, named after `hint`.
  Value *emit(OpKind kind, std::vector<Value *> operands, std::vector<NamedAttribute> attrs,
              const TensorType &type, Loc loc, const std::string &hint);
  const Local &local(const Value *global, Loc loc) const;
};

// ---- attributes -----------------------------------------------------------------
NamedAttribute intAttr(const std::string &name, int64_t value);
NamedAttribute intListAttr(const std::string &name, const std::vector<int64_t> &values);
NamedAttribute axesAttr(const std::string &name, const std::vector<AxisRef> &axes);
NamedAttribute stringAttr(const std::string &name, const std::string &value);
/// `value = dense<v>` for a splat of `type`'s dtype.
NamedAttribute splatAttr(double value, DType dtype);
/// `value = dense<v>` holding `value` exactly (an i64 beyond a double's
/// 53 bits included).
NamedAttribute splatAttr(const Scalar &value);

/// A rank-0 constant of `dtype`.
Value *emitScalar(Body &body, double value, DType dtype, Loc loc, const std::string &hint);

// ---- resharding (partition_reshard.cpp) ------------------------------------------
/// Moves `value` to `target` (on body.mesh) with the planner's collectives,
/// each recorded in the report with `cause` and `reason`. Returns the local
/// value laid out as `target` (not partial).
Local reshardLocal(Body &body, const Local &value, const TensorType &globalType,
                   const Sharding &target, Loc cause, const std::string &reason);
/// The bytes each device would send to move `value` to `target` (the
/// plan's): 0 when it is there, or a copy there is already at hand.
int64_t reshardBytes(Body &body, const Local &value, const TensorType &globalType,
                     const Sharding &target, Loc cause);

// ---- padding masks (partition_masks.cpp) -----------------------------------------
/// Replaces the padding of dim `dim` of `value` (laid out as `sharding`,
/// global size `dimSize`) by `identity`, so that a reduction or contraction
/// over it reads only real elements.
Value *maskPadding(Body &body, Value *value, const Sharding &sharding, size_t dim, int64_t dimSize,
                   const Scalar &identity, Loc loc);
/// The identity of a reduction over `dtype`: 0 for sums, the lowest or
/// highest value for max and min.
Scalar reductionIdentity(const std::string &kind, DType dtype);

// ---- ops (partition_ops.cpp) -------------------------------------------------------
/// Emits the per-device form of `op` (not manual_computation, not a
/// cross-mesh reshard) and records its results in body.locals.
void partitionOp(Body &body, const Op &op);

/// for, while and if, partitioned in place (partition_control.cpp).
void partitionControlFlow(Body &body, const Op &op);

/// A user manual_computation inside a body over all axes (partition_manual.cpp).
void partitionManual(Body &body, const Op &op);

// ---- factor assignment (partition_assignment.cpp) ----------------------------------
// assignFactors is declared in FactorAssignment.h (auto-sharding prices with it).

} // namespace shardc::partition
