// The LLVM backend's entry points, in the order the driver calls them:
//   lowerProgram     the partitioned module -> a driver module with main()
//                    and its distinct kernels (KernelUnit.h)
//   optimizeKernels  LLVM's O3 pipeline for the target CPU (vector math
//                    through libmvec) on each kernel the cache lacks
//   compileKernels   TargetMachine -> object code per kernel
//                    (KernelCompiler.h); the driver with emitObject
//   linkExecutable   the system C compiler links them with libshardrt,
//                    MPICH, OpenBLAS and libmvec
#pragma once

#include "backend/llvm/KernelUnit.h"
#include "ir/Diagnostics.h"
#include "ir/IR.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace llvm {
class TargetMachine;
}

namespace shardc::llvmgen {

/// A construct of the partitioned program the backend cannot lower: the
/// native backend turns it into an InternalError at `loc` (exit 3, no
/// output), since every partitioned program must lower.
struct CodegenError : std::runtime_error {
  Loc loc;
  CodegenError(Loc loc, const std::string &message) : std::runtime_error(message), loc(loc) {}
};

/// A lowered program: the driver module and the distinct kernels it calls.
struct LoweredProgram {
  /// The shardrt_program description, the kernel that calls the kernel
  /// units in order, and `int main(int argc, char **argv) { return
  /// shardrt_main(&program, kernel, argc, argv); }`.
  std::unique_ptr<llvm::Module> driver;
  std::vector<KernelUnit> kernels;
  int64_t kernelCalls = 0; ///< calls of kernels in the driver
};

/// How the executable runs, beside what it computes (NativeOptions).
struct ProgramFlags {
  /// Collectives free their scratch when they return
  /// (shardrt_program.release_scratch).
  bool releaseScratch = false;
  /// The kernel runs with denormal floats flushed to zero (x86 FTZ and DAZ,
  /// set on entry and restored on return).
  bool flushDenormals = false;
  /// The target's widest vector register in bytes (vectorRegisterBytes).
  int64_t vectorBytes = 64;
};

/// Whether this machine's executables can run with denormals flushed to
/// zero (an x86 CPU: the kernel sets MXCSR).
bool canFlushDenormals();

/// Lowers `spmd` (compile(..., {emit = "spmd"})) to a driver module in
/// `context` and its kernels (KernelUnit.h). `programName` is shown by the
/// executable's --help and messages; `flags` as in NativeOptions.
/// Throws CodegenError.
LoweredProgram lowerProgram(const shardc::Module &spmd, llvm::LLVMContext &context,
                            const std::string &programName, ProgramFlags flags = {});

} // namespace shardc::llvmgen
