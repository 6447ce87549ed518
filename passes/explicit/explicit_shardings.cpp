// explicit-shardings (`--explicit`): JAX sharding in types. Instead of
// propagation, every value's sharding is computed once, in program order, by
// its op's rule from its operands' closed shardings (the rules are in
// explicit_shardings_rules.cpp). Steps:
//   1. every written sharding must be closed and without priorities;
//   2. the default mesh: the program's single non-maximal mesh (unannotated
//      parameters are replicated on it, nullary ops created on it);
//   3. per function, in order: parameters, each op (its rule, or its written
//      out_sharding, which overrides the rule and resolves an ambiguity),
//      then the results: a written one must equal the returned value's
//      sharding, an unannotated one takes it.
// Example: %x [{"x"}, {}] and %w unannotated (replicated [{}, {}]):
//   %h = matmul %x, %w  ->  [{"x"}, {}];   %e = exp %h  ->  [{"x"}, {}].
#include "ir/AxisAlgebra.h"
#include "ir/Printer.h"
#include "passes/explicit/ExplicitShardings.h"
#include "passes/explicit/ExplicitShardingsInternal.h"

#include <fmt/format.h>

namespace shardc {
namespace {

using namespace explicit_shardings;

class ExplicitShardings {
public:
  ExplicitShardings(Module &module, DiagnosticEngine &diags,
                    const std::unordered_set<const Op *> &typedConstraints)
      : module_(module), diags_(diags), typedConstraints_(typedConstraints) {}

  void run() {
    checkWrittenShardings();
    if (diags_.hasErrors())
      return;
    chooseDefaultMesh();
    function(module_.snippet);
    for (auto &f : module_.functions)
      function(*f);
  }

private:
  // ---- 1. written shardings are closed ---------------------------------------------

  void checkClosed(const std::optional<Sharding> &sharding, const std::string &where) {
    if (!sharding)
      return;
    Sharding closed = *sharding;
    const DimSharding *open = nullptr;
    const DimSharding *priority = nullptr;
    for (size_t d = 0; d < closed.dims.size(); ++d) {
      if (closed.dims[d].open && !open)
        open = &sharding->dims[d];
      if (closed.dims[d].priority && !priority)
        priority = &sharding->dims[d];
      closed.dims[d].open = false;
      closed.dims[d].priority.reset();
    }
    if (!open && !priority)
      return;
    const DimSharding &dim = open ? *open : *priority;
    Loc loc = dim.loc.known() ? dim.loc : sharding->loc;
    std::string what = open ? "open dimension" : "priority";
    diags_
        .error(loc, fmt::format("{} - {} not allowed in --explicit mode: {}", where, what,
                                printSharding(*sharding)))
        .note(Loc{}, fmt::format("{}, e.g. {}", open ? "close the dimension" : "drop the priority",
                                 printSharding(closed)));
  }

  void checkWrittenShardings() {
    auto block = [&](Block &b, bool params) {
      for (auto &arg : b.args)
        checkClosed(arg->sharding, (params ? "parameter " : "") + valueName(*arg));
      walkOps(b, [&](Op &op) {
        for (auto &r : op.results)
          checkClosed(r->sharding, valueName(*r));
        for (Block *region : op.regions())
          for (auto &arg : region->args)
            checkClosed(arg->sharding, valueName(*arg));
        for (const NamedAttribute &a : op.attrs)
          for (size_t i = 0; i < a.value.shardings.size(); ++i)
            checkClosed(a.value.shardings[i], a.value.kind == Attribute::Kind::ShardingList
                                                  ? fmt::format("{} {} {}", op.name(), a.name, i)
                                                  : std::string(op.name()));
      });
    };
    auto function = [&](Function &f) {
      block(f.body, true);
      for (size_t i = 0; i < f.results.size(); ++i)
        checkClosed(f.results[i].sharding, fmt::format("result {} of @{}", i, f.name));
    };
    function(module_.snippet);
    for (auto &f : module_.functions)
      function(*f);
    for (const ShardedTypeDecl &decl : module_.typeDecls)
      checkClosed(decl.sharding, "sharded type");
  }

  // ---- 2. the default mesh -----------------------------------------------------------

