// Where each axis of a propagated sharding came from: the side record that
// propagate-shardings keeps when asked (for `--explain` and
// `--debug-origins`, STYLE point 14). Nothing is recorded unless a caller
// passes a ShardingOrigins to propagateShardings, so the normal pipeline pays
// nothing for it.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/IR.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace shardc {

/// The origin of one axis on one dimension of one tensor.
struct AxisOrigin {
  /// The annotation the axis was first written in: the axis inside a
  /// `sharding<...>` on a parameter, a result, a sharding_constraint, a
  /// function result or a manual_computation in/out sharding.
  Loc loc;
  /// The user-priority round in which the axis reached this tensor (for an
  /// axis written on the tensor itself: the priority of its dimension).
  int64_t priority = 0;
  /// False when the axis was written on this tensor, true when propagation
  /// brought it here.
  bool propagated = false;
  /// True when the axis was copied onto this tensor, before propagation,
  /// from the fully closed sharding_constraint or manual_computation
  /// in_sharding that uses it (Shardy's import step; `loc` is in that
  /// sharding). Such an axis counts as propagated.
  bool copiedFromConstraint = false;
  /// The axis or sub-axis itself, as it is on this dim.
  AxisRef axis;
};

/// How the axis reached its tensor, as --explain and hover say it:
/// `written here`, `propagated`, or `copied from that closed sharding`.
inline const char *originKind(const AxisOrigin &origin) {
  if (origin.copiedFromConstraint)
    return "copied from that closed sharding";
  return origin.propagated ? "propagated" : "written here";
}

/// Per dimension: the exact axis or sub-axis (originKey) to its origin. Two
/// sub-axes of one axis on one dim can come from different annotations, so
/// each has its own entry.
using DimOrigins = std::map<std::string, AxisOrigin>;

/// The key of `axis` in DimOrigins: a full axis by its name (`x`), a
/// sub-axis with its range (`x:(2)2`).
inline std::string originKey(const AxisRef &axis) {
  if (!axis.isSubAxis())
    return axis.name;
  return axis.name + ":(" + std::to_string(axis.preSize) + ")" + std::to_string(axis.size);
}

/// The origins of every sharded value and function result after propagation.
struct ShardingOrigins {
  std::map<const Value *, std::vector<DimOrigins>> values;
  std::map<const ResultSpec *, std::vector<DimOrigins>> results;
};

} // namespace shardc
