// partition: rewrites each function into the per-device (SPMD) form of
// ../../notes contract section 1: a manual_computation over every axis of a
// mesh per run of ops on that mesh, local shapes, collectives, padding masks.
//
// 1. Split the function's ops into runs on one mesh; a reshard from one
//    mesh to another stays a global op between runs (its movement is
//    planned and reported, ReshardPlanner.h).
// 2. Per run: its operands are the global values it uses from outside, its
//    results the values used after it; in/out shardings are theirs.
// 3. Inside, every op is emitted on local values (partition_ops.cpp, user
//    manual_computations inlined by partition_manual.cpp).
// 4. A returned value whose sharding differs from the function's declared
//    result sharding is resharded first, like any reshard.
// 5. A returned value that no run computes (a parameter returned as it is,
//    a reshard's result from another mesh) goes through the last run on its
//    mesh, or a run of no ops: each mesh's values leave through a
//    manual_computation, an identity function's too.
#include "passes/partition/Partition.h"
#include "passes/partition/PartitionInternal.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <unordered_map>
#include <unordered_set>

namespace shardc {
namespace {

using partition::Body;
using partition::Local;
using partition::NameTable;
using partition::PartitionCaches;
using partition::Unsupported;

/// Calls `fn` on every value `op` reads: its operands and what its regions
/// use, including values defined inside them.
void forEachUse(const Op &op, const std::function<void(const Value *)> &fn) {
  for (const Value *v : op.operands)
    fn(v);
  for (Block *region : op.regions()) {
    for (const auto &inner : region->ops)
      forEachUse(*inner, fn);
    for (const Value *v : region->returned)
      fn(v);
  }
}

/// Every value defined inside `op`'s regions (arguments and results).
void definedInside(const Op &op, std::unordered_set<const Value *> &out) {
  for (Block *region : op.regions()) {
    for (const auto &arg : region->args)
      out.insert(arg.get());
    for (const auto &inner : region->ops) {
      for (const auto &r : inner->results)
        out.insert(r.get());
      definedInside(*inner, out);
    }
  }
}

const std::string *meshOf(const Op &op) {
  if (isControlFlow(op.kind) && op.results.empty()) {
    // No results: the mesh of the first op inside that has one (a nested
    // loop or branch without results has its own ops').
    const std::string *found = nullptr;
    for (Block *region : op.regions())
      for (const auto &inner : region->ops)
        if (!found)
          found = meshOf(*inner);
    if (!found && op.kind == OpKind::If && op.operands[0]->sharding)
      found = &op.operands[0]->sharding->meshName;
    return found;
  }
  if (op.kind == OpKind::ManualComputation) {
    ManualComputationParts parts = manualComputationParts(op);
    if (!parts.inShardings.empty())
      return &parts.inShardings[0].meshName;
    if (!parts.outShardings.empty())
      return &parts.outShardings[0].meshName;
    return nullptr;
  }
  const Value *r = op.results.empty() ? nullptr : op.result();
  return r && r->sharding ? &r->sharding->meshName : nullptr;
}

bool crossesMeshes(const Op &op) {
  if (op.kind != OpKind::Reshard || op.operands.empty() || !op.operands[0]->sharding)
    return false;
  const std::string *mesh = meshOf(op);
  return mesh && *mesh != op.operands[0]->sharding->meshName;
}

class FunctionPartitioner {
public:
  FunctionPartitioner(const Module &module, Function &f, CollectiveReport *report,
                      const PartitionOptions &options)
      : module_(module), f_(f), report_(report), options_(options) {}