  void chooseDefaultMesh() {
    std::vector<std::string> full;
    for (const auto &mesh : module_.meshes)
      if (!mesh->isMaximal() && !mesh->isEmpty())
        full.push_back(mesh->name);
    if (full.size() == 1)
      defaultMesh_ = full.front();
    else if (full.empty() && module_.meshes.size() == 1)
      defaultMesh_ = module_.meshes.front()->name;
    else if (!full.empty())
      for (const std::string &name : full)
        severalMeshes_ += (severalMeshes_.empty() ? "@" : ", @") + name;
    // No mesh at all: nothing can be sharded, values stay unannotated.
  }

  /// The mesh new replicated values go on: the enclosing manual_computation's,
  /// else the default mesh; reports (at `loc`) when there are several.
  std::optional<std::string> meshFor(Loc loc, const std::string &where,
                                     const std::string &example) {
    if (!manualMesh_.empty())
      return manualMesh_;
    if (!defaultMesh_.empty())
      return defaultMesh_;
    if (!severalMeshes_.empty())
      diags_
          .error(loc, fmt::format("{} - sharding required in --explicit mode with several "
                                  "meshes: {}",
                                  where, severalMeshes_))
          .note(Loc{}, example);
    return std::nullopt;
  }

  // ---- 3. functions and ops -----------------------------------------------------------

  void function(Function &f) {
    for (auto &arg : f.body.args) {
      if (arg->sharding || !arg->typeKnown)
        continue;
      std::string mesh = severalMeshes_.empty() ? defaultMesh_ : firstMesh();
      Sharding example = Sharding::replicatedOn(mesh, arg->type.rank());
      if (auto m = meshFor(arg->loc, "parameter " + valueName(*arg),
                           fmt::format("write a sharding, e.g. {}: {} {}", valueName(*arg),
                                       printType(arg->type), printSharding(example))))
        arg->sharding = Sharding::replicatedOn(*m, arg->type.rank());
    }
    block(f.body);
    for (size_t i = 0; i < f.body.returned.size() && i < f.results.size(); ++i) {
      Value *v = f.body.returned[i];
      ResultSpec &spec = f.results[i];
      if (!v || !v->sharding || spec.typeInvalid)
        continue;
      if (!spec.sharding) {
        spec.sharding = *v->sharding;
        continue;
      }
      if (sameLayout(*spec.sharding, *v->sharding))
        continue;
      Loc loc = i < f.body.returnedLocs.size() ? f.body.returnedLocs[i] : f.body.returnLoc;
      diags_
          .error(loc, fmt::format("return - operand {} sharding differs from result {} of @{}: "
                                  "{} vs {}",
                                  i, i, f.name, printSharding(*v->sharding),
                                  printSharding(*spec.sharding)))
          .note(Loc{}, "reshard before returning, e.g. " + exampleReshard(*v, *spec.sharding));
    }
  }

  std::string firstMesh() const {
    for (const auto &mesh : module_.meshes)
      if (!mesh->isMaximal() && !mesh->isEmpty())
        return mesh->name;
    return "";
  }

  void block(Block &b) {
    for (auto &op : b.ops)
      this->op(*op);
  }

  void op(Op &op) {
    for (Value *operand : op.operands)
      if (!operand || !operand->typeKnown || !operand->sharding)
        return; // an earlier error, or a program without meshes
    for (auto &r : op.results)
      if (!r->typeKnown)
        return;
    std::optional<Sharding> result;
    switch (opInfo(op.kind).group) {
    case OpGroup::Unary:
    case OpGroup::Convert:
    case OpGroup::Binary:
    case OpGroup::Contraction:
    case OpGroup::Reduction:
      result = inferFactorOp(op, module_, diags_);
      break;
    case OpGroup::Shape:
      result = op.kind == OpKind::Reshape ? inferReshape(op, module_, diags_)
                                          : inferFactorOp(op, module_, diags_);
      break;
    case OpGroup::Creation:
      result = nullary(op);
      break;
    case OpGroup::ShardingOp:
      result = shardingOp(op);
      break;
    case OpGroup::Manual:
      if (op.kind == OpKind::ManualComputation)
        manual(op);
      else
        axesRegion(op);
      return;
    case OpGroup::ControlFlow:
      controlFlow(op);
      return;
    case OpGroup::Collective:
      result = collective(op);
      break;
    }
    if (result && !op.results.empty()) {
      result->replicated.clear();
      op.result()->sharding = std::move(*result);
    }
  }

