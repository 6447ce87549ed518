// export: the last step before partitioning (Shardy's export pipeline).
// Closes every open dim and drops priorities, so each value has exactly one
// layout; a value propagation left without a sharding (a program with one
// mesh) gets the replicated one. The per-op choice of axes for each factor
// is made where it is used, by export_assignment.cpp.
#include "passes/Passes.h"

namespace shardc {
namespace {

void close(std::optional<Sharding> &sharding) {
  if (!sharding)
    return;
  for (DimSharding &dim : sharding->dims) {
    dim.open = false;
    dim.priority.reset();
  }
}

/// The program's single mesh with axes, or null.
const Mesh *onlyMesh(const Module &module) {
  const Mesh *only = nullptr;
  for (const auto &mesh : module.meshes) {
    if (mesh->axes.empty())
      continue;
    if (only)
      return nullptr;
    only = mesh.get();
  }
  return only;
}

} // namespace

bool exportShardings(Module &module, DiagnosticEngine &diags) {
  const Mesh *mesh = onlyMesh(module);
  auto fix = [&](Value &v) {
    if (!v.sharding && mesh && v.typeKnown)
      v.sharding = Sharding::replicatedOn(mesh->name, v.type.rank());
    close(v.sharding);
  };
  for (auto &f : module.functions) {
    bool anySharded = false;
    for (auto &arg : f->body.args)
      anySharded |= arg->sharding.has_value();
    walkOps(f->body, [&](Op &op) {
      for (auto &r : op.results)
        anySharded |= r->sharding.has_value();
    });
    if (!anySharded)
      continue; // no shardings at all: a single-device program
    for (auto &arg : f->body.args)
      fix(*arg);
    for (auto &op : f->body.ops)
      for (auto &r : op->results)
        fix(*r);
    for (ResultSpec &spec : f->results)
      close(spec.sharding);
  }
  return !diags.hasErrors();
}

} // namespace shardc
