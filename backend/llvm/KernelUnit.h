// The kernels of a program, each compiled once: every op the driver calls
// (a fused elemental loop, a contraction, a collective) is emitted into a
// module of its own, in an LLVMContext of its own, as
//   void shardc_kernel_<hash>(i8 *ctx, i8 **args)
// where args holds every pointer that differs between two call sites of the
// same computation: buffer addresses, the program description's groups and
// arrays, the op's profile id. What is left in the module is a function of
// the computation only (ops, shapes, dtypes, shardings through the local
// shapes and the collectives' arguments, which buffers are the same), so its
// IR text is the kernel's structural key: equal keys share one function and
// one compilation, and the key names the kernel in the on-disk cache.
#pragma once

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <cstdint>
#include <memory>
#include <string>

namespace shardc::llvmgen {

struct KernelUnit {
  std::string symbol; ///< shardc_kernel_<SHA-1 of key>
  std::string key;    ///< the module's IR text, with the function named "kernel"
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module; ///< null once compiled (unless kept for printing)
  int64_t calls = 0;                    ///< call sites of the driver that call it
};

/// The structural key of a kernel module: its bitcode (binary; compared
/// whole and hashed, never shown).
std::string kernelKey(const llvm::Module &module);

/// The lowercase hex SHA-1 of `text`.
std::string sha1Hex(const std::string &text);

} // namespace shardc::llvmgen