  /// for / while / if (calls are inlined before): a carried value has one
  /// sharding, its init's, or the loop result's when written (then the init
  /// must match); each region returns exactly it. An `if` result is its
  /// written sharding, else the then-branch's; both branches must return it.
  /// Each mismatch is an error whose note writes the reshard that fixes it.
  void controlFlow(Op &op) {
    std::vector<Sharding> carried;
    bool ok = true;
    if (op.kind != OpKind::If) {
      for (size_t i = 0; i < op.operands.size(); ++i) {
        Value &init = *op.operands[i];
        const std::optional<Sharding> &written =
            i < op.results.size() ? op.results[i]->sharding : std::nullopt;
        carried.push_back(written ? *written : *init.sharding);
        if (!written || sameLayout(*written, *init.sharding))
          continue;
        Loc loc = i < op.operandLocs.size() ? op.operandLocs[i] : op.loc;
        diags_
            .error(loc, fmt::format("{} - init {} of carried value {} is sharded {}, the loop "
                                    "result {}",
                                    op.name(), valueName(init), i, printSharding(*init.sharding),
                                    printSharding(*written)))
            .note(Loc{}, "a carried value keeps one sharding; reshard the init, e.g. " +
                             exampleReshard(init, *written));
        ok = false;
      }
      if (!ok)
        return;
      for (Block *region : op.regions()) {
        std::vector<Value *> args = Op::carriedArgs(op, *region);
        for (size_t i = 0; i < args.size() && i < carried.size(); ++i)
          args[i]->sharding = carried[i];
        if (op.kind == OpKind::For && region->args.size() > args.size()) {
          Value &index = *region->args.front();
          if (auto mesh = meshFor(op.loc, "for", "write shardings on the carried values"))
            index.sharding = Sharding::replicatedOn(*mesh, 0);
        }
        block(*region);
      }
      checkRegionReturns(op, *op.body, carried, "the body");
    } else {
      block(*op.body);
      block(*op.elseBody);
      for (size_t i = 0; i < op.results.size(); ++i) {
        const Value *then = i < op.body->returned.size() ? op.body->returned[i] : nullptr;
        if (op.results[i]->sharding)
          carried.push_back(*op.results[i]->sharding);
        else if (then && then->sharding)
          carried.push_back(*then->sharding);
        else
          return;
      }
      checkRegionReturns(op, *op.body, carried, "the then branch");
      checkRegionReturns(op, *op.elseBody, carried, "the else branch");
    }
    for (size_t i = 0; i < op.results.size() && i < carried.size(); ++i)
      op.results[i]->sharding = carried[i];
  }

  void checkRegionReturns(const Op &op, const Block &region, const std::vector<Sharding> &want,
                          const char *what) {
    for (size_t i = 0; i < region.returned.size() && i < want.size(); ++i) {
      const Value *v = region.returned[i];
      if (!v || !v->sharding || sameLayout(*v->sharding, want[i]))
        continue;
      Loc loc = i < region.returnedLocs.size() ? region.returnedLocs[i] : region.returnLoc;
      diags_
          .error(loc, fmt::format("{} - {} returns {} sharded {} for {} {}, which is {}", op.name(),
                                  what, valueName(*v), printSharding(*v->sharding),
                                  op.kind == OpKind::If ? "result" : "carried value", i,
                                  printSharding(want[i])))
          .note(Loc{}, "reshard before returning, e.g. " + exampleReshard(*v, want[i]));
    }
  }

  /// constant, iota, random_*: replicated unless an out_sharding is written.
  std::optional<Sharding> nullary(Op &op) {
    Value &r = *op.result();
    if (r.sharding)
      return r.sharding;
    std::string mesh = severalMeshes_.empty() ? defaultMesh_ : firstMesh();
    auto m = meshFor(op.loc, op.name(),
                     outShardingNote(op, Sharding::replicatedOn(mesh, r.type.rank())));
    if (!m)
      return std::nullopt;
    return Sharding::replicatedOn(*m, r.type.rank());
  }

