// Axis types in context (LANGUAGE.md section 10): a mesh's axis_types, as
// the auto_axes and explicit_axes regions around a point change them.
#pragma once

#include "ir/IR.h"

#include <string>
#include <vector>

namespace shardc {

/// The axis types at one point of the program: the meshes' own, overridden
/// by the enclosing auto_axes / explicit_axes regions (innermost last).
struct AxisTypeScope {
  struct Override {
    std::string mesh;
    std::string axis;
    AxisType type;
  };
  std::vector<Override> overrides;

  AxisType typeOf(const Mesh &mesh, const std::string &axis) const;
  bool isExplicit(const Mesh &mesh, const std::string &axis) const {
    return typeOf(mesh, axis) == AxisType::Explicit;
  }
  /// Whether some axis of `mesh` is explicit here.
  bool anyExplicit(const Mesh &mesh) const;
  /// `x: explicit, y: auto`: each axis of `mesh` with its type here (what
  /// hover, --explain and --visualize show beside a type).
  std::string text(const Mesh &mesh) const;
};

/// Whether `op` is auto_axes or explicit_axes.
bool isAxesRegion(const Op &op);
/// Whether the module has an auto_axes or explicit_axes op.
bool hasAxesRegions(Module &module);
/// The mesh an auto_axes / explicit_axes op's axes belong to: its first in
/// or out sharding's, else the program's only mesh with axes; null when
/// none can be told.
const Mesh *axesRegionMesh(const Op &op, const Module &module);
/// The scope inside `op`'s body: its axes auto (auto_axes) or explicit
/// (explicit_axes).
AxisTypeScope bodyScope(const Op &op, const Module &module, const AxisTypeScope &outer);
/// The axis types where `value` is defined (the regions around it); the
/// meshes' own when it is in no region or not in `module`.
AxisTypeScope scopeOfValue(const Value &value, const Module &module);

} // namespace shardc
