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

/// The lowered and optimized module, or null after reporting why.
std::unique_ptr<llvm::Module> compileToLLVM(const Module &spmd, const std::string &programName,
                                            llvm::LLVMContext &context,
                                            llvm::TargetMachine &machine, DiagnosticEngine &diags) {
  std::unique_ptr<llvm::Module> module;
  try {
    module = llvmgen::lowerProgram(spmd, context, programName);
  } catch (const llvmgen::CodegenError &e) {
    diags.error(e.loc, e.what());
    return nullptr;
  }
  std::string problems;
  llvm::raw_string_ostream out(problems);
  if (llvm::verifyModule(*module, &out))
    throw std::logic_error("the LLVM backend produced invalid IR: " + out.str());
  llvmgen::optimizeModule(*module, machine);
  return module;
}

std::unique_ptr<llvm::TargetMachine> targetMachine(const NativeOptions &options,
                                                   DiagnosticEngine &diags) {
  std::string error;
  std::unique_ptr<llvm::TargetMachine> machine =
      llvmgen::createTargetMachine(options.targetCpu, error);
  if (!machine)
    diags.error(Loc{}, error);
  return machine;
}

} // namespace

bool emitLLVMText(const Module &spmd, const std::string &programName, const NativeOptions &options,
                  std::string &text, DiagnosticEngine &diags) {
  std::unique_ptr<llvm::TargetMachine> machine = targetMachine(options, diags);
  if (!machine)
    return false;
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = compileToLLVM(spmd, programName, context, *machine, diags);
  if (!module)
    return false;
  llvm::raw_string_ostream out(text);
  module->print(out, nullptr);
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
  std::unique_ptr<llvm::TargetMachine> machine = targetMachine(options, diags);
  if (!machine)
    return false;
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = compileToLLVM(spmd, programName, context, *machine, diags);
  if (!module)
    return false;

  llvm::SmallString<128> object;
  if (llvm::sys::fs::createTemporaryFile("shardc", "o", object)) {
    diags.error(Loc{}, "cannot create a temporary object file");
    return false;
  }
  bool ok = llvmgen::emitObjectFile(*module, *machine, object.str().str(), error) &&
            llvmgen::linkExecutable(object.str().str(), output, *runtime, error);
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