  /// sharding_constraint asserts; reshard changes the sharding.
  std::optional<Sharding> shardingOp(Op &op) {
    const Attribute *attr = op.attr(attrs::sharding);
    if (!attr || attr->shardings.empty())
      return std::nullopt;
    const Sharding &target = attr->shardings.front();
    Value &operand = *op.operands[0];
    if (typedConstraints_.count(&op))
      return op.result()->sharding ? op.result()->sharding : operand.sharding;
    if (op.kind == OpKind::ShardingConstraint && !sameLayout(*operand.sharding, target)) {
      // On a mixed mesh (or inside explicit_axes) only some axes assert:
      // the note says which kind does what, not the global mode.
      const Mesh *mesh = module_.findMesh(target.meshName);
      std::string what =
          mesh && mesh->hasAutoAxis()
              ? fmt::format("on the explicit axes of @{} a sharding_constraint only asserts (on "
                            "its auto axes it constrains propagation); reshard changes the "
                            "explicit ones, e.g. ",
                            mesh->name)
              : fmt::format("every axis of @{} is explicit, so a sharding_constraint only "
                            "asserts; reshard changes the sharding, e.g. ",
                            target.meshName);
      diags_
          .error(op.loc, fmt::format("sharding_constraint - value's sharding differs from the "
                                     "constraint: {} vs {}",
                                     printSharding(*operand.sharding), printSharding(target)))
          .note(Loc{}, what + exampleReshard(operand, target));
      return std::nullopt;
    }
    return op.result()->sharding ? op.result()->sharding : target;
  }

  /// Operands must match in_shardings; the body sees them without the manual
  /// axes, and must return values sharded as out_shardings without them;
  /// results take out_shardings. Collectives in the body are not checked.
  void manual(Op &op) {
    ManualComputationParts parts = manualComputationParts(op);
    const std::vector<Sharding> &ins = parts.inShardings;
    const std::vector<Sharding> &outs = parts.outShardings;
    bool ok = true;
    for (size_t i = 0; i < op.operands.size() && i < ins.size(); ++i) {
      Value &operand = *op.operands[i];
      if (sameLayout(*operand.sharding, ins[i]))
        continue;
      Loc loc = i < op.operandLocs.size() ? op.operandLocs[i] : op.loc;
      diags_
          .error(loc, fmt::format("manual_computation - operand {} sharding differs from "
                                  "in_shardings {}: {} vs {}",
                                  i, i, printSharding(*operand.sharding), printSharding(ins[i])))
          .note(Loc{}, reshardNote(operand, ins[i]));
      ok = false;
    }
    if (!ok)
      return;
    if (op.body) {
      for (size_t i = 0; i < op.body->args.size() && i < ins.size(); ++i) {
        Value &arg = *op.body->args[i];
        if (!arg.sharding)
          arg.sharding = withoutManualAxes(ins[i], parts.manualAxes);
      }
      std::string saved = manualMesh_;
      if (!ins.empty())
        manualMesh_ = ins.front().meshName;
      else if (!outs.empty())
        manualMesh_ = outs.front().meshName;
      block(*op.body);
      manualMesh_ = saved;
      checkBodyResults(op, parts);
    }
    for (size_t i = 0; i < op.results.size() && i < outs.size(); ++i)
      if (!op.results[i]->sharding)
        op.results[i]->sharding = outs[i];
  }

