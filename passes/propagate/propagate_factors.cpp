// propagate-shardings, part 2: the per-factor decision for one op (Shardy's
// aggressive factor propagation, in our words).
//
// Given every tensor of an op projected onto its factors:
//   1. Per factor, the compatible axes: walk the tensors that lead (by the
//      op-priority direction) and keep the longest list that every one of
//      them starts with; tensors that only follow may shorten it but never
//      lengthen it. Every kind of factor takes part (need-replication and
//      permutation ones, the concatenated, sliced and padded dims, as in
//      Shardy; the op-priority stages hold them back).
//   2. Per factor, its source: the largest tensor (elements) whose axes for
//      the factor already start with the compatible list. Factors are then
//      ordered by source size (largest first), on elementwise ops the total
//      size of the compatible axes (most sharded first), source index,
//      factor index.
//   3. Per tensor (results, then operands) and factor in that order, the axes
//      the tensor may take: cut the compatible list at the first axis that is
//      explicitly replicated here, or would need the factor to grow where it
//      cannot (closed dim, a major factor of the dim not full yet, a
//      non-minor-most factor the axes would not divide); keep it only if the
//      tensor's current axes are a strict prefix of it; then cut it where it
//      meets an axis another factor of this tensor already has (after the
//      factors earlier in the order took theirs -- this is how the larger
//      source wins a conflict).
//   4. Append what is left to the tensor's factor axes.
//
// Worked example, matmul ([i, k], [k, j]) -> ([i, j]) with a = 8x16 sharded
// [{"x"}, {}] and b = 16x64 sharded [{}, {"x"}], the result open:
//   1. compatible: i -> ["x"] (from a), j -> ["x"] (from b), k -> [].
//   2. sources: i from a (128 elements), j from b (1024): order j, i, k.
//   3. the result takes "x" for j first; for i, "x" now meets j's "x": cut to
//      nothing. The result is [{}, {"x"}]: the larger tensor wins.
#include "passes/propagate/PropagateInternal.h"

#include <algorithm>
#include <numeric>
#include <tuple>

