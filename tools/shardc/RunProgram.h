// `shardc --interpret` and `--simulate`: run a compiled module's @main on
// .npy inputs (or random ones) with the reference interpreter, then write
// DIR/resultN.npy or print a summary of each result.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/IR.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace shardc {

struct RunOptions {
  /// `NAME=FILE.npy`, one per --input (the driver checked the form).
  std::vector<std::string> inputs;
  /// --output-dir: where result0.npy, result1.npy, ... go; empty: a summary
  /// of each result on stdout.
  std::string outputDir;
  /// --random-inputs SEED: parameters without --input get random values.
  std::optional<uint64_t> randomSeed;
};

/// Runs `module`'s @main. Problems (a missing or malformed input, a runtime
/// error) are reported to `diags` and give false; no output file is written
/// unless the whole run succeeds.
bool runProgram(const Module &module, const RunOptions &options, DiagnosticEngine &diags);

} // namespace shardc
