// The back half of the pipeline (pipeline/Backend.h) with LLVM: the
// partitioned module -> LLVM IR (--emit=llvm) -> an object file -> a native
// SPMD executable linked with libshardrt (-o PROG).
#pragma once

#include "ir/Diagnostics.h"
#include "ir/IR.h"
#include "pipeline/Backend.h"

#include <memory>
#include <string>

namespace shardc {

struct NativeOptions {
  std::string targetCpu = "native"; ///< --target-cpu: an LLVM CPU name
  /// Take compiled kernels from the on-disk cache and keep new ones there
  /// (false: --no-cache, and --emit=llvm, which shows every kernel optimized).
  bool useCache = true;
  /// The cache directory; empty: defaultKernelCacheDir() (KernelCache.h).
  std::string cacheDir;
  /// Keep the optimized kernel modules after code generation (printIR after
  /// codegen or link).
  bool keepIR = false;
  /// Collectives free their scratch buffers when they return (programs
  /// built under --memory-budget: the solver counted scratch at its
  /// collective only); otherwise kept for the next one.
  bool releaseScratch = false;
  /// The executable computes with denormal floats flushed to zero
  /// (--flush-denormals; shardrt_program.flush_denormals).
  bool flushDenormals = false;
};

/// The native backend for one program: `programName` is shown by the
/// executable's --help and messages; `output` is the executable link
/// writes (complete or not written at all).
class NativeBackend : public Backend {
public:
  NativeBackend(NativeOptions options, std::string programName, std::string output);
  ~NativeBackend() override;

  bool lower(const Module &spmd, DiagnosticEngine &diags) override;
  bool optimize(DiagnosticEngine &diags) override;
  bool emitObject(DiagnosticEngine &diags) override;
  bool link(DiagnosticEngine &diags) override;
  std::string printIR() const override;
  /// What the kernels cost: distinct kernels, the driver's calls of them,
  /// and how many came from the cache (one line, for --time-passes).
  std::string kernelSummary() const override;

private:
  struct State;
  NativeOptions options_;
  std::string programName_;
  std::string output_;
  std::unique_ptr<State> state_;
};

/// Empty when LLVM knows `cpu` (an LLVM CPU name or "native"), else why not.
std::string checkTargetCpu(const std::string &cpu);

/// Empty when executables built here can run with denormals flushed to
/// zero (--flush-denormals), else why not.
std::string checkFlushDenormals();

/// `runtime: DIR (how it was found)` or why it cannot be found, for --version.
std::string runtimeLocationText();

} // namespace shardc