  void run() {
    // Rejected before anything is rewritten: the module stays whole.
    for (const auto &op : f_.body.ops)
      if (const std::string *mesh = meshOf(*op))
        checkRegionsOnMesh(*op, *mesh);
    walkOps(f_.body, [&](Op &op) {
      for (const auto &r : op.results)
        names_.reserve(r->name);
      if (op.body)
        for (const auto &a : op.body->args)
          names_.reserve(a->name);
    });
    for (const auto &a : f_.body.args)
      names_.reserve(a->name);
    old_ = std::move(f_.body.ops);
    f_.body.ops.clear();
    reshardReturns();
    std::vector<Run> runs;
    for (size_t i = 0; i < old_.size();) {
      const Op &op = *old_[i];
      if (crossesMeshes(op)) {
        runs.push_back(Run{i, i + 1, nullptr, {}});
        ++i;
        continue;
      }
      const std::string *mesh = meshOf(op);
      if (!mesh)
        throw Unsupported(op.loc, fmt::format("{} - cannot partition: its result has no "
                                              "sharding",
                                              op.name()));
      size_t end = i + 1;
      while (end < old_.size() && !crossesMeshes(*old_[end]) && meshOf(*old_[end]) &&
             *meshOf(*old_[end]) == *mesh)
        ++end;
      runs.push_back(Run{i, end, mesh, {}});
      i = end;
    }
    passReturnedThroughRuns(runs);
    for (const Run &run : runs) {
      if (run.mesh)
        emitRun(run.begin, run.end, *run.mesh, run.passThrough);
      else
        emitCrossMesh(*old_[run.begin]);
    }
    for (Value *&v : f_.body.returned)
      v = global(v);
    kept_.insert(kept_.end(), std::make_move_iterator(old_.begin()),
                 std::make_move_iterator(old_.end()));
  }

  /// The old ops (their values are referenced by nothing new, but the
  /// module owns them until it dies).
  std::vector<std::unique_ptr<Op>> kept_;

private:
  const Module &module_;
  Function &f_;
  CollectiveReport *report_;
  PartitionCaches caches_; // Body::caches
  PartitionOptions options_;
  NameTable names_;
  std::vector<std::unique_ptr<Op>> old_;
  std::unordered_map<const Value *, Value *> globals_;
  /// The last of old_ that uses each value (forEachUse), so that finding a
  /// run's results does not scan the ops after it once per value, and a
  /// run drops each local after its last use.
  std::unordered_map<const Value *, size_t> lastUse_;
  bool lastUseKnown_ = false;

  /// lastUse_, filled on the first call.
  const std::unordered_map<const Value *, size_t> &lastUses() {
    if (!lastUseKnown_) {
      lastUse_.reserve(old_.size());
      for (size_t i = 0; i < old_.size(); ++i)
        forEachUse(*old_[i], [&](const Value *used) { lastUse_[used] = i; });
      lastUseKnown_ = true;
    }
    return lastUse_;
  }

  /// Whether an op after `end` uses `v`, or the function returns it.
  bool usedLater(const Value *v, size_t end) {
    if (end < old_.size())
      lastUses();
    auto last = lastUse_.find(v);
    return (last != lastUse_.end() && last->second >= end) ||
           std::find(f_.body.returned.begin(), f_.body.returned.end(), v) != f_.body.returned.end();
  }

  /// The ops [begin, end) on one mesh (null: a reshard between meshes),
  /// and the returned values the run hands back unchanged.
  struct Run {
    size_t begin, end;
    const std::string *mesh;
    std::vector<const Value *> passThrough;
  };

  /// A returned value that no run on its mesh computes (a parameter, a
  /// reshard's result from another mesh) still leaves through a
  /// manual_computation on its mesh, so --emit=spmd shows every returned
  /// value as a per-device one (an identity function too): the last run on
  /// its mesh after its definition takes it, else a run of no ops at the end.
  void passReturnedThroughRuns(std::vector<Run> &runs) {
    for (const Value *v : f_.body.returned) {
      if (!v || !v->sharding || !module_.findMesh(v->sharding->meshName))
        continue;
      size_t definedBy = 0; // runs[definedBy - 1] defines v (0: a parameter)
      bool inRun = false;
      for (size_t r = 0; r < runs.size() && v->definingOp; ++r)
        for (size_t i = runs[r].begin; i < runs[r].end; ++i)
          if (old_[i].get() == v->definingOp) {
            definedBy = r + 1;
            inRun = runs[r].mesh != nullptr;
          }
      if (inRun)
        continue;
      Run *last = nullptr;
      for (size_t r = definedBy; r < runs.size(); ++r)
        if (runs[r].mesh && *runs[r].mesh == v->sharding->meshName)
          last = &runs[r];
      if (!last) {
        runs.push_back(Run{old_.size(), old_.size(), &v->sharding->meshName, {}});
        last = &runs.back();
      }
      if (std::find(last->passThrough.begin(), last->passThrough.end(), v) ==
          last->passThrough.end())
        last->passThrough.push_back(v);
    }
  }