  /// auto_axes / explicit_axes (mixed_axes.cpp restricts each sharding to
  /// the axes explicit where it is written: an auto_axes out_sharding
  /// outside the region, an explicit_axes in_sharding inside it). The
  /// region's axes are dropped from what crosses into an auto_axes body and
  /// out of an explicit_axes one; explicit axes outside the region must
  /// match on both sides.
  void axesRegion(Op &op) {
    const bool autoAxes = op.kind == OpKind::AutoAxes;
    std::vector<AxisRef> axes = op.get(attrs::axes, std::vector<AxisRef>{});
    std::vector<Sharding> list =
        op.get(autoAxes ? attrs::outShardings : attrs::inShardings, std::vector<Sharding>{});
    if (!op.body || list.size() != (autoAxes ? op.results.size() : op.operands.size()))
      return;
    for (size_t i = 0; i < op.operands.size() && i < op.body->args.size(); ++i) {
      Value &operand = *op.operands[i];
      Value &arg = *op.body->args[i];
      if (autoAxes) {
        arg.sharding = withoutManualAxes(*operand.sharding, axes);
        continue;
      }
      Sharding outside = withoutManualAxes(list[i], axes);
      if (!sameLayout(*operand.sharding, outside)) {
        Loc loc = i < op.operandLocs.size() ? op.operandLocs[i] : op.loc;
        diags_
            .error(loc, fmt::format("explicit_axes - in_shardings {} differs from operand {} on "
                                    "the axes explicit outside the region: {} vs {}",
                                    i, i, printSharding(outside), printSharding(*operand.sharding)))
            .note(Loc{}, "explicit axes move only by reshard: " + reshardNote(operand, outside) +
                             ", or change in_shardings " + std::to_string(i));
        return;
      }
      arg.sharding = list[i];
    }
    block(*op.body);
    const Block &body = *op.body;
    for (size_t i = 0; i < op.results.size() && i < body.returned.size(); ++i) {
      const Value *v = body.returned[i];
      if (!v || !v->sharding)
        continue;
      if (!autoAxes) {
        op.results[i]->sharding = withoutManualAxes(*v->sharding, axes);
        continue;
      }
      Sharding expected = withoutManualAxes(list[i], axes);
      if (!sameLayout(*v->sharding, expected)) {
        Loc loc = i < body.returnedLocs.size() ? body.returnedLocs[i] : body.returnLoc;
        diags_
            .error(loc, fmt::format("auto_axes - returned value {} ({}) differs from "
                                    "out_shardings {} on the axes explicit outside the region: "
                                    "{} vs {}",
                                    i, valueName(*v), i, printSharding(*v->sharding),
                                    printSharding(expected)))
            .note(Loc{}, fmt::format("change out_shardings {} to {}", i,
                                     printSharding(withFreeAxes(list[i], *v->sharding, axes))));
        continue;
      }
      op.results[i]->sharding = list[i];
    }
  }

  /// Each value the body returns must be sharded as its out_sharding without
  /// the manual axes (the body's view of the result).
  void checkBodyResults(const Op &op, const ManualComputationParts &parts) {
    const Block &body = *op.body;
    const std::vector<Sharding> &outs = parts.outShardings;
    for (size_t i = 0; i < body.returned.size() && i < outs.size(); ++i) {
      const Value *v = body.returned[i];
      if (!v || !v->sharding)
        continue;
      Sharding expected = withoutManualAxes(outs[i], parts.manualAxes);
      if (sameLayout(*v->sharding, expected))
        continue;
      Loc loc = i < body.returnedLocs.size() ? body.returnedLocs[i] : body.returnLoc;
      diags_
          .error(loc, fmt::format("manual_computation - returned value {} ({}) sharding differs "
                                  "from out_shardings {} without the manual axes {}: {} vs {}",
                                  i, valueName(*v), i, axisSet(parts.manualAxes),
                                  printSharding(*v->sharding), printSharding(expected)))
          .note(Loc{}, "reshard before returning, e.g. " + exampleReshard(*v, expected))
          .note(Loc{},
                fmt::format("or change out_shardings {} to {}", i,
                            printSharding(withFreeAxes(outs[i], *v->sharding, parts.manualAxes))));
    }
  }

  /// Per-device collectives (manual bodies): not checked; the result keeps
  /// the operand's sharding on every dim whose size the collective keeps.
  std::optional<Sharding> collective(Op &op) {
    Value &r = *op.result();
    if (r.sharding)
      return r.sharding;
    if (op.operands.empty()) {
      auto m = meshFor(op.loc, op.name(), outShardingNote(op, makeSharding(firstMesh(), {})));
      if (!m)
        return std::nullopt;
      return Sharding::replicatedOn(*m, r.type.rank());
    }
    const Value &in = *op.operands[0];
    Sharding s = *in.sharding;
    if (s.dims.size() != r.type.shape.size())
      return Sharding::replicatedOn(s.meshName, r.type.rank());
    for (size_t d = 0; d < s.dims.size(); ++d)
      if (in.type.shape[d] != r.type.shape[d])
        s.dims[d].axes.clear();
    return s;
  }

  Module &module_;
  DiagnosticEngine &diags_;
  std::string defaultMesh_;
  std::string severalMeshes_; // "@a, @b" when there is no single default mesh
  std::string manualMesh_;    // inside a manual_computation body
  const std::unordered_set<const Op *> &typedConstraints_;
};

} // namespace

bool inferExplicitShardings(Module &module, DiagnosticEngine &diags,
                            const std::unordered_set<const Op *> &typedConstraints) {
  // The pass assumes well-formed, typed, verified IR.
  if (diags.hasErrors())
    return false;
  ExplicitShardings(module, diags, typedConstraints).run();
  return !diags.hasErrors();
}

} // namespace shardc
