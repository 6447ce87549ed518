// The native backend's stages: lower, optimize (O3), emit an object, link.
#include "backend/llvm/NativeBackend.h"

#include "backend/llvm/Codegen.h"
#include "backend/llvm/Link.h"
#include "backend/llvm/Target.h"

#include <llvm/IR/Verifier.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/raw_ostream.h>

#include <optional>
#include <stdexcept>

namespace shardc {

/// The program as it goes through the stages: the target machine, the LLVM
/// module, and the temporary object file (removed with the state).
struct NativeBackend::State {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::TargetMachine> machine;
  std::unique_ptr<llvm::Module> module;
  llvm::SmallString<128> object;

  ~State() {
    if (!object.empty())
      llvm::sys::fs::remove(object);
  }
};

NativeBackend::NativeBackend(NativeOptions options, std::string programName, std::string output)
    : options_(std::move(options)), programName_(std::move(programName)),
      output_(std::move(output)), state_(std::make_unique<State>()) {}

NativeBackend::~NativeBackend() = default;

bool NativeBackend::lower(const Module &spmd, DiagnosticEngine &diags) {
  std::string error;
  state_->machine = llvmgen::createTargetMachine(options_.targetCpu, error);
  if (!state_->machine) {
    diags.error(Loc{}, error);
    return false;
  }
  try {
    state_->module = llvmgen::lowerProgram(spmd, state_->context, programName_);
  } catch (const llvmgen::CodegenError &e) {
    diags.error(e.loc, e.what());
    return false;
  }
  std::string problems;
  llvm::raw_string_ostream out(problems);
  if (llvm::verifyModule(*state_->module, &out))
    throw std::logic_error("the LLVM backend produced invalid IR: " + out.str());
  return true;
}

bool NativeBackend::optimize(DiagnosticEngine &) {
  llvmgen::optimizeModule(*state_->module, *state_->machine);
  return true;
}

bool NativeBackend::emitObject(DiagnosticEngine &diags) {
  if (llvm::sys::fs::createTemporaryFile("shardc", "o", state_->object)) {
    diags.error(Loc{}, "cannot create a temporary object file");
    return false;
  }
  std::string error;
  if (!llvmgen::emitObjectFile(*state_->module, *state_->machine, state_->object.str().str(),
                               error)) {
    diags.error(Loc{}, error);
    return false;
  }
  return true;
}

bool NativeBackend::link(DiagnosticEngine &diags) {
  std::string error;
  std::optional<llvmgen::RuntimeLocation> runtime = llvmgen::findRuntime(error);
  if (!runtime || !llvmgen::linkExecutable(state_->object.str().str(), output_, *runtime, error)) {
    diags.error(Loc{}, error);
    return false;
  }
  return true;
}

std::string NativeBackend::printIR() const {
  std::string text;
  llvm::raw_string_ostream out(text);
  state_->module->print(out, nullptr);
  out.flush();
  return text;
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
