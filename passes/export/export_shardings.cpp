// export: the last step before partitioning (Shardy's export pipeline).
// Closes every open dim and drops priorities, so each value has exactly one
// layout; a value propagation left without a sharding gets the replicated
// one (with several meshes, on the mesh where it is made or used), and a
// function result declared without one takes its returned value's. The
// per-op choice of axes for each factor is made where it is used, by
// partition/partition_assignment.cpp.
#include "passes/export/Export.h"

#include <algorithm>
#include <functional>

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

/// A sharding on a maximal mesh may be written without dims
/// (`sharding<@on_dev3, []>`, Shardy's form): the partitioner wants one closed,
/// empty dim per tensor dim.
void fillMaximalDims(std::optional<Sharding> &sharding, size_t rank, const Module &module) {
  if (!sharding || !sharding->dims.empty() || rank == 0)
    return;
  const Mesh *mesh = module.findMesh(sharding->meshName);
  if (mesh && mesh->axes.empty())
    sharding->dims.assign(rank, DimSharding{});
}

/// A manual_computation's body computes each result on the mesh of its
/// out_sharding. A result that propagation gave a sharding on another mesh
/// (from a `reshard` to that mesh that consumes it) would claim its data is
/// where it is not: such a result takes its out_sharding, and the reshard
/// moves it across.
void keepOnOwnMesh(Op &op) {
  ManualComputationParts parts = manualComputationParts(op);
  for (size_t i = 0; i < op.results.size() && i < parts.outShardings.size(); ++i) {
    std::optional<Sharding> &sharding = op.results[i]->sharding;
    if (!sharding || sharding->meshName != parts.outShardings[i].meshName)
      sharding = parts.outShardings[i];
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

/// The first mesh with axes, else the first mesh, or null.
const Mesh *firstMesh(const Module &module) {
  for (const auto &mesh : module.meshes)
    if (!mesh->axes.empty())
      return mesh.get();
  // A program of one-device (or empty) meshes: the first of them.
  return module.meshes.empty() ? nullptr : module.meshes.front().get();
}

/// The mesh an op runs on, as far as its sharded operands and results tell.
const std::string *opMesh(const Op &op) {
  for (const Value *operand : op.operands)
    if (operand && operand->sharding)
      return &operand->sharding->meshName;
  for (const auto &r : op.results)
    if (r->sharding)
      return &r->sharding->meshName;
  return nullptr;
}

} // namespace

bool exportShardings(Module &module, DiagnosticEngine &diags) {
  // A value no sharding reached is replicated (Shardy): on the program's
  // only mesh; with several meshes, on the mesh of its op or of its first
  // user, else the first mesh. A use on another mesh is resharded there by
  // the partitioner.
  const Mesh *only = onlyMesh(module);
  const Mesh *fallback = firstMesh(module);
  auto meshFor = [&](const Value &v, const Block &block) -> std::string {
    if (only)
      return only->name;
    if (v.definingOp)
      if (const std::string *name = opMesh(*v.definingOp))
        return *name;
    for (const auto &op : block.ops)
      if (std::find(op->operands.begin(), op->operands.end(), &v) != op->operands.end())
        if (const std::string *name = opMesh(*op))
          return *name;
    return fallback ? fallback->name : "";
  };
  auto fix = [&](Value &v, const Block &block) {
    if (!v.sharding && v.typeKnown) {
      std::string mesh = meshFor(v, block);
      if (!mesh.empty())
        v.sharding = Sharding::replicatedOn(mesh, v.type.rank());
    }
    fillMaximalDims(v.sharding, v.type.rank(), module);
    close(v.sharding);
  };
  for (auto &f : module.functions) {
    if (!hasAnySharding(*f))
      continue; // no shardings at all: a single-device program
    for (auto &arg : f->body.args)
      fix(*arg, f->body);
    std::function<void(Block &)> fixOps = [&](Block &block) {
      for (auto &op : block.ops) {
        if (op->kind == OpKind::ManualComputation)
          keepOnOwnMesh(*op);
        for (auto &r : op->results)
          fix(*r, f->body);
        if (!isControlFlow(op->kind))
          continue;
        // A carried value has one sharding (Shardy's data-flow edge): every
        // region's argument for it takes the loop result's.
        for (Block *region : op->regions()) {
          std::vector<Value *> args = Op::carriedArgs(*op, *region);
          for (size_t i = 0; i < args.size(); ++i) {
            if (op->kind != OpKind::If && i < op->results.size())
              args[i]->sharding = op->results[i]->sharding;
            fix(*args[i], f->body);
          }
          if (op->kind == OpKind::For && !region->args.empty())
            fix(*region->args.front(), f->body);
          fixOps(*region);
        }
      }
    };
    fixOps(f->body);
    // A result declared without a sharding is where its value lives: the
    // partitioner then adds no reshard, and the executable's output is
    // described from the returned value's layout (on whichever mesh).
    for (size_t i = 0; i < f->results.size(); ++i) {
      ResultSpec &spec = f->results[i];
      if (!spec.sharding && i < f->body.returned.size() && f->body.returned[i])
        spec.sharding = f->body.returned[i]->sharding;
      fillMaximalDims(spec.sharding, spec.type.rank(), module);
      close(spec.sharding);
    }
  }
  return !diags.hasErrors();
}

} // namespace shardc
