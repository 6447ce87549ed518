// The candidate strategies of one op (or one value) for auto-sharding: every
// assignment of whole mesh axes to the op's shardable factors that the
// partitioner can compute locally, projected onto operand and result layouts.
//
// 1. Shardable factors: pass-through and reduction factors of size > 1
//    (need-replication and permutation factors stay unsharded; a reshape
//    factor only when it is on both sides, as partition_assignment.cpp).
// 2. Each mesh axis goes to one shardable factor or none; a factor's axes
//    (mesh order, major first) must divide its size, and a minor factor of
//    a multi-factor dim is sharded only when the factors before it are
//    sharded whole. Where a dim needs it, an axis is also split in two
//    sub-axes, "x":(1)k and "x":(k)n/k, each going to a factor or none: for
//    the divisors k of the axis's size n such that a shardable factor's size
//    is divisible by k or by n/k but not by n (batch 2 on <["x"=4]>: the
//    batch on "x":(1)2, the other half of "x" free for another factor).
// 3. Layouts from the rule (shardingFromFactors); sharded reduction factors
//    make the result partial: reduced by all_reduce into the computed
//    layout, or by reduce_scatter into a result dim that the axes divide.
// Example, matmul 64x128 x 128x512 on <["x"=2]>: i=x ([{x},{}] x [{},{}] ->
// [{x},{}]), j=x, k=x (partial: all_reduce, or reduce_scatter on dim 0 or 1)
// and replicated: 5 strategies.
#include "passes/auto_shard/AutoShardInternal.h"

#include "ir/AxisAlgebra.h"
#include "passes/partition/FactorAssignment.h"

#include <algorithm>
#include <functional>

