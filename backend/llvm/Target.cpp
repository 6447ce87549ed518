// Target machine, optimization pipeline and object emission.
#include "backend/llvm/Target.h"

#include "backend/llvm/TargetMath.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Host.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Transforms/Utils/ModuleUtils.h>

#include <mutex>

namespace shardc::llvmgen {
namespace {

void initializeTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

/// glibc 2.35+ libmvec functions LLVM 14's LIBMVEC_X86 table leaves out
/// (tanh, erf, expm1, log1p ...): the SSE variants (`b`) always, the AVX2
/// ones (`d`) only when the target has AVX2, since a vector width alone does
/// not say which ISA a variant needs.
void addGlibcVectorMath(llvm::TargetLibraryInfoImpl &info, bool avx2) {
  using llvm::ElementCount;
  static const char *const kFunctions[] = {"tanh", "erf",  "erfc", "expm1", "log1p",
                                           "log2", "exp2", "atan", "cbrt"};
  static std::vector<std::string> names; // VecDesc holds StringRefs: keep them alive
  static std::once_flag once;
  std::call_once(once, [] {
    for (const char *fn : kFunctions) {
      std::string f = fn;
      for (const std::string &n : {f, f + "f", "_ZGVbN2v_" + f, "_ZGVbN4v_" + f + "f",
                                   "_ZGVdN4v_" + f, "_ZGVdN8v_" + f + "f"})
        names.push_back(n);
    }
  });
  std::vector<llvm::VecDesc> descs;
  for (size_t i = 0; i < names.size(); i += 6) {
    descs.push_back({names[i], names[i + 2], ElementCount::getFixed(2)});
    descs.push_back({names[i + 1], names[i + 3], ElementCount::getFixed(4)});
    if (avx2) {
      descs.push_back({names[i], names[i + 4], ElementCount::getFixed(4)});
      descs.push_back({names[i + 1], names[i + 5], ElementCount::getFixed(8)});
    }
  }
  info.addVectorizableFunctions(descs);
}

/// glibc's AVX-512 variants (`e`: 16 floats, 8 doubles), which LLVM 14's table
/// lacks altogether, for the functions of its table (as libm calls and as the
/// intrinsics the elemental emitter writes) and of addGlibcVectorMath. Only
/// for targets with AVX-512F; with them the vectorizer may use 512-bit vectors
/// (usePreferredVectorWidth), which halves the work per element of a
/// transcendental loop.
void addGlibcAvx512Math(llvm::TargetLibraryInfoImpl &info) {
  using llvm::ElementCount;
  struct Function {
    const char *name;
    const char *intrinsic; // "" when LLVM has none
    const char *args;      // the variant's parameter letters
  };
  static const Function kFunctions[] = {
      {"exp", "llvm.exp", "v"}, {"log", "llvm.log", "v"},   {"sin", "llvm.sin", "v"},
      {"cos", "llvm.cos", "v"}, {"pow", "llvm.pow", "vv"},  {"tanh", "", "v"},
      {"erf", "", "v"},         {"erfc", "", "v"},          {"expm1", "", "v"},
      {"log1p", "", "v"},       {"log2", "llvm.log2", "v"}, {"exp2", "llvm.exp2", "v"},
      {"atan", "", "v"},        {"cbrt", "", "v"}};
  static std::vector<std::string> names; // VecDesc holds StringRefs: keep them alive
  static std::vector<llvm::VecDesc> descs;
  static std::once_flag once;
  std::call_once(once, [] {
    names.reserve(8 * std::size(kFunctions));
    auto add = [](const std::string &scalar, const std::string &vector, unsigned lanes) {
      names.push_back(scalar);
      const std::string &s = names.back();
      names.push_back(vector);
      descs.push_back({s, names.back(), ElementCount::getFixed(lanes)});
    };
    for (const Function &f : kFunctions) {
      std::string name = f.name, args = f.args;
      add(name, "_ZGVeN8" + args + "_" + name, 8);
      add(name + "f", "_ZGVeN16" + args + "_" + name + "f", 16);
      if (*f.intrinsic) {
        add(std::string(f.intrinsic) + ".f64", "_ZGVeN8" + args + "_" + name, 8);
        add(std::string(f.intrinsic) + ".f32", "_ZGVeN16" + args + "_" + name + "f", 16);
      }
    }
  });
  info.addVectorizableFunctions(descs);
}

/// Lets the vectorizer use the target's widest vectors. x86 targets with
/// AVX-512 prefer 256-bit vectors by default (to avoid the frequency drop some
/// CPUs take on 512-bit instructions); the loops shardc emits are long,
/// memory-bound or transcendental, where twice the lanes win.
void usePreferredVectorWidth(llvm::Module &module, unsigned bits) {
  for (llvm::Function &f : module)
    if (!f.isDeclaration())
      f.addFnAttr("prefer-vector-width", std::to_string(bits));
}

/// The most micro-ops LLVM's unroller may give a loop it unrolls partially
/// (after vectorizing it). LLVM's x86 cost model allows as many as the
/// CPU's scheduling model says its loop buffer holds: 50 for Haswell to
/// Sapphire Rapids, 28 for plain x86-64, 512 for znver3 (AMD Zen 3, and
/// every later family-19h CPU LLVM 14 knows no better name for), where a
/// vectorized loop of a few exps was unrolled 8 or 16 times. On the AMD EPYC
/// VM that doubled the time code generation took (10,000 all-distinct ops:
/// 34 s, two thirds of it in LLVM's code generator) and ran no faster:
/// capped at 150, the bench's fused loops (broadcast rows, softmax, the
/// fused elementwise chain) took the same time within the noise, and the
/// compile of 2,000 distinct ops went from 6.2 to 4.2 s.
constexpr unsigned kMaxPartialUnrollOps = 150;

/// Caps partial unrolling at kMaxPartialUnrollOps when `machine`'s CPU
/// would allow more. LLVM takes the cap as an option of the process (as
/// `clang -mllvm -unroll-partial-threshold=150` would): the first target
/// machine that optimizes decides, which is every one, since a shardc
/// process compiles for one CPU.
void capPartialUnrolling(const llvm::TargetMachine &machine) {
  static std::once_flag once;
  std::call_once(once, [&] {
    const llvm::MCSubtargetInfo *subtarget = machine.getMCSubtargetInfo();
    if (!subtarget || subtarget->getSchedModel().LoopMicroOpBufferSize <= kMaxPartialUnrollOps)
      return;
    std::string option = "-unroll-partial-threshold=" + std::to_string(kMaxPartialUnrollOps);
    const char *argv[] = {"shardc", option.c_str()};
    llvm::cl::ParseCommandLineOptions(2, argv);
  });
}

} // namespace

void addSingleThreadedBlas(llvm::Module &module) {
  llvm::LLVMContext &context = module.getContext();
  llvm::IRBuilder<> builder(context);
  auto *ctorType = llvm::FunctionType::get(builder.getVoidTy(), false);
  auto *ctor = llvm::Function::Create(ctorType, llvm::GlobalValue::InternalLinkage,
                                      "shardc.single_threaded_blas", module);
  builder.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", ctor));
  llvm::FunctionCallee setThreads = module.getOrInsertFunction(
      "openblas_set_num_threads",
      llvm::FunctionType::get(builder.getVoidTy(), {builder.getInt32Ty()}, false));
  builder.CreateCall(setThreads, {builder.getInt32(1)});
  builder.CreateRetVoid();
  llvm::appendToGlobalCtors(module, ctor, 0);
}

std::unique_ptr<llvm::TargetMachine> createTargetMachine(const std::string &cpu, std::string &error,
                                                         llvm::CodeGenOpt::Level level) {
  initializeTargets();
  const std::string triple = llvm::sys::getDefaultTargetTriple();
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return nullptr;
  std::string cpuName = cpu;
  std::string features;
  if (cpu == "native") {
    cpuName = llvm::sys::getHostCPUName().str();
    llvm::StringMap<bool> hostFeatures;
    if (llvm::sys::getHostCPUFeatures(hostFeatures))
      for (const auto &feature : hostFeatures)
        features += (features.empty() ? "" : ",") + std::string(feature.second ? "+" : "-") +
                    feature.first().str();
  } else {
    // LLVM only warns (on stderr) about an unknown CPU: check first.
    std::unique_ptr<const llvm::MCSubtargetInfo> info(
        target->createMCSubtargetInfo(triple, "", ""));
    bool known = info && info->isCPUStringValid(cpu);
    if (!known) {
      error = "unknown --target-cpu '" + cpu + "' (try 'native', 'x86-64', 'x86-64-v3', " +
              "'haswell', 'skylake-avx512', 'znver3')";
      return nullptr;
    }
  }
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, cpuName, features, options, llvm::Reloc::PIC_, llvm::None, level));
  if (!machine)
    error = "LLVM could not create a target machine for " + triple + " (" + cpuName + ")";
  return machine;
}

