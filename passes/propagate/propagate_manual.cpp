// propagate-shardings, part 5: the edges across a manual_computation's
// boundary (Shardy's data-flow edges of ManualComputationOp, in our words).
//
// An in_sharding S is the global view of a body argument a: each dim of S
// holds the manual axes first, then free axes; a's dim (local along the
// manual axes) holds the same free axes. So S's dim is split into two
// factors, [m, l]: m (the product of the manual axes' sizes) never
// propagates, l is a's dim. Free axes then flow both ways: from a into S
// (and on to the operand) and from the operand through S into a. Out
// shardings work the same way between a returned body value and a result.
//
// Worked example, manual_axes={"b"}, S = [{"b", ?}] on tensor<32>, a:
// tensor<16> with [{"a", ?}] from inside the body: the rule is ([m l]) ->
// ([l]) with m=2, l=16; l takes "a" from a, and S becomes [{"b", "a", ?}].
#include "passes/propagate/PropagateInternal.h"

#include <algorithm>

namespace shardc::propagation {
namespace {

bool isManual(const AxisRef &axis, const std::vector<AxisRef> &manualAxes) {
  return std::any_of(manualAxes.begin(), manualAxes.end(),
                     [&](const AxisRef &m) { return m.name == axis.name; });
}

} // namespace

std::optional<ShardingRule> manualBoundaryRule(const TensorType &global, const TensorType &local,
                                               const Sharding &sharding,
                                               const std::vector<AxisRef> &manualAxes,
                                               const Mesh &mesh, bool globalFirst) {
  if (global.rank() != local.rank() || sharding.dims.size() != global.rank())
    return std::nullopt;
  ShardingRule rule;
  TensorFactors globalDims(global.rank()), localDims(local.rank());
  for (size_t d = 0; d < global.rank(); ++d) {
    int64_t manual = 1;
    for (const AxisRef &axis : sharding.dims[d].axes)
      if (isManual(axis, manualAxes))
        manual *= sizeOf(axis, mesh);
    int64_t localSize = local.shape[d];
    if (manual * localSize != global.shape[d])
      return std::nullopt; // not the local type of this sharding
    if (manual > 1)
      globalDims[d].push_back(rule.addFactor(manual, FactorKind::NeedReplication));
    if (localSize > 1) {
      int f = rule.addFactor(localSize, FactorKind::PassThrough);
      globalDims[d].push_back(f);
      localDims[d].push_back(f);
    }
  }
  rule.operands = {globalFirst ? globalDims : localDims};
  rule.results = {globalFirst ? localDims : globalDims};
  return rule;
}

std::vector<AxisRef> absentManualAxes(const Sharding &sharding,
                                      const std::vector<AxisRef> &manualAxes) {
  std::vector<AxisRef> absent;
  for (const AxisRef &m : manualAxes) {
    bool present = false;
    for (const DimSharding &dim : sharding.dims)
      for (const AxisRef &axis : dim.axes)
        present |= axis.name == m.name;
    if (!present)
      absent.push_back(m);
  }
  return absent;
}

Sharding bodyView(const Sharding &sharding, const std::vector<AxisRef> &manualAxes) {
  Sharding view = sharding;
  view.replicated.erase(std::remove_if(view.replicated.begin(), view.replicated.end(),
                                       [&](const AxisRef &a) { return isManual(a, manualAxes); }),
                        view.replicated.end());
  for (DimSharding &dim : view.dims) {
    if (dim.open) {
      dim.axes.clear(); // propagation fills it, from the in_sharding or the body
      continue;
    }
    dim.axes.erase(std::remove_if(dim.axes.begin(), dim.axes.end(),
                                  [&](const AxisRef &a) { return isManual(a, manualAxes); }),
                   dim.axes.end());
  }
  return view;
}

} // namespace shardc::propagation
