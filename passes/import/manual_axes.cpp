// The import stage's manual axes (Import.h), as Shardy's
// sdy-manual-axes-cleanup sorts them: manual_axes={"y", "x"} on a mesh
// <["x"=2, "y"=4]> becomes {"x", "y"}. The verifier takes the list in any
// order (as Shardy's does); every stage after this one reads it in mesh order.
#include "passes/import/Import.h"

namespace shardc {

void sortManualAxes(Module &module) {
  walkBlocks(module, [&](Block &block) {
    for (auto &op : block.ops) {
      if (op->kind != OpKind::ManualComputation)
        continue;
      ManualComputationParts parts = manualComputationParts(*op);
      const Sharding *any = !parts.inShardings.empty()    ? &parts.inShardings.front()
                            : !parts.outShardings.empty() ? &parts.outShardings.front()
                                                          : nullptr;
      const Mesh *mesh = any ? module.findMesh(any->meshName) : nullptr;
      if (!mesh)
        continue;
      for (NamedAttribute &a : op->attrs)
        if (a.name == attrs::manualAxes.name)
          canonicalizeReplicated(a.value.axes, *mesh); // mesh order
    }
  });
}

} // namespace shardc
