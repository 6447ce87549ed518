// The compiler pipeline: source text -> IR -> checked IR -> sharded IR ->
// per-device IR -> LLVM IR -> object -> executable, one stage after another.
//
// Design: allStages() is the one description of the pipeline. Each stage
// takes the same PipelineState and reads its options from it (the origins
// recorder, the collective report, --explicit), so nothing here or in a
// caller compares function pointers or special-cases a pass. Modes are data:
// a stage is `enabled` under some options, and explicit-shardings
// `replaces` propagate-shardings. The back half is named here too, but runs
// through the Backend interface (Backend.h) that the caller supplies: the
// language server supplies none and links no LLVM.
#include "pipeline/Pipeline.h"

#include "frontend/Parser.h"
#include "ir/AxisTypes.h"
#include "ir/Printer.h"
#include "passes/Passes.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <utility>

namespace shardc {
namespace {

/// Where a run without --emit (--verify-only) stops: after the checks.
const char *const kLastCheckingStage = "verify-shardings";

struct EmitKind {
  const char *name;      // the --emit= value
  const char *lastStage; // the stage after which the module is printed
};

/// `--emit=ir` prints the checked program in canonical form; `--emit=sharded`
/// prints it after propagation, every value with a closed sharding;
/// `--emit=spmd` the per-device program after partitioning; `--emit=llvm`
/// its LLVM IR, optimized (Backend::printIR).
const EmitKind kEmitKinds[] = {
    {"ir", "verify-shardings"},
    {"sharded", "propagate-shardings"},
    {"spmd", "partition"},
    {"llvm", "optimize-llvm"},
};

const EmitKind &findEmitKind(std::string_view name) {
  for (const EmitKind &kind : kEmitKinds)
    if (name == kind.name)
      return kind;
  throw std::logic_error("unknown --emit kind '" + std::string(name) + "'");
}

/// Every sharding a pass may write on a value or a function result, with
/// what it holds now. `--emit=ir --explicit` runs explicit-shardings for its
/// checks, then puts these back so it still prints the checked program.
using ShardingSnapshot = std::vector<std::pair<std::optional<Sharding> *, std::optional<Sharding>>>;

ShardingSnapshot takeSnapshot(Module &module) {
  ShardingSnapshot snapshot;
  auto block = [&](Block &b) {
    for (auto &arg : b.args)
      snapshot.emplace_back(&arg->sharding, arg->sharding);
    for (auto &op : b.ops)
      for (auto &r : op->results)
        snapshot.emplace_back(&r->sharding, r->sharding);
  };
  walkBlocks(module, block);
  auto results = [&](Function &f) {
    for (ResultSpec &spec : f.results)
      snapshot.emplace_back(&spec.sharding, spec.sharding);
  };
  results(module.snippet);
  for (auto &f : module.functions)
    results(*f);
  return snapshot;
}

void restoreSnapshot(ShardingSnapshot &snapshot) {
  for (auto &[where, sharding] : snapshot)
    *where = std::move(sharding);
}

// ---- the stages' run functions ------------------------------------------------

bool parse(PipelineState &s) {
  // A syntax error ends the run here (the parser has recovered and reported
  // as many as it could). Name errors do not: the builder leaves out what it
  // could not build, so the IR stays well formed and the checks still find
  // every independent mistake.
  s.module = parseModule(s.file, s.diags);
  return s.module != nullptr;
}

/// A pass of passes/: it skips what an earlier error left without a type,
/// so every check runs and one run reports every mistake.
template <bool (*pass)(Module &, DiagnosticEngine &)> bool runPass(PipelineState &s) {
  pass(*s.module, s.diags);
  return true;
}

/// Whether some axis is explicit somewhere: on a mesh, or inside an
/// explicit_axes region (auto_axes regions need explicit axes too).
bool hasExplicitAxes(Module &module) {
  return hasAxesRegions(module) ||
         std::any_of(module.meshes.begin(), module.meshes.end(),
                     [](const auto &mesh) { return mesh->hasExplicitAxis(); });
}

/// By the meshes' axis types (LANGUAGE.md section 10): propagation when
/// every axis is auto, the explicit rules when every axis is explicit, both
/// (explicit axes typed, auto axes propagated) on mixed meshes. A check only
/// (`checkOnly`) puts the shardings back afterwards.
void assignShardings(PipelineState &s) {
  if (!hasExplicitAxes(*s.module)) {
    propagateShardings(*s.module, s.diags, s.options.origins);
    return;
  }
  std::optional<ShardingSnapshot> checked;
  std::vector<std::pair<Sharding *, Sharding>> attributes;
  if (s.checkOnly) {
    checked = takeSnapshot(*s.module);
    walkBlocks(*s.module, [&](Block &b) {
      for (auto &op : b.ops)
        for (NamedAttribute &a : op->attrs)
          for (Sharding &sharding : a.value.shardings)
            attributes.emplace_back(&sharding, sharding);
    });
  }
  if (hasMixedAxes(*s.module)) {
    // --auto-shard: the solver decides the auto axes where the explicit
    // types are known (the auto-shard stage before left them to it).
    AutoAxesSolver solver;
    if (s.options.autoShard && !s.checkOnly)
      solver = [&s](Module &module, const ExplicitTypeCheck &explicitTypes,
                    const OpDescription &describeOp) {
        AutoShardOptions options = *s.options.autoShard;
        options.explicitTypes = explicitTypes;
        options.describeOp = describeOp;
        autoShard(module, s.diags, options);
      };
    inferMixedShardings(*s.module, s.diags, s.options.origins, s.checkOnly, solver);
  } else
    inferExplicitShardings(*s.module, s.diags);
  if (checked)
    restoreSnapshot(*checked);
  for (auto &[where, sharding] : attributes)
    *where = std::move(sharding);
}

/// Whether assignShardings runs Shardy's propagation: on every axis, or on
/// the auto axes of mixed meshes; only an all-explicit program skips it.
bool runsPropagation(Module &module) { return !hasExplicitAxes(module) || hasMixedAxes(module); }

bool propagate(PipelineState &s) {
  assignShardings(s);
  return true;
}

bool autoShardStage(PipelineState &s) {
  // A program the mixed pass handles is solved there, once the explicit
  // types are known (assignShardings).
  if (hasMixedAxes(*s.module))
    return true;
  autoShard(*s.module, s.diags, *s.options.autoShard);
  return true;
}

/// --explicit: every axis without a written type is explicit. Returns the
/// meshes it changed.
std::vector<Mesh *> makeUnwrittenAxesExplicit(Module &module) {
  std::vector<Mesh *> changed;
  for (auto &mesh : module.meshes)
    if (!mesh->axisTypesWritten && !mesh->axes.empty()) {
      for (MeshAxis &axis : mesh->axes)
        axis.type = AxisType::Explicit;
      changed.push_back(mesh.get());
    }
  return changed;
}

bool explicitShardings(PipelineState &s) {
  std::vector<Mesh *> changed = makeUnwrittenAxesExplicit(*s.module);
  assignShardings(s);
  // --emit=ir prints the program as checked: axis types as written too.
  if (s.checkOnly)
    for (Mesh *mesh : changed)
      for (MeshAxis &axis : mesh->axes)
        axis.type = AxisType::Auto;
  return true;
}

bool inlineCallsStage(PipelineState &s) {
  inlineCalls(*s.module, s.options.explicitMode);
  return true;
}

bool importStage(PipelineState &s) {
  sortManualAxes(*s.module);
  if (s.options.explicitMode)
    return true;
  // Constants are split for Shardy's propagation only: a program whose axes
  // are all explicit follows JAX's rules alone.
  if (runsPropagation(*s.module))
    splitConstants(*s.module);
  return true;
}

bool partition(PipelineState &s) {
  // Propagation keeps the auto_axes / explicit_axes regions (so that the
  // sharded program prints them); the partitioner wants them inlined.
  if (hasAxesRegions(*s.module))
    lowerAxesRegions(*s.module);
  // A plan made under a memory budget is partitioned as the solver priced
  // it (PartitionOptions).
  PartitionOptions options;
  if (s.options.autoShard && s.options.autoShard->memoryBudget)
    options.reuseReshards = options.cheapestAssignment = false;
  partitionModule(*s.module, s.diags, s.options.collectives, options);
  return true;
}

bool lower(PipelineState &s) { return s.options.backend->lower(*s.module, s.diags); }
bool optimize(PipelineState &s) { return s.options.backend->optimize(s.diags); }
bool emitObject(PipelineState &s) { return s.options.backend->emitObject(s.diags); }
bool link(PipelineState &s) { return s.options.backend->link(s.diags); }

// ---- when a stage runs, and what it shows ---------------------------------------

bool withoutExplicit(const CompileOptions &o) { return !o.explicitMode; }
bool withExplicit(const CompileOptions &o) { return o.explicitMode; }
bool withAutoShard(const CompileOptions &o) { return o.autoShard && !o.explicitMode; }
/// `--emit=ir --explicit` prints the program as checked, calls and all.
bool unlessPrintingChecked(const CompileOptions &o) { return !(o.explicitMode && o.emit == "ir"); }
bool withBackend(const CompileOptions &o) { return o.backend != nullptr; }
bool whenLinking(const CompileOptions &o) { return o.backend && o.buildExecutable; }

std::string printProgram(const PipelineState &s) { return printModule(*s.module); }
std::string printBackendIR(const PipelineState &s) { return s.options.backend->printIR(); }

/// The last stage `options` ask for, by name.
std::string_view lastStage(const CompileOptions &options) {
  if (options.backend)
    return options.buildExecutable ? "link" : "optimize-llvm";
  if (options.collectives)
    return "partition";
  std::string_view last =
      options.emit.empty() ? kLastCheckingStage : findEmitKind(options.emit).lastStage;
  // --explicit is a check: it runs whenever the checks do, even for
  // --emit=ir, which still prints the program as checked.
  const bool checkOnly = options.explicitMode && options.emit == "ir";
  if ((options.explicitMode && (options.emit.empty() || checkOnly)) || options.throughPropagation ||
      options.origins)
    last = "propagate-shardings";
  return last;
}

bool wantsDump(const Stage &stage, const CompileOptions &options) {
  if (!options.dumpIR || !stage.printIR)
    return false;
  return options.printIRAfterAll ||
         std::find(options.printIRAfter.begin(), options.printIRAfter.end(), stage.name) !=
             options.printIRAfter.end();
}

} // namespace

const std::vector<Stage> &allStages() {
  static const std::vector<Stage> stages = {
      {"parse", "parse .shd source and build the IR",
       "ANTLR grammar (grammar/Shd.g4) and IR builder: resolves values and "
       "meshes, decodes types, shardings and attributes",
       parse, nullptr, nullptr, false, printProgram},
      {"infer-types", "infer and check every op's result type",
       "numpy/ONNX broadcasting, matmul and einsum dims, reductions, reshape "
       "element count, transpose perm, concat, slice and pad bounds, dtypes; "
       "a written result type must equal the inferred one",
       runPass<inferTypes>, nullptr, nullptr, false, printProgram},
      {"verify-shardings", "check every sharding invariant",
       "meshes, axis references, sub-axes, priorities, replicated axes, "
       "device counts and manual_computation rules, in Shardy's order",
       runPass<verifyShardings>, nullptr, nullptr, false, printProgram},
      {"inline-calls", "replace every call by a copy of its callee",
       "a call means inlining the callee (nested calls too); shardings written "
       "in the callee's signature become sharding_constraints (reshards with "
       "--explicit) at the call site",
       inlineCallsStage, unlessPrintingChecked, nullptr, true, printProgram},
      {"import", "Shardy's import steps before propagation",
       "manual_axes in mesh order (sdy-manual-axes-cleanup); for propagation also a "
       "constant, an iota, or a broadcast, reshape, slice or elementwise op of them, "
       "and a broadcast of a rank-0 value, copied for each op or return that reads "
       "it, so two readers' layouts do not meet in it (sdy-constant-or-scalar-splitter)",
       importStage, unlessPrintingChecked, nullptr, true, printProgram},
      {"auto-shard", "with --auto-shard: choose shardings by an ILP over op strategies",
       "per op the strategies of its factor rule (mesh axes per factor, split in sub-axes where a "
       "dim needs them), "
       "priced by the cost model (compute, reshards from the reshard planner, "
       "memory per device); an exact presolve, then without a budget variable "
       "elimination, else CBC (Alpa's ILP, memory rows from liveness), picks one "
       "per op; written closed shardings kept; sharding_constraints inserted "
       "where an operand must be resharded",
       autoShardStage, withAutoShard, nullptr, true, printProgram},
      {"propagate-shardings", "complete every value's sharding (Shardy propagation)",
       "factor rules per op, user priorities then op priorities, aggressive "
       "conflict resolution (the larger tensor wins); open dims grow, closed dims "
       "and explicitly replicated axes block, never across meshes; closes every "
       "sharding at the end",
       propagate, withoutExplicit, nullptr, false, printProgram},
      {"explicit-shardings", "with --explicit: JAX sharding in types",
       "every result's sharding from its op's rule; unannotated parameters "
       "replicated; open dims, ambiguous and illegal results are errors whose "
       "notes give the out_sharding or reshard that resolves them",
       explicitShardings, withExplicit, "propagate-shardings", false, printProgram},
      {"export", "close every sharding before partitioning",
       "open dims closed, priorities dropped, values without a sharding replicated "
       "on the program's only mesh",
       runPass<exportShardings>, nullptr, nullptr, true, printProgram},
      {"partition", "rewrite into the per-device (SPMD) program",
       "per mesh run a manual_computation over all axes: local padded shapes, "
       "collectives from the reshard planner (least bytes per device), partial "
       "sums reduced by all_reduce or reduce_scatter, padding masked before "
       "reductions and contractions",
       partition, nullptr, nullptr, true, printProgram},
      // The back half: -o PROG and --emit=llvm (backend/llvm/NativeBackend.h).
      {"lower-llvm", "lower the per-device program to LLVM IR",
       "the program description the runtime reads, one function per fused "
       "kernel, BLAS calls for contractions, runtime calls for collectives",
       lower, withBackend, nullptr, true, printBackendIR, true, "lower to LLVM IR"},
      {"optimize-llvm", "LLVM's O3 pipeline for the target CPU",
       "vectorized math through libmvec; --target-cpu picks the CPU", optimize, withBackend,
       nullptr, true, printBackendIR, true, "LLVM O3"},
      {"codegen", "emit an object file", "LLVM's code generator for the target machine", emitObject,
       whenLinking, nullptr, true, nullptr, true, "code generation"},
      {"link", "link the executable",
       "the object file with libshardrt, MPICH, OpenBLAS and libmvec, by MPICH's "
       "compiler wrapper",
       link, whenLinking, nullptr, true, nullptr, true, "link"},
  };
  return stages;
}

std::string passNames() {
  std::string names;
  for (const Stage &stage : allStages()) {
    if (stage.replaces || stage.backHalf)
      continue;
    names += fmt::format("{}{}", names.empty() ? "" : ", ", stage.name);
    for (const Stage &alt : allStages())
      if (alt.replaces && std::string_view(alt.replaces) == stage.name)
        names += fmt::format(" (--explicit: {})", alt.name);
  }
  return names;
}

std::string passTable() {
  size_t width = 0;
  for (const Stage &stage : allStages())
    width = std::max(width, std::string_view(stage.name).size());
  std::string table;
  for (const Stage &stage : allStages())
    if (!stage.backHalf)
      table += fmt::format("{:<{}} {}\n{:<{}} {}\n", stage.name, width, stage.summary, "", width,
                           stage.description);
  return table;
}

std::vector<std::string> stagesWithIR() {
  std::vector<std::string> names;
  for (const Stage &stage : allStages())
    if (stage.printIR)
      names.emplace_back(stage.name);
  return names;
}

std::vector<std::string> emitKinds() {
  std::vector<std::string> names;
  for (const EmitKind &kind : kEmitKinds)
    names.emplace_back(kind.name);
  return names;
}

std::unique_ptr<Module> compile(const SourceFile &file, DiagnosticEngine &diags,
                                const CompileOptions &options) {
  PipelineState state{file, diags, options, nullptr};
  state.checkOnly = options.explicitMode && options.emit == "ir" && !options.throughPropagation &&
                    !options.backend;
  std::string_view last = lastStage(options);
  for (const Stage &stage : allStages()) {
    if (stage.enabled && !stage.enabled(options))
      continue;
    if (stage.needsValidProgram && diags.hasErrors())
      break;
    bool produced;
    {
      PhaseTimer timer(options.times, stage.phase ? stage.phase : stage.name);
      produced = stage.run(state);
    }
    if (!state.module)
      return nullptr; // nothing parsed
    // Explicit axes are a check: with axis_types written, the checks run
    // their rules even without --explicit (and --emit=ir still prints the
    // program as checked).
    if (stage.name == std::string_view("parse") && last == kLastCheckingStage &&
        hasExplicitAxes(*state.module)) {
      last = "propagate-shardings";
      state.checkOnly = true;
    }
    if (produced && wantsDump(stage, options))
      options.dumpIR(std::string("// -----// IR Dump After ") + stage.name + " //----- //\n" +
                     stage.printIR(state));
    if (!produced || stage.name == last || (stage.replaces && stage.replaces == last))
      break;
  }
  if (diags.hasErrors() && !options.keepModuleOnError)
    return nullptr;
  return std::move(state.module);
}

std::string emitModule(const Module &module, std::string_view emit) {
  if (emit == "llvm")
    throw std::logic_error("--emit=llvm is printed by the backend (Backend::printIR)");
  findEmitKind(emit);
  return printModule(module);
}

} // namespace shardc
