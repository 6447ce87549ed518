// lowerProgram: the partitioned module -> the program description, the
// kernel and main(). The kernel walks @main's body in order:
//   - a manual_computation runs its body on the ranks that hold a place on
//     its mesh (the others skip it), on local buffers;
//   - a `reshard` between meshes at the top level moves the value with
//     shardrt_redistribute (every rank takes part);
//   - other top-level ops (a program without meshes) run on every rank;
//   - @main's results are copied into the runtime's output buffers.
//   - `for`, `while` and `if` (in a manual body, or at the top level of a
//     program without meshes) are loops and branches of the kernel around
//     the calls of their regions' ops (KernelControlFlow.cpp; their storage:
//     KernelPlan.h). Their predicates must be the same on every rank (the
//     partitioner replicates them), or collectives inside would deadlock.
// Inside a block, each op is lowered by its family: elemental ops (fused
// chains, Elemental*.cpp), contractions (Contraction*.cpp), collectives
// (Collectives.cpp); every op is timed for --profile.
#include "backend/llvm/Codegen.h"

#include "backend/llvm/KernelEmitter.h"

#include <llvm/ADT/Triple.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/Support/Host.h>

namespace shardc::llvmgen {
namespace {

const Function &mainFunction(const shardc::Module &spmd) {
  const Function *main = spmd.findFunction("main");
  if (!main)
    throw CodegenError(Loc{}, "the program has no func @main: nothing to compile into an "
                              "executable");
  return *main;
}

/// An output on a mesh none of whose devices is a rank of the program would
/// be written by nobody: the partitioner must never leave one (a compiler
/// bug, reported as an internal error, not a wrong result).
void checkHeldByARank(const shardc::Module &spmd, const Sharding *sharding) {
  if (!sharding)
    return; // on every device
  const Mesh *mesh = spmd.findMesh(sharding->meshName);
  if (!mesh)
    throw std::logic_error("an output names the unknown mesh @" + sharding->meshName);
  const int64_t devices = spmd.deviceCount();
  if (mesh->deviceIds.empty())
    return; // devices 0..N-1
  for (int64_t id : mesh->deviceIds)
    if (id >= 0 && id < devices)
      return;
  throw std::logic_error("an output on mesh @" + mesh->name + " is held by no rank of the " +
                         std::to_string(devices) + "-device program");
}

/// Makes `kernel` run with denormal floats flushed to zero: MXCSR's FTZ
/// (results) and DAZ (operands) bits set on entry, the caller's MXCSR back
/// before every return. The kernel units it calls, OpenBLAS and the
/// runtime's collectives run in that mode too; the runtime's reading and
/// writing of inputs and outputs do not.
void flushDenormalsIn(llvm::Function &kernel) {
  if (!canFlushDenormals()) // the driver checks --flush-denormals first
    throw std::logic_error("flushing denormals needs an x86 CPU");
  llvm::Module &module = *kernel.getParent();
  llvm::Function *save = llvm::Intrinsic::getDeclaration(&module, llvm::Intrinsic::x86_sse_stmxcsr);
  llvm::Function *load = llvm::Intrinsic::getDeclaration(&module, llvm::Intrinsic::x86_sse_ldmxcsr);
  llvm::BasicBlock &entry = kernel.getEntryBlock();
  llvm::IRBuilder<> b(&entry, entry.getFirstInsertionPt());
  llvm::AllocaInst *saved = b.CreateAlloca(b.getInt32Ty(), nullptr, "mxcsr.saved");
  llvm::AllocaInst *flushed = b.CreateAlloca(b.getInt32Ty(), nullptr, "mxcsr.flushed");
  b.CreateCall(save, {b.CreateBitCast(saved, b.getInt8PtrTy())});
  constexpr uint32_t kFlushToZero = 1u << 15, kDenormalsAreZero = 1u << 6;
  b.CreateStore(
      b.CreateOr(b.CreateLoad(b.getInt32Ty(), saved), b.getInt32(kFlushToZero | kDenormalsAreZero)),
      flushed);
  b.CreateCall(load, {b.CreateBitCast(flushed, b.getInt8PtrTy())});
  std::vector<llvm::ReturnInst *> returns;
  for (llvm::BasicBlock &block : kernel)
    if (auto *ret = llvm::dyn_cast<llvm::ReturnInst>(block.getTerminator()))
      returns.push_back(ret);
  for (llvm::ReturnInst *ret : returns) {
    b.SetInsertPoint(ret);
    b.CreateCall(load, {b.CreateBitCast(saved, b.getInt8PtrTy())});
  }
}

/// `int main(int argc, char **argv) { return shardrt_main(&program, kernel, argc, argv); }`
void emitMain(llvm::Module &module, llvm::GlobalVariable *program, llvm::Function *kernel) {
  llvm::LLVMContext &context = module.getContext();
  llvm::IRBuilder<> b(context);
  auto *argvType = b.getInt8PtrTy()->getPointerTo();
  auto *mainType = llvm::FunctionType::get(b.getInt32Ty(), {b.getInt32Ty(), argvType}, false);
  auto *main = llvm::Function::Create(mainType, llvm::GlobalValue::ExternalLinkage, "main", module);
  b.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", main));
  llvm::FunctionCallee shardrtMain = module.getOrInsertFunction(
      "shardrt_main",
      llvm::FunctionType::get(b.getInt32Ty(),
                              {program->getType(), kernel->getType(), b.getInt32Ty(), argvType},
                              false));
  b.CreateRet(b.CreateCall(shardrtMain, {program, kernel, main->getArg(0), main->getArg(1)}));
}

} // namespace

bool canFlushDenormals() { return llvm::Triple(llvm::sys::getProcessTriple()).isX86(); }

LoweredProgram lowerProgram(const shardc::Module &spmd, llvm::LLVMContext &context,
                            const std::string &programName, ProgramFlags flags) {
  const Function &main = mainFunction(spmd);
  auto module = std::make_unique<llvm::Module>(programName, context);
  ProgramDescription description(*module, spmd);
  KernelEmitter kernel(*module, spmd, main, description, flags.vectorBytes);
  llvm::Function *kernelFunction = kernel.emit();
  if (flags.flushDenormals)
    flushDenormalsIn(*kernelFunction);

  std::vector<llvm::Constant *> inputs, outputs;
  for (const auto &param : main.body.args)
    inputs.push_back(description.tensor(param->name.c_str(), param->type,
                                        param->sharding ? &*param->sharding : nullptr));
  // An output is described from where its value lives (not from the
  // declared result, which may say nothing on a program of several meshes).
  for (const Value *result : main.body.returned) {
    const Sharding *sharding = result->sharding ? &*result->sharding : nullptr;
    checkHeldByARank(spmd, sharding);
    outputs.push_back(description.tensor(nullptr, result->type, sharding));
  }
  llvm::GlobalVariable *program =
      description.finish(programName, spmd.deviceCount(), inputs, outputs, flags.releaseScratch);
  emitMain(*module, program, kernelFunction);
  LoweredProgram lowered;
  lowered.driver = std::move(module);
  lowered.kernels = kernel.takeKernels();
  lowered.kernelCalls = kernel.kernelCalls();
  return lowered;
}

} // namespace shardc::llvmgen
