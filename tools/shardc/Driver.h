// What one shardc invocation does once its options are parsed: read the
// input, run the pipeline on it (per chunk with --split-input-file), report
// diagnostics, check expectations, write the output.
#pragma once

#include "backend/llvm/NativeBackend.h"
#include "passes/auto_shard/AutoShard.h"
#include "tools/shardc/RunProgram.h"

#include <cstddef>
#include <string>
#include <vector>

namespace shardc {

struct DriverOptions {
  std::string input = "-";        ///< the source file; "-" = stdin
  std::string output = "-";       ///< where --emit writes; "-" = stdout
  std::string emit;               ///< one of emitKinds(); empty = print nothing
  bool verifyDiagnostics = false; ///< match diagnostics against expected-* comments
  bool splitInputFile = false;    ///< treat each `// -----` chunk as a file of its own
  bool json = false;              ///< diagnostics as LSP JSON instead of text
  bool color = false;             ///< ANSI colour in text diagnostics
  bool explicitMode = false;      ///< JAX sharding in types instead of propagation (--explicit)
  bool visualize = false;         ///< draw each sharded value's device blocks (--visualize)
  bool visualizeColor = false;    ///< ANSI colour in those pictures
  bool explain = false;           ///< where each axis came from (--explain, --debug-origins)
  std::string report;             ///< "collectives" or "auto-sharding": which report to print
  bool autoShard = false;         ///< --auto-shard: the solver chooses the shardings
  AutoShardOptions
      autoShardOptions;   ///< --memory-budget, --cost-model, --solver-time-limit, --solver-gap
  size_t errorLimit = 20; ///< errors reported per chunk; 0 = no limit
  bool interpret = false; ///< run @main with the reference interpreter (--interpret)
  bool simulate = false;  ///< partition, then run the per-device program (--simulate)
  RunOptions run;         ///< inputs and outputs of --interpret / --simulate
  bool buildExecutable = false;          ///< -o PROG with nothing to print: compile and link PROG
  NativeOptions native;                  ///< --target-cpu (executables and --emit=llvm)
  bool timePasses = false;               ///< --time-passes: wall time per phase on stderr
  std::vector<std::string> printIRAfter; ///< --print-ir-after=NAME: dump the IR after these stages
  bool printIRAfterAll = false;          ///< --print-ir-after-all: after every stage
  /// The process exits when runDriver returns: the last program's IR is left
  /// to the operating system rather than freed object by object, as
  /// compilers do (a 100,000-op compile to --emit=spmd ends about 0.03 s
  /// sooner).
  bool exitsAfter = false;
};

/// Whether the invocation runs the back half (LLVM): -o PROG or --emit=llvm.
inline bool usesBackend(const DriverOptions &options) {
  return options.buildExecutable || options.emit == "llvm";
}

/// Runs one invocation and returns its exit code: 0 when the program is
/// fine (or, with --verify-diagnostics, when every diagnostic was expected),
/// 1 when it is not or the input/output could not be read/written. Output is
/// written only when the exit code is 0.
int runDriver(const DriverOptions &options);

} // namespace shardc
