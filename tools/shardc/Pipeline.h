// The compiler pipeline, one stage after another (STYLE point 1): reading
// compile() tells a newcomer what shardc does to a program and in what order.
// `--emit=NAME` keys off the same table of stages.
#pragma once

#include "tools/shardc/PhaseTimes.h"

#include "ir/Diagnostics.h"
#include "ir/IR.h"
#include "passes/partition/PartitionReport.h"
#include "passes/propagate/ShardingOrigins.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace shardc {

/// What `--emit=` can print in this build, in pipeline order. Later stages
/// (sharded, spmd, llvm) add their names here when they land.
std::vector<std::string> emitKinds();

/// How far compile() runs and how.
struct CompileOptions {
  /// The `--emit=` kind whose stage ends the run; empty: the checks only
  /// (--verify-only), or propagation when `throughPropagation` is set.
  std::string_view emit;
  /// Run through propagate-shardings (--visualize, --explain: they show
  /// what propagation decided).
  bool throughPropagation = false;
  /// --explicit: explicit-shardings (JAX sharding in types) in place of
  /// propagate-shardings; it is a check too, so --verify-only runs it.
  bool explicitMode = false;
  /// --explain: propagation records here where each axis came from
  /// (nothing is recorded with --explicit).
  ShardingOrigins *origins = nullptr;
  /// The language server: return the module even when a stage reported
  /// errors (hover and navigation on a file with mistakes).
  bool keepModuleOnError = false;
  /// --report=collectives: run through partition and record there every
  /// collective it inserts.
  CollectiveReport *collectives = nullptr;
  /// --time-passes: parse and every pass that runs add their wall time here.
  PhaseTimes *times = nullptr;
};

/// Runs the pipeline on one source buffer: parse, then every pass in the
/// order of allPasses(), as far as `options` asks. Returns null when any
/// stage reported an error (unless `keepModuleOnError`, then only when the
/// text did not parse); diagnostics are in `diags` either way.
std::unique_ptr<Module> compile(const SourceFile &file, DiagnosticEngine &diags,
                                const CompileOptions &options = {});

/// Prints `module` in the form `emit` names (one of emitKinds()).
std::string emitModule(const Module &module, std::string_view emit);

} // namespace shardc
