// Factor-based sharding rules, one per op (OpenXLA Shardy's OpShardingRule).
//
// A rule is an einsum-like map from every operand and result dimension to
// factors. Propagation projects each tensor's dim shardings onto factors,
// decides per factor which axes shard it, and projects back. Example:
//
//   matmul tensor<8x16>, tensor<16x32> -> tensor<8x32>
//   factors: i=8 (pass-through), k=16 (reduction), j=32 (pass-through)
//   operand 0: [[i], [k]]   operand 1: [[k], [j]]   result: [[i], [j]]
//
//   reshape tensor<8> -> tensor<2x4>
//   factors: i=2, j=4 (pass-through)
//   operand 0: [[i, j]]  (one dim over two factors, major to minor)
//   result:    [[i], [j]]
#pragma once

#include "ir/IR.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace shardc {

enum class FactorKind {
  /// The factor's index is the same in every tensor that has it: sharding it
  /// the same way everywhere needs no communication (batch and free dims,
  /// elementwise dims).
  PassThrough,
  /// A dimension summed (or maxed, ...) away: sharding it leaves a partial
  /// result that needs a reduction across the axes (matmul's k, reduced dims).
  Reduction,
  /// A dimension whose every element depends on the whole operand dim, so it
  /// must stay unsharded for the op to compute locally (e.g. the dim of a
  /// cumulative op). Propagation never shards such a factor.
  NeedReplication,
  /// A dimension whose elements move between positions (slice, pad, concat
  /// along a dim): sharding it is legal but the partitioner must reshard.
  /// Propagation passes shardings through it like PassThrough in Shardy's
  /// default mode only when sizes are equal; here it blocks propagation.
  Permutation,
};

const char *factorKindName(FactorKind kind);

/// The factors of one tensor dimension, major to minor. Empty when the dim
/// maps to no factor (a size-1 broadcast dim, a kept reduced dim of size 1).
using DimFactors = std::vector<int>;
/// The factors of every dimension of one tensor.
using TensorFactors = std::vector<DimFactors>;

struct ShardingRule {
  std::vector<int64_t> factorSizes;
  std::vector<FactorKind> factorKinds;
  std::vector<TensorFactors> operands; // one per op operand
  std::vector<TensorFactors> results;  // one per op result

  size_t numFactors() const { return factorSizes.size(); }
  /// Adds a factor and returns its index.
  int addFactor(int64_t size, FactorKind kind);
  /// Shardy-style text, e.g. `([i, k], [k, j])->([i, j]) {i=8, j=32, k=16}
  /// reduction={k}`, factors named i, j, k, ... in order of creation. Dims
  /// over several factors print as `ij`. Used by tests and --explain.
  std::string str() const;
};

/// The rule of `op`, from its operand and result types. nullopt when the op
/// has no factor rule: manual_computation (propagates through its body),
/// collectives (appear only in per-device code), or when a type is unknown.
/// Every dim of every operand and result is mapped; each factor's size
/// equals the product... precisely: for each tensor dim, the product of its
/// factors' sizes equals the dim size (1 for an empty list).
std::optional<ShardingRule> getShardingRule(const Op &op);

/// Reshape factorization: splits the two shapes into a common sequence of
/// factors by gcd, so that each operand dim and each result dim is a
/// contiguous run of factors (8 -> 2x4 gives factors [2, 4], operand [[0,1]],
/// result [[0],[1]]; 6 -> 2x3, 4x6 -> 3x8 gives [3? ...] see the unit tests).
/// Size-1 dims map to no factor.
ShardingRule reshapeRule(const std::vector<int64_t> &from, const std::vector<int64_t> &to);

} // namespace shardc
