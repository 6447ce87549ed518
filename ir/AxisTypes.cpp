// Axis types in context: the meshes' axis_types overridden by the enclosing
// auto_axes / explicit_axes regions.
#include "ir/AxisTypes.h"

#include <functional>
#include <optional>

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

std::string AxisTypeScope::text(const Mesh &mesh) const {
  std::string out;
  for (const MeshAxis &a : mesh.axes)
    out += (out.empty() ? "" : ", ") + a.name + ": " + axisTypeName(typeOf(mesh, a.name));
  return out;
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

AxisTypeScope scopeOfValue(const Value &value, const Module &module) {
  std::optional<AxisTypeScope> found;
  std::function<void(const Block &, const AxisTypeScope &)> search =
      [&](const Block &b, const AxisTypeScope &scope) {
        for (const auto &arg : b.args)
          if (arg.get() == &value)
            found = scope;
        for (const auto &op : b.ops) {
          for (const auto &r : op->results)
            if (r.get() == &value)
              found = scope;
          AxisTypeScope inner = isAxesRegion(*op) ? bodyScope(*op, module, scope) : scope;
          for (Block *region : op->regions())
            if (!found)
              search(*region, inner);
        }
      };
  search(module.snippet.body, {});
  for (const auto &f : module.functions)
    if (!found)
      search(f->body, {});
  return found ? *found : AxisTypeScope{};
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
