// Axis types in context: the meshes' axis_types overridden by the enclosing
// auto_axes / explicit_axes regions.
#include "ir/AxisTypes.h"

namespace shardc {

AxisType AxisTypeScope::typeOf(const Mesh &mesh, const std::string &axis) const {
  for (auto it = overrides.rbegin(); it != overrides.rend(); ++it)
    if (it->mesh == mesh.name && it->axis == axis)
      return it->type;
  const MeshAxis *a = mesh.findAxis(axis);
  return a ? a->type : AxisType::Auto;
}

bool AxisTypeScope::anyExplicit(const Mesh &mesh) const {
  for (const MeshAxis &a : mesh.axes)
    if (isExplicit(mesh, a.name))
      return true;
  return false;
}

bool isAxesRegion(const Op &op) {
  return op.kind == OpKind::AutoAxes || op.kind == OpKind::ExplicitAxes;
}

bool hasAxesRegions(Module &module) {
  bool found = false;
  walkBlocks(module, [&](Block &b) {
    for (const auto &op : b.ops)
      found = found || isAxesRegion(*op);
  });
  return found;
}

const Mesh *axesRegionMesh(const Op &op, const Module &module) {
  for (const char *name : {"in_shardings", "out_shardings"})
    if (const Attribute *a = op.attr(name); a && !a->shardings.empty())
      return module.findMesh(a->shardings.front().meshName);
  const Mesh *only = nullptr;
  for (const auto &mesh : module.meshes)
    if (!mesh->axes.empty()) {
      if (only)
        return nullptr;
      only = mesh.get();
    }
  return only;
}

AxisTypeScope bodyScope(const Op &op, const Module &module, const AxisTypeScope &outer) {
  AxisTypeScope inner = outer;
  const Mesh *mesh = axesRegionMesh(op, module);
  const Attribute *axes = op.attr(attrs::axes);
  if (!mesh || !axes || !isAxesRegion(op))
    return inner;
  AxisType type = op.kind == OpKind::AutoAxes ? AxisType::Auto : AxisType::Explicit;
  for (const AxisRef &a : axes->axes)
    inner.overrides.push_back({mesh->name, a.name, type});
  return inner;
}

} // namespace shardc