int64_t vectorRegisterBytes(const llvm::TargetMachine &machine) {
  const llvm::MCSubtargetInfo *subtarget = machine.getMCSubtargetInfo();
  if (subtarget && subtarget->checkFeatures("+avx512f"))
    return 64;
  if (subtarget && subtarget->checkFeatures("+avx"))
    return 32;
  return 16;
}

void setTarget(llvm::Module &module, llvm::TargetMachine &machine) {
  module.setTargetTriple(machine.getTargetTriple().str());
  module.setDataLayout(machine.createDataLayout());
}

void optimizeModule(llvm::Module &module, llvm::TargetMachine &machine) {
  setTarget(module, machine);
  capPartialUnrolling(machine);

  llvm::TargetLibraryInfoImpl libraryInfo(machine.getTargetTriple());
  libraryInfo.addVectorizableFunctionsFromVecLib(llvm::TargetLibraryInfoImpl::LIBMVEC_X86);
  const llvm::MCSubtargetInfo *subtarget = machine.getMCSubtargetInfo();
  addGlibcVectorMath(libraryInfo, subtarget && subtarget->checkFeatures("+avx2"));
  if (subtarget && subtarget->checkFeatures("+avx512f")) {
    addGlibcAvx512Math(libraryInfo);
    usePreferredVectorWidth(module, 512);
  }
  prepareTargetMath(module, libraryInfo, subtarget);

  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager sccs;
  llvm::ModuleAnalysisManager modules;
  llvm::PassBuilder builder(&machine);
  functions.registerPass([&] { return llvm::TargetLibraryAnalysis(libraryInfo); });
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(sccs);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, sccs, modules);
  llvm::ModulePassManager pipeline =
      builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  pipeline.run(module, modules);
  finishTargetMath(module);
}

bool emitObject(llvm::Module &module, llvm::TargetMachine &machine, std::string &object,
                std::string &error) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream out(buffer);
  llvm::legacy::PassManager passes;
  if (machine.addPassesToEmitFile(passes, out, nullptr, llvm::CGFT_ObjectFile)) {
    error = "LLVM cannot emit an object file for this target";
    return false;
  }
  passes.run(module);
  object.assign(buffer.begin(), buffer.end());
  return true;
}

} // namespace shardc::llvmgen
