// Sharding rules: the ShardingRule type (text form, invariant check), the
// dispatch from an op to its group's rule, and the pointwise rule (elementwise
// ops with numpy broadcasting, sharding ops, creation ops). The other groups
// live in sharding_rules_contraction.cpp, sharding_rules_shape.cpp and
// sharding_rules_reshape.cpp.
#include "ir/AxisAlgebra.h"
#include "passes/rules/ShardingRulesInternal.h"

#include <fmt/format.h>

#include <climits>

namespace shardc {

const char *factorKindName(FactorKind kind) {
  switch (kind) {
  case FactorKind::PassThrough:
    return "pass_through";
  case FactorKind::Reduction:
    return "reduction";
  case FactorKind::NeedReplication:
    return "need_replication";
  case FactorKind::Permutation:
    return "permutation";
  }
  return "unknown";
}

int ShardingRule::addFactor(int64_t size, FactorKind kind) {
  factorSizes.push_back(size);
  factorKinds.push_back(kind);
  return static_cast<int>(factorSizes.size()) - 1;
}

std::string ShardingRule::factorName(int index) {
  constexpr int kLetters = 'z' - 'i' + 1; // i..z
  if (index < kLetters)
    return std::string(1, static_cast<char>('i' + index));
  return fmt::format("z_{}", index - kLetters + 1);
}

namespace {

std::string tensorText(const TensorFactors &tensor) {
  std::vector<std::string> dims;
  for (const DimFactors &dim : tensor) {
    std::string text;
    for (int factor : dim)
      text += ShardingRule::factorName(factor);
    dims.push_back(text.empty() ? "1" : text);
  }
  return fmt::format("[{}]", fmt::join(dims, ", "));
}

std::string tensorListText(const std::vector<TensorFactors> &tensors) {
  std::vector<std::string> parts;
  parts.reserve(tensors.size());
  for (const TensorFactors &tensor : tensors)
    parts.push_back(tensorText(tensor));
  return fmt::format("({})", fmt::join(parts, ", "));
}

} // namespace

std::string ShardingRule::str() const {
  std::string text = tensorListText(operands) + "->" + tensorListText(results);
  if (!factorSizes.empty()) {
    std::vector<std::string> sizes;
    for (size_t f = 0; f < factorSizes.size(); ++f)
      sizes.push_back(fmt::format("{}={}", factorName(static_cast<int>(f)), factorSizes[f]));
    text += fmt::format(" {{{}}}", fmt::join(sizes, ", "));
  }
  for (FactorKind kind :
       {FactorKind::Reduction, FactorKind::NeedReplication, FactorKind::Permutation}) {
    std::vector<std::string> names;
    for (size_t f = 0; f < factorKinds.size(); ++f)
      if (factorKinds[f] == kind)
        names.push_back(factorName(static_cast<int>(f)));
    if (!names.empty())
      text += fmt::format(" {}={{{}}}", factorKindName(kind), fmt::join(names, ", "));
  }
  return text;
}

std::optional<std::string>
checkShardingRule(const ShardingRule &rule, const std::vector<std::vector<int64_t>> &operandShapes,
                  const std::vector<std::vector<int64_t>> &resultShapes) {
  const int numFactors = static_cast<int>(rule.numFactors());
  if (rule.factorKinds.size() != rule.factorSizes.size())
    return fmt::format("number of factor kinds doesn't match factors: {} != {}",
                       rule.factorKinds.size(), rule.factorSizes.size());
  for (int f = 0; f < numFactors; ++f)
    if (rule.factorSizes[f] < 0)
      return fmt::format("factor {} - negative size: {}", ShardingRule::factorName(f),
                         rule.factorSizes[f]);
  std::vector<bool> used(numFactors, false);

  auto checkTensors = [&](const char *what, const std::vector<TensorFactors> &tensors,
                          const std::vector<std::vector<int64_t>> &shapes,
                          bool isResult) -> std::optional<std::string> {
    if (tensors.size() != shapes.size())
      return fmt::format("number of {}s doesn't match: {} != {}", what, tensors.size(),
                         shapes.size());
    for (size_t t = 0; t < tensors.size(); ++t) {
      const TensorFactors &tensor = tensors[t];
      if (tensor.size() != shapes[t].size())
        return fmt::format("{} {} - rank doesn't match: {} != {}", what, t, tensor.size(),
                           shapes[t].size());
      std::vector<bool> seen(numFactors, false);
      for (size_t d = 0; d < tensor.size(); ++d) {
        const DimFactors &dim = tensor[d];
        auto where = [&] { return fmt::format("{} {} dim {}", what, t, d); };
        int64_t product = 1;
        bool permutation = false;
        for (int f : dim) {
          if (f < 0 || f >= numFactors)
            return fmt::format("{} - unknown factor: {}", where(), f);
          auto name = [f] { return ShardingRule::factorName(f); };
          if (seen[f])
            return fmt::format("{} - factor used twice in one tensor: {}", where(), name());
          seen[f] = used[f] = true;
          if (isResult && rule.factorKinds[f] == FactorKind::Reduction)
            return fmt::format("{} - reduction factor on a result: {}", where(), name());
          if (rule.factorKinds[f] == FactorKind::Permutation) {
            if (dim.size() != 1)
              return fmt::format("{} - permutation factor shares its dim: {}", where(), name());
            permutation = true;
          }
          if (__builtin_mul_overflow(product, rule.factorSizes[f], &product))
            product = INT64_MAX; // saturate: no dim is that large
        }
        // A lone need-replication factor may differ from its dim too (the
        // concatenated dim of a concat that is not of slices, as in Shardy).
        bool loneReplication =
            dim.size() == 1 && rule.factorKinds[dim[0]] == FactorKind::NeedReplication;
        if (!permutation && !loneReplication && product != shapes[t][d])
          return fmt::format("{} - product of factor sizes doesn't match dim size: {} != {}",
                             where(), product, shapes[t][d]);
      }
    }
    return std::nullopt;
  };

  if (auto error = checkTensors("operand", rule.operands, operandShapes, false))
    return error;
  if (auto error = checkTensors("result", rule.results, resultShapes, true))
    return error;
  for (int f = 0; f < numFactors; ++f)
    if (!used[f])
      return fmt::format("factor used by no tensor: {}", ShardingRule::factorName(f));
  return std::nullopt;
}

namespace sharding_rules {

ShardingRule emptyRule(const OpShapes &shapes) {
  ShardingRule rule;
  for (const Shape &shape : shapes.operands)
    rule.operands.emplace_back(shape.size());
  rule.results.emplace_back(shapes.result.size());
  return rule;
}

int addResultFactor(ShardingRule &rule, const OpShapes &shapes, size_t dim, FactorKind kind) {
  int factor = rule.addFactor(shapes.result[dim], kind);
  rule.results[0][dim].push_back(factor);
  return factor;
}

std::optional<ShardingRule> pointwiseRule(const OpShapes &shapes) {
  ShardingRule rule = emptyRule(shapes);
  const size_t rank = shapes.result.size();
  for (const Shape &operand : shapes.operands)
    if (operand.size() > rank)
      return std::nullopt;
  for (size_t d = 0; d < rank; ++d) {
    int factor = addResultFactor(rule, shapes, d, FactorKind::PassThrough);
    for (size_t i = 0; i < shapes.operands.size(); ++i) {
      const Shape &operand = shapes.operands[i];
      size_t offset = rank - operand.size(); // aligned from the right
      if (d < offset)
        continue; // a leading dim the operand lacks
      int64_t size = operand[d - offset];
      if (size == shapes.result[d])
        rule.operands[i][d - offset].push_back(factor);
      else if (size != 1)
        return std::nullopt; // not broadcast-compatible
    }
  }
  return rule;
}

} // namespace sharding_rules

using namespace sharding_rules;

std::optional<ShardingRule> getShardingRule(const Op &op) {
  OpGroup group = opInfo(op.kind).group;
  if (group == OpGroup::Manual)
    return std::nullopt;
  if (op.results.size() != 1 || !op.results[0] || !op.results[0]->typeKnown)
    return std::nullopt;
  const OpInfo &info = opInfo(op.kind);
  int numOperands = static_cast<int>(op.operands.size());
  if (numOperands < info.minOperands || (info.maxOperands >= 0 && numOperands > info.maxOperands))
    return std::nullopt;
  OpShapes shapes;
  for (const Value *operand : op.operands) {
    if (!operand || !operand->typeKnown)
      return std::nullopt;
    shapes.operands.push_back(operand->type.shape);
  }
  shapes.result = op.results[0]->type.shape;

  std::optional<ShardingRule> rule;
  switch (group) {
  case OpGroup::Unary:
  case OpGroup::Convert:
  case OpGroup::Binary:
  case OpGroup::ShardingOp:
  case OpGroup::Creation:
    rule = pointwiseRule(shapes);
    break;
  case OpGroup::Contraction:
    rule = contractionRule(op, shapes);
    break;
  case OpGroup::Reduction:
    rule = reductionRule(op, shapes);
    break;
  case OpGroup::Shape:
    rule = shapeOpRule(op, shapes);
    break;
  case OpGroup::Collective:
    rule = collectiveRule(op, shapes);
    break;
  case OpGroup::Manual:
  case OpGroup::ControlFlow: // regions: data-flow edges, not a factor rule
    break;
  }
  // A rule that breaks the invariants would mislead propagation: none at all
  // is safer (the op's shardings are then left as they are).
  if (rule && checkShardingRule(*rule, shapes.operands, {shapes.result}))
    return std::nullopt;
  return rule;
}

bool appendShardingRuleKey(KeyWords &key, const Op &op) {
  std::vector<int64_t> parameter;
  switch (opInfo(op.kind).group) {
  case OpGroup::Unary:
  case OpGroup::Convert:
  case OpGroup::Binary:
  case OpGroup::Creation:
    break;
  default:
    if (op.kind == OpKind::Transpose) {
      const Attribute *perm = op.attr(attrs::perm);
      std::optional<std::vector<int64_t>> values = perm ? perm->intList() : std::nullopt;
      if (!values)
        return false;
      parameter = std::move(*values);
    } else if (op.kind != OpKind::Matmul && op.kind != OpKind::Reshape) {
      return false;
    }
  }
  if (op.results.size() != 1 || !op.results[0] || !op.results[0]->typeKnown)
    return false;
  for (const Value *v : op.operands)
    if (!v || !v->typeKnown)
      return false;
  key.push_back(static_cast<uint64_t>(op.kind));
  auto append = [&](const std::vector<int64_t> &values) {
    key.push_back(values.size());
    key.insert(key.end(), values.begin(), values.end());
  };
  for (const Value *v : op.operands)
    append(v->type.shape);
  append(op.results[0]->type.shape);
  append(parameter);
  return true;
}

const ShardingRule *ShardingRuleCache::get(const Op &op) {
  auto make = [&]() -> const ShardingRule * {
    std::optional<ShardingRule> rule = getShardingRule(op);
    return rule ? &rules_.emplace_back(std::move(*rule)) : nullptr;
  };
  scratch_.clear();
  if (!appendShardingRuleKey(scratch_, op))
    return make();
  if (auto known = byKey_.find(scratch_); known != byKey_.end())
    return known->second;
  const ShardingRule *rule = make();
  byKey_.emplace(scratch_, rule);
  return rule;
}

ShardingRule identityRule(const TensorType &type, size_t numOperands, size_t numResults) {
  ShardingRule rule;
  TensorFactors dims;
  for (int64_t size : type.shape) {
    if (size <= 1) {
      dims.emplace_back();
      continue;
    }
    rule.factorSizes.push_back(size);
    rule.factorKinds.push_back(FactorKind::PassThrough);
    dims.push_back({static_cast<int>(rule.factorSizes.size() - 1)});
  }
  rule.operands.assign(numOperands, dims);
  rule.results.assign(numResults, dims);
  return rule;
}

Sharding shardingFromFactors(const std::string &meshName, const TensorFactors &factors,
                             const std::vector<std::vector<AxisRef>> &factorAxes,
                             const Mesh &mesh) {
  Sharding s = Sharding::replicatedOn(meshName, factors.size());
  for (size_t d = 0; d < factors.size(); ++d)
    for (int f : factors[d])
      for (const AxisRef &axis : factorAxes[f])
        appendMerging(s.dims[d].axes, axis, mesh);
  return s;
}

} // namespace shardc