namespace shardc::autoshard {
namespace {

/// Step 2's rule for dims of several factors.
bool majorFactorsWhole(const ShardingRule &rule, const std::vector<std::vector<AxisRef>> &axes,
                       const Mesh &mesh) {
  auto check = [&](const std::vector<TensorFactors> &tensors) {
    for (const TensorFactors &tensor : tensors)
      for (const DimFactors &dim : tensor) {
        bool majorWhole = true;
        for (int f : dim) {
          if (!majorWhole && !axes[f].empty())
            return false;
          majorWhole = majorWhole && productOf(axes[f], mesh) == rule.factorSizes[f];
        }
      }
    return true;
  };
  return check(rule.operands) && check(rule.results);
}

std::vector<bool> shardableFactors(const Op *op, const ShardingRule &rule) {
  const size_t n = rule.numFactors();
  std::vector<bool> shardable(n, false), onOperand(n, false), onResult(n, false);
  for (const TensorFactors &t : rule.operands)
    for (const DimFactors &dim : t)
      for (int f : dim)
        onOperand[f] = true;
  for (const TensorFactors &t : rule.results)
    for (const DimFactors &dim : t)
      for (int f : dim)
        onResult[f] = true;
  for (size_t f = 0; f < n; ++f) {
    FactorKind kind = rule.factorKinds[f];
    shardable[f] = (kind == FactorKind::PassThrough || kind == FactorKind::Reduction) &&
                   rule.factorSizes[f] > 1;
    if (op && op->kind == OpKind::Reshape)
      shardable[f] = shardable[f] && onOperand[f] && onResult[f];
  }
  return shardable;
}

/// The sizes k (1 < k < n) at which an axis of size n may be split for the
/// shardable factors of `rule` (step 2).
std::vector<int64_t> splitPoints(int64_t n, const ShardingRule &rule,
                                 const std::vector<bool> &shardable) {
  std::vector<int64_t> out;
  for (int64_t k = 2; k < n; ++k) {
    if (n % k != 0)
      continue;
    for (size_t f = 0; f < rule.numFactors(); ++f) {
      int64_t size = rule.factorSizes[f];
      if (shardable[f] && size % n != 0 && (size % k == 0 || size % (n / k) == 0)) {
        out.push_back(k);
        break;
      }
    }
  }
  return out;
}

/// Where one mesh axis goes: whole to `major` (when `split` is 0), or split
/// at `split` into a major sub-axis for `major` and a minor one for `minor`;
/// -1 is no factor.
struct AxisOwner {
  int major = -1, minor = -1;
  int64_t split = 0;
};

/// Calls `visit` with every assignment of mesh axes to shardable factors.
void forEachAssignment(
    const ShardingRule &rule, const std::vector<bool> &shardable, const Mesh &mesh,
    const std::function<void(const std::vector<std::vector<AxisRef>> &)> &visit) {
  std::vector<int> candidates{-1};
  for (size_t f = 0; f < rule.numFactors(); ++f)
    if (shardable[f])
      candidates.push_back(static_cast<int>(f));
  std::vector<AxisOwner> owner(mesh.axes.size());
  std::function<void(size_t)> recurse = [&](size_t a) {
    if (a == mesh.axes.size()) {
      std::vector<std::vector<AxisRef>> axes(rule.numFactors());
      for (size_t i = 0; i < owner.size(); ++i) {
        const MeshAxis &axis = mesh.axes[i];
        const AxisOwner &o = owner[i];
        if (o.split == 0) {
          if (o.major >= 0)
            axes[o.major].push_back(AxisRef{axis.name, 0, 0, {}});
          continue;
        }
        if (o.major >= 0)
          axes[o.major].push_back(AxisRef{axis.name, 1, o.split, {}});
        if (o.minor >= 0)
          axes[o.minor].push_back(AxisRef{axis.name, o.split, axis.size / o.split, {}});
      }
      for (size_t f = 0; f < axes.size(); ++f)
        if (!axes[f].empty() && rule.factorSizes[f] % productOf(axes[f], mesh) != 0)
          return;
      if (majorFactorsWhole(rule, axes, mesh))
        visit(axes);
      return;
    }
    const int64_t n = mesh.axes[a].size;
    for (int f : candidates) {
      if (n <= 1 && f >= 0)
        continue;
      owner[a] = AxisOwner{f, -1, 0};
      recurse(a + 1);
    }
    // Split axes: the major half to a factor, the minor half to another
    // factor or, when the whole axis does not divide the first, to none
    // (a minor half alone would only repeat that layout on other devices).
    for (int64_t k : splitPoints(n, rule, shardable))
      for (int major : candidates)
        for (int minor : candidates) {
          if (major < 0 || major == minor || (minor < 0 && rule.factorSizes[major] % n == 0))
            continue;
          owner[a] = AxisOwner{major, minor, k};
          recurse(a + 1);
        }
    owner[a] = AxisOwner{};
  };
  recurse(0);
}

std::string reductionKindOf(OpKind kind) {
  if (kind == OpKind::ReduceMax)
    return "max";
  if (kind == OpKind::ReduceMin)
    return "min";
  return "sum";
}

/// The strategy computing `op` with these factor axes: operand and result
/// layouts from the rule, reduction factors' axes partial (result = the
/// computed layout).
Strategy fromFactors(const Op &op, const ShardingRule &rule, std::vector<std::vector<AxisRef>> axes,
                     const Mesh &mesh) {
  Strategy s;
  for (const TensorFactors &t : rule.operands)
    s.operands.push_back(shardingFromFactors(mesh.name, t, axes, mesh));
  s.computed = s.result = shardingFromFactors(mesh.name, rule.results[0], axes, mesh);
  for (size_t f = 0; f < rule.numFactors(); ++f)
    if (rule.factorKinds[f] == FactorKind::Reduction)
      s.partial.insert(s.partial.end(), axes[f].begin(), axes[f].end());
  s.partial = mergedAxes(s.partial, mesh);
  s.partialKind = reductionKindOf(op.kind);
  s.factorAxes = std::move(axes);
  return s;
}

} // namespace

bool sameLayout(const Sharding &a, const Sharding &b, const Mesh &mesh) {
  if (a.meshName != b.meshName || a.dims.size() != b.dims.size())
    return false;
  for (size_t d = 0; d < a.dims.size(); ++d)
    if (!sameAxes(mergedAxes(a.dims[d].axes, mesh), mergedAxes(b.dims[d].axes, mesh), mesh))
      return false;
  return true;
}

bool honours(const Sharding &candidate, const Sharding &written, const Mesh &mesh) {
  if (candidate.meshName != written.meshName || candidate.dims.size() != written.dims.size())
    return false;
  for (size_t d = 0; d < written.dims.size(); ++d) {
    const auto &want = written.dims[d].axes;
    const auto &have = candidate.dims[d].axes;
    if (!written.dims[d].open) {
      if (!sameAxes(mergedAxes(want, mesh), mergedAxes(have, mesh), mesh))
        return false;
    } else if (!want.empty() && axisListPrefix(want, have, mesh) == PrefixStatus::NotAPrefix) {
      return false;
    }
    for (const AxisRef &r : written.replicated)
      for (const AxisRef &a : have)
        if (overlaps(a, r, mesh))
          return false;
  }
  return true;
}

std::vector<Strategy> opStrategies(const Op &op, const ShardingRule &rule, const Mesh &mesh) {
  std::vector<Strategy> out;
  const Value &result = *op.result();
  forEachAssignment(rule, shardableFactors(&op, rule), mesh, [&](const auto &axes) {
    Strategy s = fromFactors(op, rule, axes, mesh);
    out.push_back(s);
    // reduce_scatter variants: the reduction's axes appended to a result
    // dim they divide (not for reduce_mean, which the partitioner reduces
    // whole before dividing).
    if (s.partial.empty() || op.kind == OpKind::ReduceMean)
      return;
    for (size_t d = 0; d < s.result.dims.size(); ++d) {
      Strategy v = s;
      std::vector<AxisRef> dimAxes = v.result.dims[d].axes;
      dimAxes.insert(dimAxes.end(), s.partial.begin(), s.partial.end());
      if (result.type.shape[d] % productOf(dimAxes, mesh) != 0)
        continue;
      v.result.dims[d].axes = mergedAxes(dimAxes, mesh);
      out.push_back(v);
    }
  });
  return out;
}

std::vector<Strategy> valueStrategies(const TensorType &type, const Mesh &mesh) {
  ShardingRule rule = identityRule(type, 0, 1);
  std::vector<Strategy> out;
  forEachAssignment(rule, shardableFactors(nullptr, rule), mesh, [&](const auto &axes) {
    Strategy s;
    s.result = shardingFromFactors(mesh.name, rule.results[0], axes, mesh);
    s.computed = s.result;
    out.push_back(s);
  });
  return out;
}

std::vector<Strategy> honouring(std::vector<Strategy> all, const std::optional<Sharding> &written,
                                const Mesh &mesh) {
  if (!written)
    return all;
  std::vector<Strategy> kept;
  for (Strategy &s : all)
    if (honours(s.result, *written, mesh))
      kept.push_back(std::move(s));
  if (kept.empty()) {
    Strategy s;
    s.result = s.computed = written->closed();
    kept.push_back(s);
  }
  return kept;
}

std::vector<const Sharding *> writtenOperands(const Op &op, const Mesh &mesh) {
  std::vector<const Sharding *> out;
  for (const Value *operand : op.operands)
    out.push_back(operand->sharding && operand->sharding->isClosed() &&
                          operand->sharding->meshName == mesh.name
                      ? &*operand->sharding
                      : nullptr);
  return out;
}

Strategy partitionerStrategy(const Op &op, const ShardingRule &rule,
                             const std::vector<const Sharding *> &operands, const Sharding &result,
                             const Mesh &mesh) {
  Strategy s =
      fromFactors(op, rule, partition::assignFactors(op, rule, operands, {&result}, mesh), mesh);
  s.result = result;
  return s;
}

std::vector<Strategy> keepWrittenOperands(const Op &op, const ShardingRule &rule,
                                          std::vector<Strategy> all, const Mesh &mesh) {
  std::vector<const Sharding *> operands = writtenOperands(op, mesh);
  if (std::find(operands.begin(), operands.end(), nullptr) != operands.end())
    return all;
  std::vector<Strategy> kept;
  for (const Strategy &s : all) {
    bool same = s.operands.size() == op.operands.size();
    for (size_t i = 0; same && i < s.operands.size(); ++i)
      same = sameLayout(s.operands[i], *op.operands[i]->sharding, mesh);
    if (same)
      kept.push_back(s);
  }
  if (!kept.empty())
    return kept;
  all.push_back(partitionerStrategy(op, rule, operands, op.result()->sharding->closed(), mesh));
  return all;
}

} // namespace shardc::autoshard
