// The kernel function of a generated executable:
//   void shardc.kernel(shardrt_context *ctx, const void *const *inputs,
//                      void *const *outputs)
// emitted from @main's body by the plan of KernelPlan.h (see Codegen.cpp for
// the walk): the driver. Each op is emitted into a kernel module of its own
// (KernelUnit.h), which the driver calls in order with the op's buffers: LLVM
// optimizes each separately, so the time to compile grows with the number of
// distinct kernels, not faster (one function of 10k ops took O3 tens of
// seconds), and nothing is lost, since ops meet only through memory. A
// program that repeats its layers calls the same few kernels many times.
#pragma once

#include "backend/llvm/KernelPlan.h"
#include "backend/llvm/KernelUnit.h"
#include "backend/llvm/Lowering.h"
#include "backend/llvm/ProgramDescription.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace shardc::llvmgen {

class KernelEmitter {
public:
  KernelEmitter(llvm::Module &module, const shardc::Module &program, const Function &main,
                ProgramDescription &description, int64_t vectorBytes);
  llvm::Function *emit();
  /// The distinct kernels the driver calls, in the order first called.
  std::vector<KernelUnit> takeKernels() { return std::move(kernels_); }
  /// How many calls of kernels the driver makes (at least kernels().size()).
  int64_t kernelCalls() const { return kernelCalls_; }

private:
  llvm::Module &module_;
  const shardc::Module &program_;
  const Function &main_;
  ProgramDescription &description_;
  int64_t vectorBytes_;
  llvm::IRBuilder<> builder_;
  KernelPlan plan_;
  std::unique_ptr<KernelLowering> k_;
  llvm::Value *arena_ = nullptr;
  llvm::Value *kernelContext_ = nullptr, *kernelInputs_ = nullptr, *kernelOutputs_ = nullptr;
  std::vector<KernelUnit> kernels_;
  std::map<std::string, size_t> kernelByKey_; // key -> index in kernels_
  int64_t kernelCalls_ = 0;
  /// The driver's array of kernel arguments (an alloca at its entry, sized
  /// for the kernel that takes the most when the driver is done).
  llvm::AllocaInst *kernelArgs_ = nullptr;
  size_t mostKernelArgs_ = 1;

  /// The arena, allocated on the first run and kept (see the .cpp).
  llvm::Value *emitArena(llvm::Function *kernel);
  /// Buffer pointers and group indices are computed in the function being
  /// emitted: from its `context`, `arena`, `inputs` and `outputs` arguments,
  /// at `entry` (null: where the builder is).
  void useFrame(llvm::Value *context, llvm::Value *arena, llvm::Value *inputs, llvm::Value *outputs,
                llvm::BasicBlock *entry);
  /// Puts `b` at the start of `entry`, or where the builder is when null.
  void placeAtFrameStart(llvm::IRBuilder<> &b, llvm::BasicBlock *entry);
  /// Emits `body` into a kernel module of its own (or finds the equal
  /// kernel emitted before) and a call of it here with its arguments.
  void emitKernelCall(const std::function<void(KernelLowering &)> &body);
  /// One argument of a kernel: a buffer (its storage) or a pointer constant
  /// of the driver module (a description constant, an op id as inttoptr).
  using KernelArgument = std::pair<const Value *, llvm::Constant *>;
  /// Emits `body` as a kernel module in `context` (the unit owns it when
  /// `owned`); `arguments` receives what the driver passes.
  KernelUnit emitKernel(llvm::LLVMContext &context, std::unique_ptr<llvm::LLVMContext> owned,
                        const std::function<void(KernelLowering &)> &body,
                        std::vector<KernelArgument> &arguments);
  /// Where candidate kernels are emitted to find their key: most are equal
  /// to one emitted before and are dropped, and a context of their own
  /// each would cost more than the rest of their lowering.
  std::unique_ptr<llvm::LLVMContext> scratch_;
  void lowerBlock(const Block &block, bool topLevel);
  /// Ends the driver's basic block after every kOpsPerDriverBlock ops lowered
  /// (KernelEmitter.cpp says why).
  void splitLongBlock();
  int64_t opsInBlock_ = 0;
  void lowerManual(const Op &op);
  void lowerRedistribute(const Op &op);
  void lowerOp(const Op &op);
  /// A slice chain (SliceChain.h): a loop over its slices, calling the
  /// kernels of its shadow's ops on each (KernelEmitter.cpp).
  void lowerChain(const SliceChain &chain);
  /// While a chain is emitted: the byte offset of each view in its value's
  /// buffer at the current slice.
  std::map<const Value *, llvm::Value *> sliceOffsets_;
  // Control flow (KernelControlFlow.cpp): branches and loops of the kernel
  // function around the calls of the regions' ops.
  void lowerFor(const Op &op, bool topLevel);
  void lowerWhile(const Op &op, bool topLevel);
  void lowerIf(const Op &op, bool topLevel);
  /// Copies the whole storage of `from` into that of `to`.
  void copyStorage(const Value *to, const Value *from);
  /// A loop body's returned values into the carried storage.
  void copyCarried(const Op &loop);
  /// Continues emitting at the start of `block` (buffer pointers are made
  /// again: one computed in another block may not dominate this one).
  void startBlock(llvm::BasicBlock *block);
  /// True when `v` (a materialized tensor<i1>) holds true.
  llvm::Value *loadPredicate(const Value *v);
  void copyResults(llvm::Value *outputs);
  /// The profile label of `op`, e.g. "%h = matmul (mlp.shd:7)".
  int64_t profileId(const Op &op);
  llvm::FunctionCallee runtime(const char *name, llvm::Type *result,
                               std::vector<llvm::Type *> params);
};

/// Lowers a collective (all_gather, all_reduce, reduce_scatter, all_to_all,
/// all_slice, collective_permute, axis_index) inside a manual body to its
/// libshardrt call (Collectives.cpp).
void emitCollective(KernelLowering &k, ProgramDescription &description, const Op &op);

/// Lowers contraction `op` together with the all_gather of its operand
/// (FusionPlan::gatheredOperands): the exchange overlapped with the compute
/// (GatherContraction.cpp).
void emitGatherContraction(KernelLowering &k, ProgramDescription &description, const Op &op,
                           const FusionPlan::GatheredOperand &gathered);

} // namespace shardc::llvmgen
