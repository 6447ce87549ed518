// The backend half of the driver: the partitioned module -> LLVM IR
// (--emit=llvm) or a native SPMD executable (-o PROG without --emit).
#pragma once

#include "ir/Diagnostics.h"
#include "ir/IR.h"
#include "tools/shardc/PhaseTimes.h"

#include <string>

namespace shardc {

struct NativeOptions {
  std::string targetCpu = "native"; ///< --target-cpu: an LLVM CPU name
  PhaseTimes *times = nullptr;      ///< --time-passes: the backend's phases
};

/// The optimized LLVM IR of `spmd` (what -o would compile), as text. Problems
/// go to `diags` and give false.
bool emitLLVMText(const Module &spmd, const std::string &programName, const NativeOptions &options,
                  std::string &text, DiagnosticEngine &diags);

/// Compiles `spmd` and links it into the executable `output` (complete or
/// not written at all). Problems go to `diags` and give false.
bool buildExecutable(const Module &spmd, const std::string &programName, const std::string &output,
                     const NativeOptions &options, DiagnosticEngine &diags);

/// Empty when LLVM knows `cpu` (an LLVM CPU name or "native"), else why not.
std::string checkTargetCpu(const std::string &cpu);

/// `runtime: DIR (how it was found)` or why it cannot be found, for --version.
std::string runtimeLocationText();

} // namespace shardc
