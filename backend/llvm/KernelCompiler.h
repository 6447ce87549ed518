// Compiling the distinct kernels of a program (KernelUnit.h): O3 and code
// generation for each kernel the cache does not hold, on as many threads as
// the machine has cores (each kernel lives in an LLVMContext of its own, so
// they compile independently), and the object code of every kernel.
#pragma once

#include "backend/llvm/KernelCache.h"
#include "backend/llvm/KernelUnit.h"

#include <string>
#include <vector>

namespace shardc::llvmgen {

struct KernelCompileStats {
  int64_t fromCache = 0; ///< kernels whose object code the cache held
  int64_t compiled = 0;  ///< kernels optimized and compiled here
  int64_t stored = 0;    ///< compiled kernels written to the cache
};

/// How many threads compile kernels: $SHARDC_JOBS when set (a positive
/// number), else the machine's cores.
unsigned kernelCompileThreads();

/// Runs O3 on every kernel module the cache (null: none) does not hold;
/// objects[i] becomes kernels[i]'s object code when the cache holds it, and
/// stays empty otherwise. False with `error` when no target machine can be
/// made for `cpu`.
bool optimizeKernels(std::vector<KernelUnit> &kernels, const std::string &cpu,
                     const KernelCache *cache, std::vector<std::string> &objects,
                     KernelCompileStats &stats, std::string &error);

/// Generates the object code of every kernel whose objects[i] is empty (their
/// modules are optimized), stores it in the cache (null: none) and frees the
/// modules unless `keepModules`. False with `error`.
bool compileKernels(std::vector<KernelUnit> &kernels, const std::string &cpu,
                    const KernelCache *cache, bool keepModules, std::vector<std::string> &objects,
                    KernelCompileStats &stats, std::string &error);

} // namespace shardc::llvmgen