namespace shardc::propagation {
namespace {

/// Step 1 for one more tensor: merges its `next` axes into the running list
/// `acc` (in place). Returns whether later tensors may still lengthen it.
/// ["a"] + ["a", "b"] -> ["a", "b"]; ["a", "b"] + ["a", "c"] -> ["a"];
/// ["a":(1)2] + ["a":(1)4] -> ["a":(1)4] (when it may still grow).
bool mergeCompatible(std::vector<AxisRef> &acc, const std::vector<AxisRef> &next, bool canExpand,
                     const Mesh &mesh) {
  size_t i = 0;
  for (; i < acc.size() && i < next.size(); ++i) {
    AxisRef &old = acc[i];
    const AxisRef &cur = next[i];
    if (!sameAxisName(old.name, cur.name)) {
      acc.resize(i);
      return false;
    }
    if (sameAxis(old, cur, mesh)) {
      old = cur;
    } else if (isPrefixOf(cur, old, mesh)) {
      // `cur` is the shorter sub-axis. Anything after it in `next` would
      // conflict with the rest of `old`.
      if (i + 1 < next.size()) {
        old = cur;
        acc.resize(i + 1);
        return false;
      }
    } else if (isPrefixOf(old, cur, mesh)) {
      if (!canExpand || i + 1 < acc.size()) {
        acc.resize(i + 1);
        return false;
      }
      old = cur;
    } else {
      acc.resize(i);
      return false;
    }
  }
  if (canExpand)
    acc.insert(acc.end(), next.begin() + std::min(i, next.size()), next.end());
  return canExpand;
}

void compatibleAxes(const Projection &p, int f, Direction direction, const Mesh &mesh,
                    std::vector<AxisRef> &acc) {
  acc.clear();
  if (direction == Direction::None)
    return;
  auto leads = [&](size_t t) {
    bool isOperand = t < p.numOperands;
    return direction == Direction::Both || (direction == Direction::Forward) == isOperand;
  };
  bool canExpand = true;
  // The leaders first, then the followers (which may only shorten the list).
  for (bool leaders : {true, false}) {
    if (!leaders)
      canExpand = false;
    for (size_t t = 0; t < p.tensors.size(); ++t) {
      const TensorProjection &tensor = p.tensors[t];
      if (leads(t) == leaders && tensor.present && tensor.factors[f].present)
        canExpand = mergeCompatible(acc, tensor.factors[f].axes, canExpand, mesh);
    }
  }
}

/// Cuts `axes` at the first axis `check` (AxisRef, sharded size so far ->
/// optional AxisRef) rejects; an axis it shortens ends the list.
template <typename AxisCheck>
void truncate(std::vector<AxisRef> &axes, const AxisCheck &check, const Mesh &mesh) {
  int64_t sharded = 1;
  for (size_t i = 0; i < axes.size(); ++i) {
    sharded *= sizeOf(axes[i], mesh);
    std::optional<AxisRef> kept = check(axes[i], sharded);
    if (!kept) {
      axes.resize(i);
      return;
    }
    if (!sameAxis(*kept, axes[i], mesh)) {
      axes[i] = *kept;
      axes.resize(i + 1);
      return;
    }
  }
}

std::optional<AxisRef> withoutOverlap(AxisRef axis, const std::vector<AxisRef> &others,
                                      const Mesh &mesh) {
  for (const AxisRef &other : others) {
    std::optional<AxisRef> kept = prefixWithoutOverlap(axis, other, mesh);
    if (!kept)
      return std::nullopt;
    axis = *kept;
  }
  return axis;
}

/// Step 3, the legality of `axis` within factor `f` of `tensor`.
std::optional<AxisRef> legalWithinFactor(const TensorProjection &tensor, int f, const AxisRef &axis,
                                         int64_t shardedSize, const ShardingRule &rule,
                                         const Mesh &mesh) {
  std::optional<AxisRef> kept = withoutOverlap(axis, tensor.blocked, mesh);
  if (!kept)
    return std::nullopt;
  const FactorSharding &fs = tensor.factors[f];
  for (const AxisRef &have : fs.axes)
    if (contains(have, *kept, mesh))
      return kept;
  if (canGrow(tensor, f, rule, mesh) && (fs.minorMost || rule.factorSizes[f] % shardedSize == 0))
    return kept;
  // Shardy: the prefix of the axis that fits what is left of the factor, as
  // a sub-axis (a reshape merge 4x4 -> 16 of [{"b", "a"}, {}], b=2, a=4,
  // gives [{"b", "a":(1)2}]); truncate() ends the list there.
  int64_t size = sizeOf(*kept, mesh);
  int64_t before = shardedSize / sizeOf(axis, mesh);
  if (canGrow(tensor, f, rule, mesh) && sameAxis(*kept, axis, mesh) && before > 0 &&
      rule.factorSizes[f] % before == 0) {
    int64_t g = std::gcd(rule.factorSizes[f] / before, size);
    if (g > 1 && g < size)
      return makeAxis(kept->name, preSizeOf(*kept), g, mesh);
  }
  if (!fs.axes.empty() && isPrefixOf(fs.axes.back(), *kept, mesh))
    return fs.axes.back();
  return std::nullopt;
}

/// Step 3 for one tensor and factor: the axes it should now have (into
/// `axes`), or empty.
void axesFor(const TensorProjection &tensor, int f, const std::vector<AxisRef> &compatible,
             const ShardingRule &rule, const Mesh &mesh, std::vector<AxisRef> &axes) {
  axes.clear();
  const FactorSharding &fs = tensor.factors[f];
  if (!tensor.present || !fs.present || compatible.empty())
    return;
  axes = compatible;
  truncate(
      axes,
      [&](const AxisRef &a, int64_t sharded) {
        return legalWithinFactor(tensor, f, a, sharded, rule, mesh);
      },
      mesh);
  if (axisListPrefix(fs.axes, axes, mesh) != PrefixStatus::StrictPrefix) {
    axes.clear();
    return;
  }
  truncate(
      axes,
      [&](const AxisRef &a, int64_t) -> std::optional<AxisRef> {
        std::optional<AxisRef> kept = a;
        for (size_t g = 0; g < tensor.factors.size() && kept; ++g) {
          if (static_cast<int>(g) == f || !tensor.factors[g].present)
            continue;
          kept = withoutOverlap(*kept, tensor.factors[g].axes, mesh);
          if (kept)
            kept = withoutOverlap(*kept, tensor.factors[g].overflow, mesh);
        }
        return kept;
      },
      mesh);
}

} // namespace

FactorUpdate propagateFactors(Projection &p, const ShardingRule &rule,
                              const std::function<Direction(int)> &direction, bool elementwise,
                              const Mesh &mesh) {
  FactorUpdate update;
  propagateFactors(p, rule, direction, elementwise, mesh, update);
  return update;
}

void propagateFactors(Projection &p, const ShardingRule &rule,
                      const std::function<Direction(int)> &direction, bool elementwise,
                      const Mesh &mesh, FactorUpdate &update) {
  const int numFactors = static_cast<int>(rule.numFactors());
  update.changed.assign(p.tensors.size(), false);
  update.source.assign(numFactors, -1);

  // 1. compatible axes per factor.
  bool any = false;
  update.compatible.resize(numFactors);
  for (int f = 0; f < numFactors; ++f) {
    // Every kind propagates, as in Shardy's default pipeline: permutation and
    // need-replication factors too (`direction` holds them back until the
    // later op-priority stages). Shardy stops only its blocked_propagation
    // factors, which no rule of shardc's ops has: a factor that must not
    // carry a sharding across (a reshape without elements, the manual axes
    // of a manual_computation edge) sits on one side only.
    compatibleAxes(p, f, direction(f), mesh, update.compatible[f]);
    any |= !update.compatible[f].empty();
  }
  if (!any)
    return;

  // 2. sources and the order of preference.
  std::vector<int64_t> &sourceSize = update.sourceSize;
  sourceSize.assign(numFactors, -1);
  for (size_t t = 0; t < p.tensors.size(); ++t) {
    const TensorProjection &tensor = p.tensors[t];
    if (!tensor.present)
      continue;
    for (int f = 0; f < numFactors; ++f) {
      const std::vector<AxisRef> &compatible = update.compatible[f];
      if (!tensor.factors[f].present || compatible.empty() ||
          axisListPrefix(compatible, tensor.factors[f].axes, mesh) == PrefixStatus::NotAPrefix)
        continue;
      if (tensor.elements > sourceSize[f]) {
        sourceSize[f] = tensor.elements;
        update.source[f] = static_cast<int>(t);
      }
    }
  }
  std::vector<int> &order = update.order;
  order.resize(numFactors);
  std::iota(order.begin(), order.end(), 0);
  // Shardy: on an elementwise op, between sources of one size, the most
  // sharded factor (largest product of its compatible axes) goes first.
  std::vector<int64_t> shardedSize(numFactors, 0);
  if (elementwise)
    for (int f = 0; f < numFactors; ++f)
      shardedSize[f] = productOf(update.compatible[f], mesh);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return std::make_tuple(-sourceSize[a], -shardedSize[a], update.source[a], a) <
           std::make_tuple(-sourceSize[b], -shardedSize[b], update.source[b], b);
  });

  // 3-4. per tensor, results first. A tensor is revisited until it settles: a
  // factor may become able to grow once the factors major to it are full.
  std::vector<AxisRef> &axes = update.candidate;
  auto settle = [&](size_t t) {
    TensorProjection &tensor = p.tensors[t];
    for (bool grew = true; grew;) {
      grew = false;
      for (int f : order) {
        axesFor(tensor, f, update.compatible[f], rule, mesh, axes);
        if (axes.empty())
          continue;
        if (elementwise && t < p.numOperands) {
          // Only as far as the results go: an elementwise op whose result
          // cannot take an axis should not pass it from one operand to another
          // (one all-gather instead of two).
          for (size_t r = p.numOperands; r < p.tensors.size(); ++r) {
            const TensorProjection &result = p.tensors[r];
            if (result.present && result.factors[f].present &&
                axisListPrefix(result.factors[f].axes, axes, mesh) == PrefixStatus::StrictPrefix)
              axes = result.factors[f].axes;
          }
        }
        if (axisListPrefix(tensor.factors[f].axes, axes, mesh) != PrefixStatus::StrictPrefix)
          continue;
        tensor.factors[f].axes = axes;
        update.changed[t] = true;
        grew = true;
      }
    }
  };
  for (size_t t = p.numOperands; t < p.tensors.size(); ++t)
    settle(t);
  for (size_t t = 0; t < p.numOperands; ++t)
    settle(t);
}

} // namespace shardc::propagation
