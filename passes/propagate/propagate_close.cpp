// propagate-shardings, step 5: Shardy's export (sdy-close-shardings) once
// the rounds are done. Every dim is closed and loses its priority, the
// replicated axes (which only kept propagation off them) are dropped, and
// the shardings that are not a typed value's follow: a manual_computation's
// in/out shardings take what propagation gave their free axes, a
// sharding_constraint or reshard states its result's sharding. A value no
// sharding reached is replicated when the program has exactly one mesh with
// axes; with several, on the one mesh its sharded neighbours share, if they
// do, else it keeps none.
#include "passes/propagate/PropagateInternal.h"

#include <string>
#include <unordered_map>
#include <vector>

namespace shardc::propagation {
namespace {

/// With several meshes a value propagation did not reach keeps no sharding
/// (replicated, on no mesh in particular). A sharding_constraint on it now
/// states a closed sharding, which importing the printed program would
/// copy onto it (applyShardingConstraints) where the open one written was
/// not copied: the value is given its replicated layout on the
/// constraint's mesh instead, so that propagating the printed program
/// again changes nothing.
void replicateConstrainedOperands(Block &b) {
  for (auto &op : b.ops) {
    if (op->kind != OpKind::ShardingConstraint || op->operands.size() != 1)
      continue;
    Value *in = op->operands[0];
    const Attribute *attr = op->attr(attrs::sharding);
    if (in && in->typeKnown && !in->sharding && attr && attr->shardings.size() == 1)
      in->sharding = Sharding::replicatedOn(attr->shardings[0].meshName, in->type.rank());
  }
}

/// Shardy's export (sdy-close-shardings): every dim closed, no priorities,
/// and no replicated axes, which only kept propagation off them.
void closeSharding(Sharding &sharding) {
  for (DimSharding &dim : sharding.dims) {
    dim.open = false;
    dim.priority.reset();
  }
  sharding.replicated.clear();
}

/// With several meshes, the mesh of each value no sharding reached that is
/// joined, through the edges (ops, data-flow edges) and through other such
/// values, to sharded tensors on exactly one mesh: its neighbours disagreed
/// (a conflict left it nothing), and replicated on their mesh is what one
/// mesh would give it. Left without a sharding, it would be open to the
/// next propagation of the printed program, which sees the conflict
/// settled (its neighbours closed) and may shard it.
std::unordered_map<const Storage *, std::string> meshesOfUnreached(const Graph &graph) {
  auto eachSlot = [](const Edge &edge, const auto &visit) {
    for (const std::vector<Slot> *slots : {&edge.operands, &edge.results})
      for (const Slot &slot : *slots)
        visit(slot);
  };
  std::vector<const Edge *> edges;
  std::unordered_map<const Storage *, std::vector<size_t>> edgesOf; // of unreached values
  for (const std::vector<Edge> &list : graph.functions)
    for (const Edge &edge : list) {
      eachSlot(edge, [&](const Slot &slot) {
        if (!*slot.sharding)
          edgesOf[slot.sharding].push_back(edges.size());
      });
      edges.push_back(&edge);
    }
  std::unordered_map<const Storage *, std::string> meshOf; // "" = several
  auto meshOfSlot = [&](const Slot &slot) -> const std::string * {
    if (*slot.sharding)
      return (**slot.sharding).meshName.empty() ? nullptr : &(**slot.sharding).meshName;
    auto it = meshOf.find(slot.sharding);
    return it == meshOf.end() ? nullptr : &it->second;
  };
  // A worklist of edges: an unreached value's mesh is set at most once and
  // cleared ("several") at most once, and each change revisits its edges.
  std::vector<size_t> work(edges.size());
  std::vector<bool> queued(edges.size(), true);
  for (size_t e = 0; e < edges.size(); ++e)
    work[e] = edges.size() - 1 - e; // popped from the back: program order
  while (!work.empty()) {
    const Edge &edge = *edges[work.back()];
    queued[work.back()] = false;
    work.pop_back();
    std::string mesh;
    bool several = false, any = false;
    eachSlot(edge, [&](const Slot &slot) {
      if (const std::string *name = meshOfSlot(slot)) {
        several = several || name->empty() || (any && *name != mesh);
        mesh = *name;
        any = true;
      }
    });
    if (!any)
      continue;
    eachSlot(edge, [&](const Slot &slot) {
      if (*slot.sharding)
        return;
      auto [it, fresh] = meshOf.emplace(slot.sharding, several ? "" : mesh);
      if (!fresh && (it->second.empty() || (!several && it->second == mesh)))
        return; // unchanged
      if (!fresh)
        it->second.clear();
      for (size_t e : edgesOf[slot.sharding])
        if (!queued[e]) {
          queued[e] = true;
          work.push_back(e);
        }
    });
  }
  return meshOf;
}

} // namespace

void closeShardings(Module &module, const std::vector<Storage *> &storage,
                    const std::vector<size_t> &ranks, const Graph &graph) {
  const Mesh *single = nullptr;
  int meshesWithAxes = 0;
  for (const auto &mesh : module.meshes)
    if (!mesh->isEmpty() && !mesh->isMaximal()) {
      single = mesh.get();
      ++meshesWithAxes;
    }
  std::unordered_map<const Storage *, std::string> unreachedMesh;
  if (meshesWithAxes > 1) {
    // First the constrained operands, whose mesh then spreads like any.
    walkBlocks(module, [](Block &b) { replicateConstrainedOperands(b); });
    unreachedMesh = meshesOfUnreached(graph);
  }
  for (size_t i = 0; i < storage.size(); ++i) {
    Storage *s = storage[i];
    if (!*s) {
      if (meshesWithAxes == 1) {
        *s = Sharding::replicatedOn(single->name, ranks[i]);
      } else if (auto it = unreachedMesh.find(s); it != unreachedMesh.end()) {
        const Mesh *mesh = module.findMesh(it->second);
        if (mesh && !mesh->isEmpty() && !mesh->isMaximal())
          *s = Sharding::replicatedOn(it->second, ranks[i]);
      }
      continue;
    }
    closeSharding(**s);
  }
  // The shardings that are not a typed value's. manual_computation in/out
  // shardings get what propagation added; a sharding_constraint or reshard
  // now states its result's sharding (as in Shardy, where the op's
  // attribute is that sharding); untyped seed declarations and sharded
  // types are closed as written.
  for (const AttributeSharding &a : graph.attributeShardings) {
    *a.written = **a.working;
    closeSharding(*a.written);
  }
  auto closeBlock = [&](Block &b) {
    for (auto &arg : b.args)
      if (!arg->typeKnown && arg->sharding)
        closeSharding(*arg->sharding);
    for (auto &op : b.ops) {
      bool constraint = op->kind == OpKind::ShardingConstraint || op->kind == OpKind::Reshard;
      for (NamedAttribute &attr : op->attrs)
        for (Sharding &s : attr.value.shardings) {
          if (constraint && attr.name == attrs::sharding.name && op->results.size() == 1 &&
              op->results[0]->sharding)
            s = *op->results[0]->sharding;
          closeSharding(s);
        }
    }
  };
  walkBlocks(module, closeBlock);
  for (ShardedTypeDecl &decl : module.typeDecls)
    closeSharding(decl.sharding);
}

} // namespace shardc::propagation