  Value *global(const Value *v) {
    auto it = globals_.find(v);
    return it != globals_.end() ? it->second : const_cast<Value *>(v);
  }

  const Mesh &findMesh(const std::string &name, Loc loc) const {
    const Mesh *mesh = module_.findMesh(name);
    if (!mesh)
      throw Unsupported(loc, "unknown mesh @" + name);
    return *mesh;
  }

  /// Step 4: returned values not in the declared result sharding go through
  /// a reshard op of their own.
  void reshardReturns() {
    for (size_t i = 0; i < f_.body.returned.size() && i < f_.results.size(); ++i) {
      Value *v = f_.body.returned[i];
      const auto &want = f_.results[i].sharding;
      if (!v || !want || !v->sharding || sameLayout(*v->sharding, *want))
        continue;
      auto op = std::make_unique<Op>();
      op->kind = OpKind::Reshard;
      op->loc = f_.body.returnLoc.known() ? f_.body.returnLoc : f_.loc;
      op->operands = {v};
      Attribute s;
      s.kind = Attribute::Kind::Sharding;
      s.shardings = {*want};
      op->attrs.push_back(NamedAttribute{"sharding", s, {}});
      auto result = std::make_unique<Value>();
      result->name = names_.fresh(v->name + "_out");
      result->type = v->type;
      result->sharding = *want;
      result->definingOp = op.get();
      op->results.push_back(std::move(result));
      f_.body.returned[i] = op->result();
      old_.push_back(std::move(op));
    }
  }

  void emitCrossMesh(const Op &op) {
    const Value &in = *op.operands[0];
    const Value &out = *op.result();
    ReshardRequest request;
    request.type = in.type;
    request.sourceMesh = &findMesh(in.sharding->meshName, op.loc);
    request.source = *in.sharding;
    request.targetMesh = &findMesh(out.sharding->meshName, op.loc);
    request.target = *out.sharding;
    ReshardPlan plan;
    try {
      plan = planReshard(request);
    } catch (const std::invalid_argument &e) {
      throw Unsupported(op.loc, std::string("reshard - cannot partition: ") + e.what());
    }
    if (report_)
      for (const ReshardStep &step : plan.steps)
        report_->add(
            op.loc, step,
            fmt::format("reshard @{} -> @{}", request.sourceMesh->name, request.targetMesh->name));
    auto copy = std::make_unique<Op>();
    copy->kind = OpKind::Reshard;
    copy->loc = op.loc;
    copy->operands = {global(&in)};
    copy->operandLocs = op.operandLocs;
    copy->attrs = op.attrs;
    copy->results.push_back(newGlobal(out, copy.get()));
    globals_[&out] = copy->result();
    f_.body.ops.push_back(std::move(copy));
  }

  /// Where `v` is first used among the ops [begin, end).
  Loc usedAt(const Value *v, size_t begin, size_t end, Loc fallback) const {
    for (size_t i = begin; i < end; ++i)
      for (size_t k = 0; k < old_[i]->operands.size(); ++k)
        if (old_[i]->operands[k] == v)
          return k < old_[i]->operandLocs.size() ? old_[i]->operandLocs[k] : old_[i]->loc;
    return fallback;
  }

  /// A value used on another mesh than its own moves there, replicated
  /// (shardings never cross meshes, so the user's op decides its layout on
  /// that mesh): a global reshard, planned and reported like a written one.
  Value *implicitReshard(const Value &in, const Mesh &target, Loc loc) {
    ReshardRequest request;
    request.type = in.type;
    request.sourceMesh = &findMesh(in.sharding->meshName, loc);
    request.source = *in.sharding;
    request.targetMesh = &target;
    request.target = Sharding::replicatedOn(target.name, in.type.rank());
    ReshardPlan plan;
    try {
      plan = planReshard(request);
    } catch (const std::invalid_argument &e) {
      throw Unsupported(loc, std::string("cannot partition: implicit reshard: ") + e.what());
    }
    if (report_)
      for (const ReshardStep &step : plan.steps)
        report_->add(loc, step,
                     fmt::format("%{} used on @{}: implicit reshard from @{}", in.name, target.name,
                                 request.sourceMesh->name));
    auto op = std::make_unique<Op>();
    op->kind = OpKind::Reshard;
    op->loc = loc;
    op->operands = {global(&in)};
    op->operandLocs = {loc};
    Attribute attr;
    attr.kind = Attribute::Kind::Sharding;
    attr.shardings = {request.target};
    op->attrs.push_back(NamedAttribute{"sharding", attr, {}});
    auto result = std::make_unique<Value>();
    result->name = names_.fresh(in.name + "_on_" + target.name);
    result->type = in.type;
    result->writtenType = in.type;
    result->sharding = request.target;
    result->loc = loc;
    result->definingOp = op.get();
    op->results.push_back(std::move(result));
    Value *moved = op->result();
    f_.body.ops.push_back(std::move(op));
    return moved;
  }

