// Partitioning's per-op decision: which mesh axes shard each factor of an op's
// sharding rule (ShardingRules.h), so that every operand and result has one
// consistent layout for the op to run locally.
//
// 1. Project each operand's layout onto its factors (a dim over factors
//    [f1, f2] gives its major axes to f1 until f1's size is used up,
//    splitting an axis into sub-axes by gcd where needed), then each
//    result's declared sharding. A factor takes the first non-empty
//    projection whose axes no other factor uses yet, nor clash with one
//    ("a":(1)2 and "a":(3)2 of a=6 cannot coexist), operands first: their
//    data is already in place; the results' layouts follow from it. (The
//    partitioner also tries each other tensor first and keeps the way that
//    sends the fewest bytes: partition_ops.cpp.)
// 2. Factors that cannot be sharded for a local op stay empty: permutation
//    factors (concat's dim, sliced and padded dims), reshape factors on one
//    side only, and factors of multi-factor dims whose size the axes do not
//    divide (padding would interleave).
// Worked example: matmul [{"x"}, {"y"}] x [{"y"}, {}] -> [{"x"}, {}]:
// i = x and k = y from the lhs, j = {} ; the result is computed partial over
// y and reduced by the caller.
#include "passes/partition/PartitionInternal.h"

#include <numeric>
#include <optional>

namespace shardc::partition {
namespace {

/// The axes of one dim split over its factors (sizes major to minor);
/// nullopt when they do not split evenly.
std::optional<std::vector<std::vector<AxisRef>>>
project(const std::vector<AxisRef> &axes, const std::vector<int64_t> &sizes, const Mesh &mesh) {
  if (sizes.empty())
    return axes.empty() ? std::optional<std::vector<std::vector<AxisRef>>>(
                              std::vector<std::vector<AxisRef>>{})
                        : std::nullopt;
  if (sizes.size() == 1)
    return std::vector<std::vector<AxisRef>>{axes};
  std::vector<std::vector<AxisRef>> out(sizes.size());
  size_t f = 0;
  int64_t room = sizes[0];
  for (const AxisRef &axis : axes) {
    int64_t n = fullAxisSize(axis.name, mesh);
    int64_t pre = axis.effectivePreSize(), size = axis.effectiveSize(n);
    while (size > 1) {
      while (f < sizes.size() && room == 1)
        room = ++f < sizes.size() ? sizes[f] : 1;
      if (f >= sizes.size())
        return std::nullopt;
      int64_t g = std::gcd(size, room);
      if (g == 1)
        return std::nullopt;
      out[f].push_back(makeAxis(axis.name, pre, g, mesh));
      pre *= g;
      size /= g;
      room /= g;
      if (size > 1 && room > 1)
        return std::nullopt;
    }
  }
  for (auto &list : out)
    list = mergedAxes(list, mesh);
  return out;
}

/// A dim made of several factors (reshape's `[i j]`) is sharded as one
/// range of its elements: axes on a minor factor are only a block of the dim
/// when every factor before it is split completely. E.g. 8x2 -> 16 with dim 1
/// on "x": j = 2 on "x" would give device 0 elements {0, 2, 4, ...} of the 16,
/// which no dim sharding describes; j is left unsharded (the operand is
/// gathered) instead. Clearing a factor can break another dim's prefix, so
/// repeat until nothing changes.
void keepMajorFactorsFull(const ShardingRule &rule, std::vector<std::vector<AxisRef>> &factorAxes,
                          const Mesh &mesh) {
  for (bool changed = true; changed;) {
    changed = false;
    auto check = [&](const std::vector<TensorFactors> &tensors) {
      for (const TensorFactors &tensor : tensors)
        for (const DimFactors &dim : tensor) {
          bool majorFull = true;
          for (int f : dim) {
            if (!majorFull && !factorAxes[f].empty()) {
              factorAxes[f].clear();
              changed = true;
            }
            majorFull = majorFull && productOf(factorAxes[f], mesh) == rule.factorSizes[f];
          }
        }
    };
    check(rule.operands);
    check(rule.results);
  }
}

} // namespace

std::vector<std::vector<AxisRef>> assignFactors(const Op &op, const ShardingRule &rule,
                                                const std::vector<const Sharding *> &operands,
                                                const std::vector<const Sharding *> &results,
                                                const Mesh &mesh, int first) {
  const size_t n = rule.numFactors();
  std::vector<std::vector<AxisRef>> factorAxes(n);
  std::vector<bool> decided(n, false), forbidden(n, false), inMultiDim(n, false);
  std::vector<int> onOperand(n, 0), onResult(n, 0);
  for (size_t f = 0; f < n; ++f)
    forbidden[f] = rule.factorKinds[f] == FactorKind::Permutation ||
                   rule.factorKinds[f] == FactorKind::NeedReplication;
  auto scan = [&](const std::vector<TensorFactors> &tensors, std::vector<int> &count) {
    for (const TensorFactors &tensor : tensors)
      for (const DimFactors &dim : tensor) {
        for (int f : dim) {
          count[f]++;
          inMultiDim[f] = inMultiDim[f] || dim.size() > 1;
        }
      }
  };
  scan(rule.operands, onOperand);
  scan(rule.results, onResult);
  if (op.kind == OpKind::Reshape)
    for (size_t f = 0; f < n; ++f)
      forbidden[f] = forbidden[f] || !onOperand[f] || !onResult[f];

  std::vector<AxisRef> used;
  auto take = [&](const TensorFactors &tensor, const Sharding *sharding) {
    if (!sharding)
      return;
    for (size_t d = 0; d < tensor.size() && d < sharding->dims.size(); ++d) {
      const DimFactors &dim = tensor[d];
      std::vector<int64_t> sizes;
      for (int f : dim)
        sizes.push_back(rule.factorSizes[f]);
      auto projected = project(sharding->dims[d].axes, sizes, mesh);
      if (!projected)
        continue;
      for (size_t j = 0; j < dim.size(); ++j) {
        int f = dim[j];
        if (decided[f] || forbidden[f] || (*projected)[j].empty())
          continue;
        std::vector<AxisRef> prefix;
        for (const AxisRef &axis : (*projected)[j]) {
          bool clash = false;
          for (const AxisRef &u : used)
            clash = clash || overlaps(axis, u, mesh) || !canCoexist(axis, u, mesh);
          if (clash)
            break;
          prefix.push_back(axis);
        }
        if (prefix.empty())
          continue;
        if (inMultiDim[f] && rule.factorSizes[f] % productOf(prefix, mesh) != 0)
          continue;
        factorAxes[f] = prefix;
        decided[f] = true;
        used.insert(used.end(), prefix.begin(), prefix.end());
      }
    }
  };
  const size_t numOperands = rule.operands.size();
  auto takeTensor = [&](size_t t) {
    if (t < numOperands) {
      if (t < operands.size())
        take(rule.operands[t], operands[t]);
    } else if (t - numOperands < rule.results.size() && t - numOperands < results.size()) {
      take(rule.results[t - numOperands], results[t - numOperands]);
    }
  };
  if (first >= 0)
    takeTensor(static_cast<size_t>(first));
  for (size_t t = 0; t < numOperands + rule.results.size(); ++t)
    if (static_cast<int>(t) != first)
      takeTensor(t);
  keepMajorFactorsFull(rule, factorAxes, mesh);
  return factorAxes;
}

} // namespace shardc::partition
