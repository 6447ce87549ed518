// The compiler pipeline: source text -> IR -> checked IR -> printed stage.
#include "tools/shardc/Pipeline.h"

#include "frontend/Parser.h"
#include "ir/Printer.h"
#include "passes/Passes.h"

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
  std::string (*print)(const Module &);
};

/// `--emit=ir` prints the checked program in canonical form; `--emit=sharded`
/// prints it after propagation, every value with a closed sharding;
/// `--emit=spmd` the per-device program after partitioning; `--emit=llvm`
/// its LLVM IR, optimized (the driver prints that one).
const EmitKind kEmitKinds[] = {
    {"ir", "verify-shardings", printModule},
    {"sharded", "propagate-shardings", printModule},
    {"spmd", "partition", printModule},
    // The driver lowers the partitioned module itself (tools/shardc/Executable).
    {"llvm", "partition", nullptr},
};

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

const EmitKind &findEmitKind(std::string_view name) {
  for (const EmitKind &kind : kEmitKinds)
    if (name == kind.name)
      return kind;
  throw std::logic_error("unknown --emit kind '" + std::string(name) + "'");
}

} // namespace

std::vector<std::string> emitKinds() {
  std::vector<std::string> names;
  for (const EmitKind &kind : kEmitKinds)
    names.emplace_back(kind.name);
  return names;
}

std::unique_ptr<Module> compile(const SourceFile &file, DiagnosticEngine &diags,
                                const CompileOptions &options) {
  const bool explicitMode = options.explicitMode;
  ShardingOrigins *origins = options.origins;
  const char *lastStage =
      options.emit.empty() ? kLastCheckingStage : findEmitKind(options.emit).lastStage;
  // --explicit is a check: it runs whenever the checks do, even for
  // --emit=ir, which still prints the program as checked (see below).
  const bool checkOnly = explicitMode && options.emit == "ir" && !options.throughPropagation;
  if ((explicitMode && (options.emit.empty() || checkOnly)) || options.throughPropagation ||
      origins)
    lastStage = "propagate-shardings";
  if (options.collectives)
    lastStage = "partition";

  // 1. parse: text -> IR. A syntax error ends the run here (the parser has
  //    recovered and reported as many as it could). Name errors do not: the
  //    builder leaves out what it could not build, so the IR stays well
  //    formed and the checks below still find every independent mistake.
  std::unique_ptr<Module> module;
  {
    PhaseTimer timer(options.times, "parse");
    module = parseModule(file, diags);
  }
  if (!module)
    return nullptr;

  // 2. the passes of allPasses(), in order. They skip what an earlier error
  //    left without a type, so all of them run and one run reports everything.
  for (const PassInfo &pass : allPasses()) {
    if (!pass.run || pass.explicitReplaces)
      continue; // parse (done above); --explicit alternatives (below)
    const PassInfo *stage = &pass;
    if (explicitMode)
      for (const PassInfo &alternative : allPasses())
        if (alternative.explicitReplaces &&
            std::string_view(alternative.explicitReplaces) == pass.name)
          stage = &alternative;
    // export and partition need a program without errors: they rewrite it.
    const bool rewrites = stage->run == static_cast<PassFn>(exportShardings) ||
                          stage->run == static_cast<PassFn>(partitionModule);
    if (rewrites && diags.hasErrors())
      break;
    PhaseTimer timer(options.times, stage->name);
    // --explain: propagation also records where each axis came from.
    if (stage->run == static_cast<PassFn>(propagateShardings) && origins) {
      propagateShardings(*module, diags, origins);
    } else if (stage->run == static_cast<PassFn>(partitionModule) && options.collectives) {
      partitionModule(*module, diags, options.collectives);
    } else if (checkOnly && stage != &pass) {
      ShardingSnapshot checked = takeSnapshot(*module);
      stage->run(*module, diags);
      restoreSnapshot(checked);
    } else {
      stage->run(*module, diags);
    }
    if (std::string_view(lastStage) == pass.name)
      break;
  }
  if (diags.hasErrors() && !options.keepModuleOnError)
    return nullptr;
  return module;
}

std::string emitModule(const Module &module, std::string_view emit) {
  return findEmitKind(emit).print(module);
}

} // namespace shardc