  /// Control flow runs inside one per-device body: every op in its regions
  /// must be on that body's mesh.
  static void checkRegionsOnMesh(const Op &op, const std::string &meshName) {
    if (!isControlFlow(op.kind))
      return;
    for (Block *region : op.regions())
      walkOps(*region, [&](Op &inner) {
        const std::string *mesh = meshOf(inner);
        if (mesh && *mesh != meshName)
          throw partition::NotSupported(
              inner.loc,
              fmt::format("{} - its result is on mesh @{}, inside a {} on mesh @{}: values "
                          "move between meshes only outside loops and branches",
                          inner.name(), *mesh, op.name(), meshName),
              op.loc,
              fmt::format("the {} is here; move the value to @{} before it, or back after "
                          "it",
                          op.name(), *mesh));
      });
  }

  std::unique_ptr<Value> newGlobal(const Value &old, Op *definingOp) {
    auto v = std::make_unique<Value>();
    v->name = old.name;
    v->type = old.type;
    v->writtenType = old.type;
    v->sharding = old.sharding;
    v->loc = old.loc;
    v->definingOp = definingOp;
    return v;
  }

  /// `passThrough`: returned values defined before the run on its mesh that
  /// it returns unchanged (a run of no ops has only those).
  void emitRun(size_t begin, size_t end, const std::string &meshName,
               const std::vector<const Value *> &passThrough) {
    Loc firstLoc = begin < end                 ? old_[begin]->loc
                   : f_.body.returnLoc.known() ? f_.body.returnLoc
                                               : f_.loc;
    const Mesh &mesh = findMesh(meshName, firstLoc);
    // Operands: values used in the run and defined before it.
    std::unordered_set<const Op *> inRun(end - begin);
    for (size_t i = begin; i < end; ++i)
      inRun.insert(old_[i].get());
    std::vector<const Value *> inputs, outputs;
    std::unordered_set<const Value *> inside; // defined in the regions of the run's ops
    for (size_t i = begin; i < end; ++i) {
      definedInside(*old_[i], inside);
      checkRegionsOnMesh(*old_[i], meshName);
    }
    auto definedInRun = [&](const Value *v) {
      return (v->definingOp && inRun.count(v->definingOp)) || inside.count(v);
    };
    std::unordered_set<const Value *> isInput; // inputs, for a lookup per use
    for (size_t i = begin; i < end; ++i)
      forEachUse(*old_[i], [&](const Value *operand) {
        if (operand && !definedInRun(operand) && isInput.insert(operand).second)
          inputs.push_back(operand);
      });
    for (const Value *v : passThrough)
      if (isInput.insert(v).second)
        inputs.push_back(v);
    // Results: values of the run used after it or returned.
    for (size_t i = begin; i < end; ++i)
      for (const auto &r : old_[i]->results)
        if (usedLater(r.get(), end))
          outputs.push_back(r.get());
    outputs.insert(outputs.end(), passThrough.begin(), passThrough.end());

    auto mc = std::make_unique<Op>();
    mc->kind = OpKind::ManualComputation;
    mc->loc = firstLoc;
    mc->body = std::make_unique<Block>();
    mc->body->hasReturn = true;
    Attribute ins, outs, axes;
    ins.kind = outs.kind = Attribute::Kind::ShardingList;
    axes.kind = Attribute::Kind::AxisSet;
    for (const MeshAxis &axis : mesh.axes)
      axes.axes.push_back(AxisRef{axis.name, 0, 0, {}});
    Body body{module_, mesh, *mc->body, names_, report_, {}, &caches_, options_, {}};
    for (const Value *input : inputs) {
      if (!input->sharding)
        throw Unsupported(firstLoc,
                          fmt::format("cannot partition: %{} is used on mesh @{} but lives on "
                                      "no mesh; write a reshard",
                                      input->name, meshName));
      Value *operand = input->sharding->meshName == meshName
                           ? global(input)
                           : implicitReshard(*input, mesh, usedAt(input, begin, end, firstLoc));
      Sharding s = *operand->sharding;
      for (DimSharding &d : s.dims)
        d.open = false, d.priority.reset();
      ins.shardings.push_back(s);
      mc->operands.push_back(operand);
      mc->operandLocs.push_back(firstLoc);
      auto arg = std::make_unique<Value>();
      arg->name = names_.fresh(input->name + "_local");
      arg->type = TensorType{localShape(input->type.shape, s, mesh), input->type.dtype};
      arg->writtenType = arg->type;
      arg->loc = firstLoc;
      body.locals[input] = Local{arg.get(), s, {}, "sum"};
      mc->body->args.push_back(std::move(arg));
    }
    // A value's local is dropped after the last op that uses it (unless the
    // run returns it): body.locals holds the live values only, not one entry
    // (some 500 bytes with its layout) per value of the function, and a
    // loop's body copies fewer.
    const std::unordered_map<const Value *, size_t> &lastUse = lastUses();
    std::unordered_set<const Value *> isOutput(outputs.begin(), outputs.end());
    auto dropIfDead = [&](const Value *v, size_t i) {
      auto last = lastUse.find(v);
      if ((last == lastUse.end() || last->second == i) && !isOutput.count(v))
        body.locals.erase(v);
    };
    for (size_t i = begin; i < end; ++i) {
      const Op &op = *old_[i];
      if (op.kind == OpKind::ManualComputation)
        partition::partitionManual(body, op);
      else
        partition::partitionOp(body, op);
      forEachUse(op, [&](const Value *used) { dropIfDead(used, i); });
      for (const auto &r : op.results)
        dropIfDead(r.get(), i);
    }
    for (const Value *output : outputs) {
      outs.shardings.push_back(*output->sharding);
      mc->body->returned.push_back(body.local(output, firstLoc).value);
      mc->body->returnedLocs.push_back(firstLoc);
      mc->results.push_back(newGlobal(*output, mc.get()));
      // A value handed back unchanged is defined before the run already.
      if (std::find(passThrough.begin(), passThrough.end(), output) != passThrough.end())
        mc->results.back()->name = names_.fresh(output->name);
      mc->results.back()->resultIndex = static_cast<int>(mc->results.size() - 1);
      globals_[output] = mc->results.back().get();
    }
    mc->attrs.push_back(NamedAttribute{"in_shardings", ins, {}});
    mc->attrs.push_back(NamedAttribute{"out_shardings", outs, {}});
    mc->attrs.push_back(NamedAttribute{"manual_axes", axes, {}});
    if (!outputs.empty())
      f_.body.ops.push_back(std::move(mc));
  }
};

} // namespace

bool partitionModule(Module &module, DiagnosticEngine &diags, CollectiveReport *report,
                     const PartitionOptions &options) {
  for (auto &f : module.functions) {
    if (!hasAnySharding(*f))
      continue; // already its own per-device program
    FunctionPartitioner partitioner(module, *f, report, options);
    try {
      partitioner.run();
    } catch (const partition::NotSupported &e) {
      diags.error(e.loc, e.what()).note(e.noteLoc, e.note);
      return false;
    } catch (const Unsupported &e) {
      // The checks accepted the program: what the partitioner cannot do is
      // a bug of shardc's, never the user's (exit 3, not 1).
      throw InternalError(e.loc, e.what());
    }
    module.retiredOps.insert(module.retiredOps.end(),
                             std::make_move_iterator(partitioner.kept_.begin()),
                             std::make_move_iterator(partitioner.kept_.end()));
  }
  return !diags.hasErrors();
}

bool partitionModule(Module &module, DiagnosticEngine &diags) {
  return partitionModule(module, diags, nullptr);
}

} // namespace shardc
