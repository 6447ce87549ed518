// Sharding rules for the collectives, Shardy's (op_sharding_rule_registry.cc:
// stablehlo.all_reduce and collective_permute are pointwise; all_gather,
// reduce_scatter and all_to_all keep their other dims pass-through and give
// the dims they change a need-replication factor on the operand and another
// on the result, so no sharding crosses such a dim). They only occur in a
// manual_computation body, where propagation moves the free axes through
// them as Shardy does; the partitioner copies such a body as written.
#include "passes/rules/ShardingRulesInternal.h"

#include <algorithm>

namespace shardc::sharding_rules {
namespace {

/// One pass-through factor per dim outside `changed`, then, for each dim of
/// `changed` in order, a need-replication factor of the operand's size on the
/// operand and one of the result's size on the result (Shardy's factor order).
std::optional<ShardingRule> changedDimsRule(const OpShapes &shapes,
                                            const std::vector<int64_t> &changed) {
  const Shape &operand = shapes.operands[0];
  if (operand.size() != shapes.result.size())
    return std::nullopt;
  auto isChanged = [&](size_t d) {
    return std::find(changed.begin(), changed.end(), static_cast<int64_t>(d)) != changed.end();
  };
  ShardingRule rule = emptyRule(shapes);
  for (size_t d = 0; d < operand.size(); ++d) {
    if (isChanged(d))
      continue;
    if (operand[d] != shapes.result[d])
      return std::nullopt;
    int factor = addResultFactor(rule, shapes, d, FactorKind::PassThrough);
    rule.operands[0][d].push_back(factor);
  }
  for (int64_t d : changed) {
    if (d < 0 || d >= static_cast<int64_t>(operand.size()))
      return std::nullopt;
    rule.operands[0][d].push_back(rule.addFactor(operand[d], FactorKind::NeedReplication));
    addResultFactor(rule, shapes, static_cast<size_t>(d), FactorKind::NeedReplication);
  }
  return rule;
}

} // namespace

std::optional<ShardingRule> collectiveRule(const Op &op, const OpShapes &shapes) {
  if (shapes.operands.size() != 1)
    return std::nullopt; // axis_index: no operand (Shardy: partition_id has no rule)
  switch (op.kind) {
  case OpKind::AllReduce:
  case OpKind::CollectivePermute:
    return pointwiseRule(shapes);
  case OpKind::AllGather:
  case OpKind::ReduceScatter:
  case OpKind::AllSlice: {
    std::optional<int64_t> dim = op.get(attrs::dim);
    if (!dim)
      return std::nullopt;
    return changedDimsRule(shapes, {*dim});
  }
  case OpKind::AllToAll: {
    std::optional<int64_t> split = op.get(attrs::splitDim);
    std::optional<int64_t> concat = op.get(attrs::concatDim);
    if (!split || !concat)
      return std::nullopt;
    if (*split == *concat)
      return changedDimsRule(shapes, {*split});
    return changedDimsRule(shapes, {*split, *concat});
  }
  default:
    return std::nullopt;
  }
}

} // namespace shardc::sharding_rules
