// The import stage's manual axes (Import.h), as Shardy's
// sdy-manual-axes-cleanup sorts them: manual_axes={"y", "x"} on a mesh
// <["x"=2, "y"=4]> becomes {"x", "y"}. The verifier takes the list in any
// order (as Shardy's does); every stage after this one reads it in mesh order.
#include "passes/import/Import.h"

#include <algorithm>

namespace shardc {
namespace {

void sortBlock(Module &module, Block &block) {
  for (auto &op : block.ops) {
    if (op->kind == OpKind::ManualComputation) {
      ManualComputationParts parts = manualComputationParts(*op);
      const Sharding *any = !parts.inShardings.empty()    ? &parts.inShardings.front()
                            : !parts.outShardings.empty() ? &parts.outShardings.front()
                                                          : nullptr;
      const Mesh *mesh = any ? module.findMesh(any->meshName) : nullptr;
      for (NamedAttribute &a : op->attrs)
        if (mesh && a.name == attrs::manualAxes.name)
          std::stable_sort(a.value.axes.begin(), a.value.axes.end(),
                           [&](const AxisRef &x, const AxisRef &y) {
                             return mesh->axisIndex(x.name) < mesh->axisIndex(y.name);
                           });
    }
    for (Block *region : op->regions())
      sortBlock(module, *region);
  }
}

} // namespace

void sortManualAxes(Module &module) {
  sortBlock(module, module.snippet.body);
  for (auto &f : module.functions)
    sortBlock(module, f->body);
}

} // namespace shardc
