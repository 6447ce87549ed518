// Internals of the sharding rules (passes/sharding_rules*.cpp), shared by the
// per-op-group files. Not part of the public interface (ShardingRules.h).
//
// Each rule reads the shapes of an op whose types are all known and returns
// its rule, or nullopt when the attributes or shapes are ones infer-types
// rejects (rules never report: infer-types already did).
#pragma once

#include "passes/rules/ShardingRules.h"

#include <optional>
#include <string_view>
#include <vector>

namespace shardc::sharding_rules {

using Shape = std::vector<int64_t>;

/// The shapes of an op's operands and of its single result.
struct OpShapes {
  std::vector<Shape> operands;
  Shape result;
};

/// A rule without factors: one TensorFactors per operand and for the result,
/// each with one empty DimFactors per dim.
ShardingRule emptyRule(const OpShapes &shapes);

/// Adds a factor for result dim `dim` and maps it there.
int addResultFactor(ShardingRule &rule, const OpShapes &shapes, size_t dim, FactorKind kind);

/// Unary, convert, binary, select, the sharding ops and the creation ops:
/// one factor per result dim, numpy broadcasting (sharding_rules.cpp).
std::optional<ShardingRule> pointwiseRule(const OpShapes &shapes);
/// matmul, einsum (sharding_rules_contraction.cpp).
std::optional<ShardingRule> contractionRule(const Op &op, const OpShapes &shapes);
/// reduce_* (sharding_rules_contraction.cpp).
std::optional<ShardingRule> reductionRule(const Op &op, const OpShapes &shapes);
/// reshape, transpose, broadcast, concat, slice, pad (sharding_rules_shape.cpp).
std::optional<ShardingRule> shapeOpRule(const Op &op, const OpShapes &shapes);
/// The collectives but axis_index (sharding_rules_collective.cpp).
std::optional<ShardingRule> collectiveRule(const Op &op, const OpShapes &shapes);

} // namespace shardc::sharding_rules
