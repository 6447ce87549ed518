// Factor-based sharding rules, one per op (OpenXLA Shardy's OpShardingRule),
// read by sharding propagation and by the partitioner.
//
// A rule is an einsum-like map from every operand and result dimension to
// factors. Propagation projects each tensor's dim shardings onto factors,
// decides per factor which axes shard it, and projects back. Example:
//
//   matmul tensor<8x16>, tensor<16x32> -> tensor<8x32>
//   factors: i=8 (pass-through), j=32 (pass-through), k=16 (reduction)
//   operand 0: [[i], [k]]   operand 1: [[k], [j]]   result: [[i], [j]]
//   str():     ([i, k], [k, j])->([i, j]) {i=8, j=32, k=16} reduction={k}
//
//   reshape tensor<8> -> tensor<2x4>
//   factors: i=2, j=4 (pass-through)
//   operand 0: [[i, j]]  (one dim over two factors, major to minor)
//   result:    [[i], [j]]
//   str():     ([ij])->([i, j]) {i=2, j=4}
#pragma once

#include "ir/IR.h"
#include "ir/ShardingKey.h"

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace shardc {

enum class FactorKind {
  /// The factor's index is the same in every tensor that has it: sharding it
  /// the same way everywhere needs no communication (batch and free dims,
  /// elementwise dims).
  PassThrough,
  /// A dimension summed (or maxed, ...) away: sharding it leaves a partial
  /// result that needs a reduction across the axes (matmul's k, reduced dims).
  /// Never mapped on a result.
  Reduction,
  /// A dimension the op can only compute unsharded: the concatenated dim of
  /// a concat of values other than slices (Shardy's registry), the dims of a
  /// reshape without elements. The partitioner gathers it. As in Shardy, the
  /// kind does not stop propagation: shardings move through such a factor,
  /// after the pass-through ones (op-priority stage 3).
  NeedReplication,
  /// A dimension whose elements move between positions: concat's dim, the
  /// sliced dims of slice, the padded dims of pad. Sharding it is legal, but
  /// the partitioner must move data (halo exchange, collective_permute or a
  /// gather) to compute the op. The factor is mapped on every operand and the
  /// result although their dim sizes differ (see getShardingRule for its
  /// size). Shardy's default mode propagates through such factors like
  /// PassThrough; its conservative mode does not. Propagation chooses.
  Permutation,
};

/// Shardy's spelling: "pass_through", "reduction", "need_replication",
/// "permutation".
const char *factorKindName(FactorKind kind);

/// The factors of one tensor dimension, major to minor. Empty when the dim
/// maps to no factor: a size-1 dim that broadcasts, a reduced dim kept with
/// keep_dims, a size-1 dim of a reshape. Empty dims always have size 1.
using DimFactors = std::vector<int>;
/// The factors of every dimension of one tensor, one entry per dim.
using TensorFactors = std::vector<DimFactors>;

struct ShardingRule {
  std::vector<int64_t> factorSizes;
  std::vector<FactorKind> factorKinds;
  std::vector<TensorFactors> operands; // one per op operand
  std::vector<TensorFactors> results;  // one per op result

  size_t numFactors() const { return factorSizes.size(); }
  /// Adds a factor and returns its index.
  int addFactor(int64_t size, FactorKind kind);
  /// The name str() gives factor `index`: i, j, ..., z, then z_1, z_2, ...
  static std::string factorName(int index);
  /// Shardy-style text, e.g. `([i, k], [k, j])->([i, j]) {i=8, j=32, k=16}
  /// reduction={k}`, factors named in order of creation. A dim over several
  /// factors prints as `ij`, a dim without factors as `1`, a rank-0 tensor
  /// as `[]`; need_replication={...} and permutation={...} follow reduction
  /// when non-empty. Used by tests and --explain.
  std::string str() const;
};

/// The rule of `op`, from its operand and result types (after infer-types).
/// Factors are created in the order below, which fixes their names in str():
///
///   unary, convert, sharding_constraint, reshard: one pass-through factor
///     per dim. `([i, j])->([i, j])`
///   binary ops and select: numpy broadcasting, operands aligned from the
///     right; one factor per result dim. An operand dim of size 1 under a
///     larger result dim maps to no factor; an operand with fewer dims has
///     fewer entries. add 4x8, 1x8: `([i, j], [1, j])->([i, j])`
///   matmul (rank >= 2, numpy batching): batch factors (absent on an operand
///     whose batch dim is 1 or missing), then m, n, and k (reduction).
///     2x8x16, 16x32: `([i, j, l], [l, k])->([i, j, k]) ... reduction={l}`
///   einsum: one factor per label, the output's labels first, then the
///     summed labels (reduction) in order of first appearance.
///   reduce_*: one factor per operand dim in order; a reduced dim is a
///     reduction factor on the operand only (with keep_dims the result's
///     size-1 dim maps to no factor).
///   transpose: one factor per result dim, mapped on operand dim perm[d].
///   broadcast: one factor per result dim; operand dim i maps to the factor
///     of result dim dims[i] when their sizes are equal, else (a size-1 dim
///     that broadcasts) to none.
///   reshape: reshapeRule.
///   concat, slice, pad: one pass-through factor per dim that keeps its
///     size; a dim that changes (a slice's or pad's dim whose size changes,
///     a slice starting past 0, a pad with low > 0) is one Permutation
///     factor mapped on every operand and the result, as in Shardy's default
///     mode. Concat's dim is one factor too: Permutation when every operand
///     is a slice, or all are one tensor, some sliced; NeedReplication
///     otherwise (Shardy's registry). Its size is Shardy's: the result dim's
///     for concat, the operand dim's for slice and pad. These are the only
///     dims whose size may differ from their factors' product.
///   constant, iota, random_uniform, random_normal: one pass-through factor
///     per result dim (no operands).
///   all_reduce, collective_permute: pointwise. all_gather, reduce_scatter,
///     all_slice, all_to_all (Shardy's registry): the other dims pass
///     through; the dim they change (all_to_all: its split dim, then its
///     concat dim) has a need-replication factor of the operand's size on
///     the operand and one of the result's size on the result, so nothing
///     crosses it. 2x4 all_to_all split 1, concat 0: `([k, i])->([l, j])
///     {i=4, j=2, k=2, l=4} need_replication={i, j, k, l}`. They occur in
///     manual_computation bodies (and per-device code).
///
/// nullopt for manual_computation (propagation looks into its body) and
/// axis_index (no operand), for an op with an unknown or missing operand
/// or result type, and for attributes or shapes that infer-types would have
/// rejected. Every rule satisfies checkShardingRule.
std::optional<ShardingRule> getShardingRule(const Op &op);

/// What an op's rule depends on, for the ops whose rule depends on nothing
/// else: the kind, the operand and result shapes and, for transpose, the
/// permutation (elementwise, creation, matmul, reshape, transpose), appended
/// to `key` as words: the kind, then each shape and the permutation as its
/// length and its values. False, with nothing appended, for the others (a
/// reduction's dims, a slice's bounds, ...).
bool appendShardingRuleKey(KeyWords &key, const Op &op);

/// getShardingRule, computed once per appendShardingRuleKey: a long program
/// repeats a few distinct ops (the 10,000-op generated program has a
/// handful of rules), and making a rule costs more than finding it.
class ShardingRuleCache {
public:
  /// `op`'s rule, or null when it has none; valid while the cache lives.
  const ShardingRule *get(const Op &op);

private:
  std::deque<ShardingRule> rules_;
  std::unordered_map<KeyWords, const ShardingRule *, KeyWordsHash> byKey_;
  KeyWords scratch_; // the key of the op asked about
};

/// The identity rule of a tensor type: one pass-through factor per dim
/// (size-1 dims get none).
ShardingRule identityRule(const TensorType &type, size_t numOperands, size_t numResults);

/// its factors' axes, major to minor.
Sharding shardingFromFactors(const std::string &meshName, const TensorFactors &factors,
                             const std::vector<std::vector<AxisRef>> &factorAxes, const Mesh &mesh);

/// Reshape factorization: splits the two shapes into factors by gcd so that
/// each dim of either side is a contiguous run of factors, major to minor,
/// and a factor mapped on both sides covers the same elements in both (8 ->
/// 2x4: `([ij])->([i, j])`; 4x6 -> 8x3: `([i, jk])->([ij, k])`). Where the
/// shapes interleave incompatibly (3x2 -> 2x3), factors exist on one side
/// only: `([i, l])->([j, k]) {i=3, j=2, k=3, l=2}`. Size-1 dims map to no
/// factor. One operand (`from`) and one result (`to`); nullopt when the
/// element counts differ, a dim is negative, or there are no elements
/// (Shardy has no rule for size-0 reshapes either).
std::optional<ShardingRule> reshapeRule(const std::vector<int64_t> &from,
                                        const std::vector<int64_t> &to);

/// Checks the invariants every rule of getShardingRule satisfies, against
/// the operand and result shapes: one TensorFactors per tensor and one
/// DimFactors per dim; known factor indices; no factor twice in one tensor;
/// for each dim the product of its factors' sizes equals the dim size (1 for
/// an empty list), except a dim mapped to a single Permutation or
/// NeedReplication factor; a
/// Permutation factor alone in its dim; no Reduction factor on a result;
/// every factor used by some tensor. Returns the first violation, e.g.
/// `operand 0 dim 1 - product of factor sizes doesn't match dim size: 6 != 8`,
/// or nullopt when there is none.
std::optional<std::string> checkShardingRule(const ShardingRule &rule,
                                             const std::vector<std::vector<int64_t>> &operandShapes,
                                             const std::vector<std::vector<int64_t>> &resultShapes);

} // namespace shardc
