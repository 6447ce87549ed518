// From an LLVM module to a native object: the target machine for the host
// (or --target-cpu), LLVM's O3 pipeline with vector math from glibc's
// libmvec, and the object file.
#pragma once

#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <memory>
#include <string>

namespace shardc::llvmgen {

/// The x86-64 Linux target for `cpu` ("native": the host's CPU and
/// features). Null with `error` set when LLVM does not know the CPU.
/// `level` is the code generator's (the driver, which only calls kernels,
/// needs no optimization).
std::unique_ptr<llvm::TargetMachine>
createTargetMachine(const std::string &cpu, std::string &error,
                    llvm::CodeGenOpt::Level level = llvm::CodeGenOpt::Aggressive);

/// The widest vector register of `machine`'s CPU in bytes: 64 with
/// AVX-512F, 32 with AVX, 16 otherwise.
int64_t vectorRegisterBytes(const llvm::TargetMachine &machine);

/// Sets the module's triple and data layout for `machine`.
void setTarget(llvm::Module &module, llvm::TargetMachine &machine);

/// Makes OpenBLAS run one thread per rank (a constructor: every core already
/// runs a rank). For the driver module.
void addSingleThreadedBlas(llvm::Module &module);

/// Sets the module's triple and data layout and runs the O3 pipeline with
/// libmvec as the vector library, so loops over exp, log, sin, cos, pow,
/// tanh, erf ... vectorize.
void optimizeModule(llvm::Module &module, llvm::TargetMachine &machine);

/// The module as a relocatable object, in memory. False with `error`.
bool emitObject(llvm::Module &module, llvm::TargetMachine &machine, std::string &object,
                std::string &error);

} // namespace shardc::llvmgen
