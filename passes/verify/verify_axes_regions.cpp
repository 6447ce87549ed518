// verify-shardings, auto_axes and explicit_axes (LANGUAGE.md section 10, JAX's
// auto_axes / explicit_axes): each takes one sharding list (auto_axes
// out_shardings, one per result: the results' types outside; explicit_axes
// in_shardings, one per operand), names axes of its mesh that are of the
// other type around it, and an auto_axes out_sharding names no explicit axis
// outside the region. Every error's note shows the fix.
#include "ir/Printer.h"
#include "passes/verify/VerifyInternal.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace shardc::verify {
namespace {

std::string axisSetText(const std::vector<AxisRef> &axes) {
  std::string out = "{";
  for (size_t i = 0; i < axes.size(); ++i)
    out += (i ? ", " : "") + axes[i].str();
  return out + "}";
}

/// `[sharding<@m, [{...}, {}]>, ...]`: one sharding per value, the region's
/// axes on dim 0 of each (a written example of the missing list).
std::string exampleList(const std::vector<Value *> &values, const Mesh &mesh,
                        const std::vector<AxisRef> &axes) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    size_t rank = values[i] && values[i]->typeKnown ? values[i]->type.rank() : 0;
    Sharding s = Sharding::replicatedOn(mesh.name, rank);
    if (rank > 0)
      for (const AxisRef &a : axes)
        s.dims[0].axes.push_back(AxisRef{a.name, 0, 0, {}});
    out += (i ? ", " : "") + printSharding(s);
  }
  return out + "]";
}

} // namespace

bool verifyAxesRegion(const Op &op, const Module &module, const AxisTypeScope &types,
                      DiagnosticEngine &diags) {
  const bool autoAxes = op.kind == OpKind::AutoAxes;
  const char *needed = autoAxes ? "out_shardings" : "in_shardings";
  const char *other = autoAxes ? "in_shardings" : "out_shardings";
  const Attribute *axesAttr = op.attr(attrs::axes);
  std::vector<AxisRef> axes = axesAttr ? axesAttr->axes : std::vector<AxisRef>{};
  const Mesh *mesh = axesRegionMesh(op, module);
  if (!mesh) {
    diags.error(op.loc,
                fmt::format("{} - no mesh for axes: write {} on a mesh", op.name(), needed));
    return false;
  }
  if (axes.empty()) {
    diags.error(axesAttr ? axesAttr->loc : op.loc,
                fmt::format("{} - axes must name at least one axis of @{}", op.name(), mesh->name));
    return false;
  }
  // The axes: of the mesh, and of the type the region changes.
  for (const AxisRef &a : axes) {
    Loc loc = a.loc.known() ? a.loc : op.loc;
    if (!mesh->findAxis(a.name)) {
      diags
          .error(loc, fmt::format("{} - unknown axis \"{}\" of @{}", op.name(), a.name, mesh->name))
          .note(mesh->loc, fmt::format("mesh @{} has axes {}", mesh->name,
                                       fmt::format("{}", fmt::join(mesh->axisNames(), ", "))));
      return false;
    }
    if (a.isSubAxis()) {
      diags.error(loc, fmt::format("{} - axes takes whole axes: {}", op.name(), a.str()));
      return false;
    }
    AxisType now = types.typeOf(*mesh, a.name);
    if ((now == AxisType::Auto) == autoAxes) {
      std::vector<AxisRef> rest;
      for (const AxisRef &b : axes)
        if (b.name != a.name)
          rest.push_back(b);
      diags
          .error(loc, fmt::format("{} - axis \"{}\" is already {} here", op.name(), a.name,
                                  axisTypeName(now)))
          .note(Loc{}, rest.empty()
                           ? fmt::format("drop the {}: its body needs no region", op.name())
                           : fmt::format("drop it: axes={}", axisSetText(rest)));
      return false;
    }
  }
  // The one sharding list each takes.
  const std::vector<Value *> &values =
      autoAxes ? std::vector<Value *>() : op.operands; // results filled below
  std::vector<Value *> results;
  for (const auto &r : op.results)
    results.push_back(r.get());
  const std::vector<Value *> &listed = autoAxes ? results : values;
  const Attribute *list = op.attr(needed);
  if (!list) {
    diags
        .error(op.loc,
               fmt::format("{} - {} required: {}", op.name(), needed,
                           autoAxes ? "each result is resharded to it, its type outside the region"
                                    : "each operand is resharded to it, its type inside the "
                                      "region"))
        .note(Loc{}, fmt::format("write {} after axes={}, e.g. {}={}", needed, axisSetText(axes),
                                 needed, exampleList(listed, *mesh, axes)));
    return false;
  }
  if (const NamedAttribute *wrong = op.namedAttr(other)) {
    diags
        .error(wrong->nameLoc,
               fmt::format("{} - takes no {}: {}", op.name(), other,
                           autoAxes ? "operands enter as they are, their axes made auto"
                                    : "results leave with the axes dropped from their types"))
        .note(Loc{}, autoAxes ? "reshard the operands before the region, or use explicit_axes"
                              : "reshard the results after the region, or use auto_axes");
    return false;
  }
  if (list->shardings.size() != listed.size()) {
    diags.error(list->loc, fmt::format("{} - {} count doesn't match {}: {} != {}", op.name(),
                                       needed, autoAxes ? "results" : "operands",
                                       list->shardings.size(), listed.size()));
    return false;
  }
  for (const Sharding &s : list->shardings)
    if (s.meshName != mesh->name) {
      diags.error(s.loc, fmt::format("{} - {} on another mesh: @{} vs @{}", op.name(), needed,
                                     s.meshName, mesh->name));
      return false;
    }
  if (!autoAxes)
    return true;
  // An auto_axes result's type outside: its explicit axes beyond the region's
  // are the body's to compute, not the out_sharding's to move.
  auto inRegion = [&](const std::string &name) {
    return std::any_of(axes.begin(), axes.end(), [&](const AxisRef &a) { return a.name == name; });
  };
  for (size_t i = 0; i < list->shardings.size(); ++i)
    for (const DimSharding &d : list->shardings[i].dims)
      for (const AxisRef &a : d.axes)
        if (!inRegion(a.name) && types.isExplicit(*mesh, a.name)) {
          std::vector<AxisRef> wider = axes;
          wider.push_back(AxisRef{a.name, 0, 0, {}});
          diags
              .error(a.loc.known() ? a.loc : list->loc,
                     fmt::format("auto_axes - out_shardings {} names explicit axis \"{}\" "
                                 "outside the region's axes={}",
                                 i, a.name, axisSetText(axes)))
              .note(Loc{}, fmt::format("add it to the region, axes={}, or reshard the result "
                                       "after the region",
                                       axisSetText(wider)));
          return false;
        }
  return true;
}

} // namespace shardc::verify
