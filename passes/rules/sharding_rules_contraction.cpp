// Sharding rules for contractions (matmul, einsum) and reductions: the dims
// that disappear from the result are reduction factors, sharding them leaves
// partial results that the partitioner all_reduces (or reduce_scatters).
#include "passes/rules/ShardingRulesInternal.h"
#include "support/Einsum.h"

#include <map>
#include <string>

namespace shardc::sharding_rules {
namespace {

/// Maps batch factor `factor` (result dim `resultDim`, of the `batchRank`
/// leading result dims) onto `operand` of a matmul if it has that batch dim
/// with the same size; a size-1 or missing batch dim broadcasts and maps to
/// none. False when the sizes are incompatible.
bool mapBatchDim(DimFactors *operandDims, const Shape &operand, size_t batchRank, size_t resultDim,
                 int64_t resultSize, int factor) {
  size_t operandBatch = operand.size() - 2;
  size_t offset = batchRank - operandBatch; // batch dims aligned from the right
  if (resultDim < offset)
    return true;
  size_t dim = resultDim - offset;
  if (operand[dim] == resultSize) {
    operandDims[dim].push_back(factor);
    return true;
  }
  return operand[dim] == 1;
}

std::optional<ShardingRule> matmulRule(const OpShapes &shapes) {
  const Shape &lhs = shapes.operands[0], &rhs = shapes.operands[1], &result = shapes.result;
  if (lhs.size() < 2 || rhs.size() < 2 || result.size() != std::max(lhs.size(), rhs.size()))
    return std::nullopt;
  ShardingRule rule = emptyRule(shapes);
  const size_t batchRank = result.size() - 2;
  for (size_t d = 0; d < batchRank; ++d) {
    int factor = addResultFactor(rule, shapes, d, FactorKind::PassThrough);
    if (!mapBatchDim(rule.operands[0].data(), lhs, batchRank, d, result[d], factor) ||
        !mapBatchDim(rule.operands[1].data(), rhs, batchRank, d, result[d], factor))
      return std::nullopt;
  }
  const size_t lhsM = lhs.size() - 2, lhsK = lhs.size() - 1;
  const size_t rhsK = rhs.size() - 2, rhsN = rhs.size() - 1;
  if (lhs[lhsM] != result[batchRank] || rhs[rhsN] != result[batchRank + 1] ||
      lhs[lhsK] != rhs[rhsK])
    return std::nullopt;
  int m = addResultFactor(rule, shapes, batchRank, FactorKind::PassThrough);
  rule.operands[0][lhsM].push_back(m);
  int n = addResultFactor(rule, shapes, batchRank + 1, FactorKind::PassThrough);
  rule.operands[1][rhsN].push_back(n);
  int k = rule.addFactor(lhs[lhsK], FactorKind::Reduction);
  rule.operands[0][lhsK].push_back(k);
  rule.operands[1][rhsK].push_back(k);
  return rule;
}

std::optional<ShardingRule> einsumRule(const Op &op, const OpShapes &shapes) {
  const Attribute *attr = op.attr(attrs::equation);
  if (!attr || attr->kind != Attribute::Kind::String)
    return std::nullopt;
  // The equation infer-types accepted (letters, spaces ignored, an explicit `->`).
  support::EinsumParse parsed = support::parseEinsum(attr->s);
  const support::EinsumEquation &eq = parsed.equation;
  if (!parsed.ok() || eq.inputs.size() != shapes.operands.size() ||
      eq.output.labels.size() != shapes.result.size())
    return std::nullopt;

  // 1. Each label's size, consistent across the inputs and the output.
  std::map<char, int64_t> sizes;
  auto record = [&](const std::string &term, const Shape &shape) {
    if (term.size() != shape.size())
      return false;
    for (size_t d = 0; d < term.size(); ++d) {
      if (term.find(term[d]) != d)
        return false; // a label twice in one term (a diagonal)
      auto [it, inserted] = sizes.emplace(term[d], shape[d]);
      if (!inserted && it->second != shape[d])
        return false;
    }
    return true;
  };
  for (size_t i = 0; i < eq.inputs.size(); ++i)
    if (!record(eq.inputs[i].labels, shapes.operands[i]))
      return std::nullopt;
  size_t inputLabels = sizes.size();
  if (!record(eq.output.labels, shapes.result) || sizes.size() != inputLabels)
    return std::nullopt; // an output label in no input

  // 2. Factors: the output's labels, then the summed ones.
  ShardingRule rule = emptyRule(shapes);
  std::map<char, int> factors;
  std::string labels = eq.labelsOutputFirst();
  for (size_t l = 0; l < labels.size(); ++l)
    factors[labels[l]] = l < eq.output.labels.size()
                             ? addResultFactor(rule, shapes, l, FactorKind::PassThrough)
                             : rule.addFactor(sizes[labels[l]], FactorKind::Reduction);

  // 3. Every operand dim maps to its label's factor.
  for (size_t i = 0; i < eq.inputs.size(); ++i)
    for (size_t d = 0; d < eq.inputs[i].labels.size(); ++d)
      rule.operands[i][d].push_back(factors[eq.inputs[i].labels[d]]);
  return rule;
}

} // namespace

std::optional<ShardingRule> contractionRule(const Op &op, const OpShapes &shapes) {
  if (op.kind == OpKind::Matmul)
    return shapes.operands.size() == 2 ? matmulRule(shapes) : std::nullopt;
  return einsumRule(op, shapes);
}

std::optional<ShardingRule> reductionRule(const Op &op, const OpShapes &shapes) {
  std::optional<std::vector<int64_t>> dims = op.get(attrs::dims);
  bool keepDims = false;
  if (const Attribute *attr = op.attr(attrs::keepDims)) {
    if (attr->kind != Attribute::Kind::Bool)
      return std::nullopt;
    keepDims = attr->b;
  }
  const Shape &operand = shapes.operands.at(0);
  if (!dims)
    return std::nullopt;
  std::vector<bool> reduced(operand.size(), false);
  for (int64_t dim : *dims) {
    if (dim < 0 || dim >= static_cast<int64_t>(operand.size()) || reduced[dim])
      return std::nullopt;
    reduced[dim] = true;
  }

  ShardingRule rule = emptyRule(shapes);
  size_t resultDim = 0;
  for (size_t d = 0; d < operand.size(); ++d) {
    bool kept = !reduced[d];
    if (kept || keepDims) {
      // The result dim this operand dim becomes: the same size, or 1 when kept
      // after reduction (then it maps to no factor).
      if (resultDim >= shapes.result.size() || shapes.result[resultDim] != (kept ? operand[d] : 1))
        return std::nullopt;
    }
    int factor = rule.addFactor(operand[d], kept ? FactorKind::PassThrough : FactorKind::Reduction);
    rule.operands[0][d].push_back(factor);
    if (kept)
      rule.results[0][resultDim].push_back(factor);
    if (kept || keepDims)
      ++resultDim;
  }
  if (resultDim != shapes.result.size())
    return std::nullopt;
  return rule;
}

} // namespace shardc::sharding_rules
