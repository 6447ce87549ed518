// The native backend's stages: lower (the driver and its distinct kernels),
// optimize (O3 per kernel on threads, or the kernel from the cache), emit
// objects (code generation per kernel, the driver without optimization),
// link.
#include "backend/llvm/NativeBackend.h"

#include "backend/llvm/Codegen.h"
#include "backend/llvm/KernelCompiler.h"
#include "backend/llvm/Link.h"
#include "backend/llvm/Target.h"

#include <llvm/IR/Verifier.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

#include <fmt/format.h>

#include <optional>
#include <stdexcept>

namespace shardc {

/// The program as it goes through the stages: the target machine, the
/// driver module and the kernels, and the temporary directory of object
/// files (removed with the state).
struct NativeBackend::State {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::TargetMachine> machine;
  llvmgen::LoweredProgram program;
  std::optional<llvmgen::KernelCache> cache;
  std::vector<std::string> kernelObjects; // object code of program.kernels[i]
  llvmgen::KernelCompileStats stats;
  llvm::SmallString<128> objectDir;
  std::vector<std::string> objectFiles;

  ~State() {
    for (const std::string &file : objectFiles)
      llvm::sys::fs::remove(file);
    if (!objectDir.empty())
      llvm::sys::fs::remove(objectDir);
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
  if (!spmd.findFunction("main")) {
    diags.error(Loc{}, "the program has no func @main: nothing to compile into an executable");
    return false;
  }
  // Names of values only help a reader of the IR; without them the kernels'
  // keys are shorter and every module is cheaper to build.
  state_->context.setDiscardValueNames(!options_.keepIR);
  try {
    state_->program = llvmgen::lowerProgram(spmd, state_->context, programName_,
                                            {options_.releaseScratch, options_.flushDenormals,
                                             llvmgen::vectorRegisterBytes(*state_->machine)});
  } catch (const llvmgen::CodegenError &e) {
    // Partitioning succeeded, so the backend must lower what it produced: a
    // construct it cannot is a bug of shardc's (exit 3).
    throw InternalError(e.loc, e.what());
  }
  std::string problems;
  llvm::raw_string_ostream out(problems);
  if (llvm::verifyModule(*state_->program.driver, &out))
    throw std::logic_error("the LLVM backend produced invalid IR: " + out.str());
  if (options_.useCache) {
    std::string dir =
        options_.cacheDir.empty() ? llvmgen::defaultKernelCacheDir() : options_.cacheDir;
    llvm::TargetMachine &m = *state_->machine;
    state_->cache.emplace(dir, m.getTargetTriple().str() + " " + m.getTargetCPU().str() + " " +
                                   m.getTargetFeatureString().str());
  }
  return true;
}

// The driver only calls kernels: it is not optimized (its size grows with
// the program's ops, and O3 on it would cost what the kernels saved).
bool NativeBackend::optimize(DiagnosticEngine &diags) {
  llvm::Module &driver = *state_->program.driver;
  llvmgen::setTarget(driver, *state_->machine);
  llvmgen::addSingleThreadedBlas(driver);
  std::string error;
  if (!llvmgen::optimizeKernels(state_->program.kernels, options_.targetCpu,
                                state_->cache ? &*state_->cache : nullptr, state_->kernelObjects,
                                state_->stats, error)) {
    diags.error(Loc{}, error);
    return false;
  }
  return true;
}

bool NativeBackend::emitObject(DiagnosticEngine &diags) {
  std::string error;
  if (!llvmgen::compileKernels(state_->program.kernels, options_.targetCpu,
                               state_->cache ? &*state_->cache : nullptr, options_.keepIR,
                               state_->kernelObjects, state_->stats, error)) {
    diags.error(Loc{}, error);
    return false;
  }
  std::unique_ptr<llvm::TargetMachine> fast =
      llvmgen::createTargetMachine(options_.targetCpu, error, llvm::CodeGenOpt::None);
  std::string driverObject;
  if (!fast || !llvmgen::emitObject(*state_->program.driver, *fast, driverObject, error)) {
    diags.error(Loc{}, error);
    return false;
  }
  if (llvm::sys::fs::createUniqueDirectory("shardc-objects", state_->objectDir)) {
    diags.error(Loc{}, "cannot create a temporary directory for the object files");
    return false;
  }
  auto write = [&](const std::string &name, const std::string &object) {
    std::string path = (state_->objectDir + "/" + name).str();
    std::error_code ec;
    llvm::raw_fd_ostream out(path, ec, llvm::sys::fs::OF_None);
    if (!ec) {
      state_->objectFiles.push_back(path);
      out << object;
      out.close();
    }
    if (ec || out.has_error()) {
      out.clear_error();
      diags.error(Loc{}, "cannot write the object file " + path);
      return false;
    }
    return true;
  };
  if (!write("driver.o", driverObject))
    return false;
  for (size_t i = 0; i < state_->kernelObjects.size(); ++i)
    if (!write("k" + std::to_string(i) + ".o", state_->kernelObjects[i]))
      return false;
  return true;
}

bool NativeBackend::link(DiagnosticEngine &diags) {
  std::string error;
  std::optional<llvmgen::RuntimeLocation> runtime = llvmgen::findRuntime(error);
  if (!runtime || !llvmgen::linkExecutable(state_->objectFiles, output_, *runtime, error)) {
    diags.error(Loc{}, error);
    return false;
  }
  return true;
}

// The driver, then each distinct kernel (as optimized, or as lowered when
// it came from the cache), one module after another.
std::string NativeBackend::printIR() const {
  std::string text;
  llvm::raw_string_ostream out(text);
  state_->program.driver->print(out, nullptr);
  for (const llvmgen::KernelUnit &kernel : state_->program.kernels)
    if (kernel.module)
      kernel.module->print(out, nullptr);
  out.flush();
  return text;
}

std::string NativeBackend::kernelSummary() const {
  const llvmgen::LoweredProgram &p = state_->program;
  return fmt::format("shardc: kernels: {} distinct for {} calls; {} from the cache, {} compiled, "
                     "{} stored ({} threads)\n",
                     p.kernels.size(), p.kernelCalls, state_->stats.fromCache,
                     state_->stats.compiled, state_->stats.stored, llvmgen::kernelCompileThreads());
}

std::string checkTargetCpu(const std::string &cpu) {
  std::string error;
  return llvmgen::createTargetMachine(cpu, error) ? "" : error;
}

std::string checkFlushDenormals() {
  return llvmgen::canFlushDenormals() ? "" : "needs an x86 CPU (it sets MXCSR's FTZ and DAZ bits)";
}

std::string runtimeLocationText() {
  std::string error;
  std::optional<llvmgen::RuntimeLocation> runtime = llvmgen::findRuntime(error);
  if (!runtime)
    return "runtime: not found: " + error;
  return "runtime: " + runtime->libraryDir + "/libshardrt.a (" + runtime->origin + ")";
}

} // namespace shardc
