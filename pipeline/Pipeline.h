// The compiler pipeline, from parse to link, as one list of stages
// (STYLE point 1): reading allStages() in Pipeline.cpp tells a newcomer what
// shardc does to a program and in what order. shardc, shardc-lsp and the
// tests all run it through compile(); `--emit=`, `--print-ir-after=`,
// `--time-passes` and `--list-passes` key off the same table.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/IR.h"
#include "passes/auto_shard/AutoShard.h"
#include "passes/partition/PartitionReport.h"
#include "passes/propagate/ShardingOrigins.h"
#include "pipeline/Backend.h"
#include "pipeline/PhaseTimes.h"

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace shardc {

/// What `--emit=` can print, in pipeline order.
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
  /// --auto-shard: the solver decides the shardings (auto-shard runs before
  /// propagate-shardings, which completes and closes what it left); null:
  /// propagation alone.
  const AutoShardOptions *autoShard = nullptr;
  /// --time-passes: every stage that runs adds its wall time here.
  PhaseTimes *times = nullptr;
  /// The back half (-o PROG, --emit=llvm): runs its stages after partition
  /// (through link when `buildExecutable`, else through optimize-llvm).
  /// Null: the front half only, as in the language server.
  Backend *backend = nullptr;
  bool buildExecutable = false;
  /// --print-ir-after=NAME (each a stage name) and --print-ir-after-all:
  /// after such a stage, `dumpIR` receives mlir-opt's header line
  /// `// -----// IR Dump After NAME //----- //` and the IR.
  std::vector<std::string> printIRAfter;
  bool printIRAfterAll = false;
  std::function<void(const std::string &)> dumpIR;
};

/// Everything the stages of one compile() read and write.
struct PipelineState {
  const SourceFile &file;
  DiagnosticEngine &diags;
  const CompileOptions &options;
  std::unique_ptr<Module> module;
  /// --explicit with --emit=ir: explicit-shardings checks the program but
  /// leaves its shardings as written (what --emit=ir prints).
  bool checkOnly = false;
};

/// One stage of the pipeline.
struct Stage {
  const char *name;        ///< for --print-ir-after, --emit and the docs
  const char *summary;     ///< one line, for --list-passes
  const char *description; ///< the details, for --list-passes
  /// Runs the stage; false when it could not produce its output (the
  /// pipeline stops: a parse error, a failed back-end stage).
  bool (*run)(PipelineState &state);
  /// Whether the stage runs under these options (a mode's alternative, the
  /// back half only with a backend).
  bool (*enabled)(const CompileOptions &options) = nullptr;
  /// The name of the stage this one replaces in its mode (explicit-shardings
  /// for propagate-shardings): a run that stops after that one stops here.
  const char *replaces = nullptr;
  /// Rewrites the program: runs only on a program without errors.
  bool needsValidProgram = false;
  /// The IR after the stage as text (--print-ir-after); null: none to show.
  std::string (*printIR)(const PipelineState &state) = nullptr;
  /// In the back half (after partition, needs a Backend).
  bool backHalf = false;
  /// The --time-passes label; the name when null.
  const char *phase = nullptr;
};

/// Every stage, in pipeline order.
const std::vector<Stage> &allStages();

/// `parse, infer-types, ...`: the passes (the stages of the front half) in
/// order, a mode's alternative in parentheses after the stage it replaces
/// (`--version`).
std::string passNames();

/// The passes with their documentation, two lines each: name and summary,
/// then the description indented under it (`--list-passes`).
std::string passTable();

/// The names --print-ir-after accepts: stages with IR to show.
std::vector<std::string> stagesWithIR();

/// Runs the pipeline on one source buffer, every enabled stage of
/// allStages() in order, as far as `options` asks. Returns null when any
/// stage reported an error (unless `keepModuleOnError`, then only when the
/// text did not parse); diagnostics are in `diags` either way.
std::unique_ptr<Module> compile(const SourceFile &file, DiagnosticEngine &diags,
                                const CompileOptions &options = {});

/// Prints `module` in the form `emit` names (ir, sharded or spmd).
std::string emitModule(const Module &module, std::string_view emit);

} // namespace shardc
