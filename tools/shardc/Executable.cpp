// --emit=llvm and -o PROG: lower, optimize, emit an object, link.
#include "tools/shardc/Executable.h"

#include "backend/llvm/Codegen.h"
#include "backend/llvm/Link.h"
#include "backend/llvm/Target.h"

#include <llvm/IR/Verifier.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/raw_ostream.h>

#include <memory>

namespace shardc {
namespace {

/// The target machine for --target-cpu and the program lowered and
/// optimized for it; `module` is null after reporting why not.
struct Native {
  std::unique_ptr<llvm::TargetMachine> machine;
  std::unique_ptr<llvm::Module> module;
};

Native compileNative(const Module &spmd, const std::string &programName,
                     const NativeOptions &options, llvm::LLVMContext &context,
                     DiagnosticEngine &diags) {
  Native native;
  std::string error;
  native.machine = llvmgen::createTargetMachine(options.targetCpu, error);
  if (!native.machine) {
    diags.error(Loc{}, error);
    return native;
  }
  try {
    PhaseTimer timer(options.times, "lower to LLVM IR");
    native.module = llvmgen::lowerProgram(spmd, context, programName);
  } catch (const llvmgen::CodegenError &e) {
    diags.error(e.loc, e.what());
    return native;
  }
  std::string problems;
  llvm::raw_string_ostream out(problems);
  if (llvm::verifyModule(*native.module, &out))
    throw std::logic_error("the LLVM backend produced invalid IR: " + out.str());
  PhaseTimer timer(options.times, "LLVM O3");
  llvmgen::optimizeModule(*native.module, *native.machine);
  return native;
}

} // namespace

bool emitLLVMText(const Module &spmd, const std::string &programName, const NativeOptions &options,
                  std::string &text, DiagnosticEngine &diags) {
  llvm::LLVMContext context;
  Native native = compileNative(spmd, programName, options, context, diags);
  if (!native.module)
    return false;
  PhaseTimer timer(options.times, "print");
  llvm::raw_string_ostream out(text);
  native.module->print(out, nullptr);
  out.flush();
  return true;
}

bool buildExecutable(const Module &spmd, const std::string &programName, const std::string &output,
                     const NativeOptions &options, DiagnosticEngine &diags) {
  std::string error;
  std::optional<llvmgen::RuntimeLocation> runtime = llvmgen::findRuntime(error);
  if (!runtime) {
    diags.error(Loc{}, error);
    return false;
  }
  llvm::LLVMContext context;
  Native native = compileNative(spmd, programName, options, context, diags);
  if (!native.module)
    return false;

  llvm::SmallString<128> object;
  if (llvm::sys::fs::createTemporaryFile("shardc", "o", object)) {
    diags.error(Loc{}, "cannot create a temporary object file");
    return false;
  }
  bool ok;
  {
    PhaseTimer timer(options.times, "code generation");
    ok = llvmgen::emitObjectFile(*native.module, *native.machine, object.str().str(), error);
  }
  if (ok) {
    PhaseTimer timer(options.times, "link");
    ok = llvmgen::linkExecutable(object.str().str(), output, *runtime, error);
  }
  llvm::sys::fs::remove(object);
  if (!ok)
    diags.error(Loc{}, error);
  return ok;
}

std::string checkTargetCpu(const std::string &cpu) {
  std::string error;
  return llvmgen::createTargetMachine(cpu, error) ? "" : error;
}

std::string runtimeLocationText() {
  std::string error;
  std::optional<llvmgen::RuntimeLocation> runtime = llvmgen::findRuntime(error);
  if (!runtime)
    return "runtime: not found: " + error;
  return "runtime: " + runtime->libraryDir + "/libshardrt.a (" + runtime->origin + ")";
}

} // namespace shardc
