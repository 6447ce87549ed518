// Sharding rules for the shape ops: transpose, broadcast, concat, slice, pad,
// and reshape (whose factorization is in sharding_rules_reshape.cpp).
//
// Decision (Shardy's default, non-conservative mode): a dim that slice or pad
// changes keeps one factor shared by operand and result, of kind Permutation,
// so that shardings still propagate through it and the partitioner moves the
// data; concat's dim is Permutation only when its operands are slices (or
// pieces of one tensor), NeedReplication otherwise, as in Shardy's registry;
// both kinds propagate, after the pass-through factors.
// Its size is Shardy's: the result dim's for concat, the operand dim's for
// slice and pad.
#include "passes/rules/ShardingRulesInternal.h"

#include <algorithm>

namespace shardc::sharding_rules {
namespace {

std::optional<ShardingRule> transposeRule(const Op &op, const OpShapes &shapes) {
  std::optional<std::vector<int64_t>> perm = op.get(attrs::perm);
  const Shape &operand = shapes.operands[0];
  if (!perm || perm->size() != operand.size() || shapes.result.size() != operand.size())
    return std::nullopt;
  std::vector<bool> seen(operand.size(), false);
  ShardingRule rule = emptyRule(shapes);
  for (size_t d = 0; d < perm->size(); ++d) {
    int64_t from = (*perm)[d];
    if (from < 0 || from >= static_cast<int64_t>(operand.size()) || seen[from] ||
        operand[from] != shapes.result[d])
      return std::nullopt;
    seen[from] = true;
    int factor = addResultFactor(rule, shapes, d, FactorKind::PassThrough);
    rule.operands[0][from].push_back(factor);
  }
  return rule;
}

std::optional<ShardingRule> broadcastRule(const Op &op, const OpShapes &shapes) {
  std::optional<std::vector<int64_t>> dims = op.get(attrs::dims);
  const Shape &operand = shapes.operands[0];
  if (!dims || dims->size() != operand.size())
    return std::nullopt;
  ShardingRule rule = emptyRule(shapes);
  for (size_t d = 0; d < shapes.result.size(); ++d)
    addResultFactor(rule, shapes, d, FactorKind::PassThrough);
  std::vector<bool> taken(shapes.result.size(), false);
  for (size_t i = 0; i < dims->size(); ++i) {
    int64_t to = (*dims)[i];
    if (to < 0 || to >= static_cast<int64_t>(shapes.result.size()) || taken[to])
      return std::nullopt;
    taken[to] = true;
    if (operand[i] == shapes.result[to])
      rule.operands[0][i] = rule.results[0][to]; // the same factor
    else if (operand[i] != 1)
      return std::nullopt;
  }
  return rule;
}

/// Shardy's kind for the concatenated dim: Permutation when the operands are
/// slices (concat(slice(x), slice(y))) or pieces of one tensor, some of them
/// sliced (concat(slice(x), x)); otherwise NeedReplication. Either way
/// shardings move through the dim (Shardy's propagation blocks neither kind;
/// its conservative mode, which shardc does not have, leaves the factor
/// out); the partitioner gathers a need-replication dim and computes it
/// unsharded.
FactorKind concatDimKind(const Op &op) {
  auto isSlice = [](const Value *v) {
    return v && v->definingOp && v->definingOp->kind == OpKind::Slice;
  };
  auto beforeSlice = [&](const Value *v) -> const Value * {
    return isSlice(v) && !v->definingOp->operands.empty() ? v->definingOp->operands[0] : v;
  };
  if (op.operands.empty())
    return FactorKind::NeedReplication;
  bool allSlices = std::all_of(op.operands.begin(), op.operands.end(), isSlice);
  const Value *first = beforeSlice(op.operands[0]);
  bool oneTensor = std::all_of(op.operands.begin(), op.operands.end(),
                               [&](const Value *v) { return beforeSlice(v) == first; });
  bool anySlice = std::any_of(op.operands.begin(), op.operands.end(), isSlice);
  return allSlices || (oneTensor && anySlice) ? FactorKind::Permutation
                                              : FactorKind::NeedReplication;
}

std::optional<ShardingRule> concatRule(const Op &op, const OpShapes &shapes) {
  const Attribute *attr = op.attr(attrs::dim);
  const size_t rank = shapes.result.size();
  if (!attr || attr->kind != Attribute::Kind::Int || attr->i < 0 ||
      attr->i >= static_cast<int64_t>(rank))
    return std::nullopt;
  const size_t concatDim = static_cast<size_t>(attr->i);
  ShardingRule rule = emptyRule(shapes);
  for (size_t d = 0; d < rank; ++d) {
    int64_t total = 0;
    bool allEqual = true;
    for (const Shape &operand : shapes.operands) {
      if (operand.size() != rank)
        return std::nullopt;
      if (__builtin_add_overflow(total, operand[d], &total))
        return std::nullopt;
      allEqual = allEqual && operand[d] == shapes.result[d];
    }
    if (d == concatDim ? total != shapes.result[d] : !allEqual)
      return std::nullopt;
    int factor = addResultFactor(rule, shapes, d,
                                 d != concatDim ? FactorKind::PassThrough : concatDimKind(op));
    for (TensorFactors &operand : rule.operands)
      operand[d].push_back(factor);
  }
  return rule;
}

/// slice and pad: one factor per dim of the operand's size, mapped on both
/// sides; Permutation where `changed(d)`.
template <typename Changed>
std::optional<ShardingRule> windowRule(const OpShapes &shapes, Changed changed) {
  const Shape &operand = shapes.operands[0];
  if (shapes.result.size() != operand.size())
    return std::nullopt;
  ShardingRule rule = emptyRule(shapes);
  for (size_t d = 0; d < operand.size(); ++d) {
    bool moves = operand[d] != shapes.result[d] || changed(d);
    int factor =
        rule.addFactor(operand[d], moves ? FactorKind::Permutation : FactorKind::PassThrough);
    rule.operands[0][d].push_back(factor);
    rule.results[0][d].push_back(factor);
  }
  return rule;
}

std::optional<ShardingRule> sliceRule(const Op &op, const OpShapes &shapes) {
  std::optional<std::vector<int64_t>> start = op.get(attrs::start);
  if (!start || start->size() != shapes.operands[0].size())
    return std::nullopt;
  // With valid bounds a slice that starts past 0 also changes the size; the
  // check keeps the rule right if that ever stops being so.
  return windowRule(shapes, [&](size_t d) { return (*start)[d] != 0; });
}

std::optional<ShardingRule> padRule(const Op &op, const OpShapes &shapes) {
  std::optional<std::vector<int64_t>> low = op.get(attrs::padLow);
  if (!low || low->size() != shapes.operands[0].size())
    return std::nullopt;
  return windowRule(shapes, [&](size_t d) { return (*low)[d] != 0; });
}

} // namespace

std::optional<ShardingRule> shapeOpRule(const Op &op, const OpShapes &shapes) {
  if (op.kind != OpKind::Concat && shapes.operands.size() != 1)
    return std::nullopt;
  switch (op.kind) {
  case OpKind::Reshape:
    return reshapeRule(shapes.operands[0], shapes.result);
  case OpKind::Transpose:
    return transposeRule(op, shapes);
  case OpKind::Broadcast:
    return broadcastRule(op, shapes);
  case OpKind::Concat:
    return concatRule(op, shapes);
  case OpKind::Slice:
    return sliceRule(op, shapes);
  case OpKind::Pad:
    return padRule(op, shapes);
  default:
    return std::nullopt;
  }
}

} // namespace shardc::sharding_rules
