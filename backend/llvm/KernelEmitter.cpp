// Emitting the kernel: storage, blocks, manual_computations, cross-mesh
// reshards, results.
#include "backend/llvm/KernelEmitter.h"

#include "backend/llvm/Codegen.h"

#include <llvm/IR/Function.h>
#include <llvm/Transforms/Utils/ModuleUtils.h>

namespace shardc::llvmgen {

KernelEmitter::KernelEmitter(llvm::Module &module, const shardc::Module &program,
                             const Function &main, ProgramDescription &description,
                             int64_t vectorBytes)
    : module_(module), program_(program), main_(main), description_(description),
      vectorBytes_(vectorBytes), builder_(module.getContext()), plan_(program, main) {}

llvm::FunctionCallee KernelEmitter::runtime(const char *name, llvm::Type *result,
                                            std::vector<llvm::Type *> params) {
  return module_.getOrInsertFunction(name, llvm::FunctionType::get(result, params, false));
}

llvm::Function *KernelEmitter::emit() {
  llvm::LLVMContext &context = module_.getContext();
  auto *i8p = builder_.getInt8PtrTy();
  auto *kernelType = llvm::FunctionType::get(
      builder_.getVoidTy(), {i8p, i8p->getPointerTo(), i8p->getPointerTo()}, false);
  auto *kernel = llvm::Function::Create(kernelType, llvm::GlobalValue::InternalLinkage,
                                        "shardc.kernel", module_);
  kernel->addFnAttr(llvm::Attribute::NoUnwind); // no unwind tables for thousands of calls
  builder_.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", kernel));
  k_ = std::make_unique<KernelLowering>(context, module_, builder_, program_, kernel->getArg(0));
  k_->vectorBytes = vectorBytes_;
  for (size_t i = 0; i < program_.meshes.size(); ++i)
    k_->meshIndices[program_.meshes[i].get()] = static_cast<int64_t>(i);

  kernelContext_ = kernel->getArg(0);
  kernelInputs_ = kernel->getArg(1);
  kernelOutputs_ = kernel->getArg(2);
  kernelArgs_ = builder_.CreateAlloca(i8p, k_->i64(1), "kernel.args");
  if (plan_.arenaBytes() > 0)
    arena_ = emitArena(kernel);
  useFrame(kernelContext_, arena_, kernelInputs_, kernelOutputs_, nullptr);
  lowerBlock(main_.body, /*topLevel=*/true);
  copyResults(kernelOutputs_);
  builder_.CreateRetVoid();
  kernelArgs_->setOperand(0, k_->i64(static_cast<int64_t>(mostKernelArgs_)));
  return kernel;
}

// The arena is allocated by the first run and kept for the next ones
// (--repeat K): a fresh allocation per run would pay its page faults every
// time. A destructor frees it at exit.
llvm::Value *KernelEmitter::emitArena(llvm::Function *kernel) {
  llvm::LLVMContext &context = module_.getContext();
  auto *i8p = builder_.getInt8PtrTy();
  auto *slot = new llvm::GlobalVariable(module_, i8p, false, llvm::GlobalValue::InternalLinkage,
                                        llvm::ConstantPointerNull::get(i8p), "shardc.arena");
  llvm::Value *kept = builder_.CreateLoad(i8p, slot);
  auto *allocate = llvm::BasicBlock::Create(context, "arena.alloc", kernel);
  auto *ready = llvm::BasicBlock::Create(context, "arena.ready", kernel);
  llvm::BasicBlock *entry = builder_.GetInsertBlock();
  builder_.CreateCondBr(builder_.CreateIsNull(kept), allocate, ready);
  builder_.SetInsertPoint(allocate);
  llvm::Value *fresh =
      builder_.CreateCall(runtime("shardrt_alloc", i8p, {i8p, builder_.getInt64Ty()}),
                          {kernelContext_, k_->i64(plan_.arenaBytes())});
  builder_.CreateStore(fresh, slot);
  builder_.CreateBr(ready);
  builder_.SetInsertPoint(ready);
  llvm::PHINode *arena = builder_.CreatePHI(i8p, 2, "arena");
  arena->addIncoming(kept, entry);
  arena->addIncoming(fresh, allocate);

  auto *dtor =
      llvm::Function::Create(llvm::FunctionType::get(builder_.getVoidTy(), false),
                             llvm::GlobalValue::InternalLinkage, "shardc.free_arena", module_);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", dtor));
  b.CreateCall(runtime("shardrt_free", b.getVoidTy(), {i8p}), {b.CreateLoad(i8p, slot)});
  b.CreateRetVoid();
  llvm::appendToGlobalDtors(module_, dtor, 0);
  return arena;
}

void KernelEmitter::placeAtFrameStart(llvm::IRBuilder<> &b, llvm::BasicBlock *entry) {
  if (entry)
    b.SetInsertPoint(entry, entry->begin());
  else
    b.SetInsertPoint(builder_.GetInsertBlock(), builder_.GetInsertPoint());
}

void KernelEmitter::useFrame(llvm::Value *context, llvm::Value *arena, llvm::Value *inputs,
                             llvm::Value *outputs, llvm::BasicBlock *entry) {
  k_->runtimeContext = context;
  k_->resetBuffers();
  k_->bufferSource = [this, arena, inputs, outputs, entry](const Value *v) -> llvm::Value * {
    if (!plan_.hasStorage(v))
      return nullptr;
    const Value *storage = plan_.storageOf(v);
    llvm::IRBuilder<> b(builder_.getContext());
    placeAtFrameStart(b, entry);
    auto runtimeBuffer = [&](llvm::Value *buffers, int64_t index) {
      return b.CreateLoad(
          b.getInt8PtrTy(),
          b.CreateConstInBoundsGEP1_64(b.getInt8PtrTy(), buffers, static_cast<uint64_t>(index)),
          "%" + storage->name);
    };
    if (int64_t input = plan_.inputIndexOf(storage); input >= 0)
      return runtimeBuffer(inputs, input);
    if (int64_t output = plan_.outputIndexOf(storage); output >= 0)
      return runtimeBuffer(outputs, output);
    return b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), arena,
                                        static_cast<uint64_t>(plan_.arenaOffset(storage)),
                                        "%" + storage->name);
  };
  k_->groupIndex = [this, context, entry](const std::vector<AxisRef> &axes) -> llvm::Value * {
    const Mesh *mesh = k_->currentMesh();
    if (!mesh)
      throw CodegenError(Loc{}, "a device's group index outside a manual_computation");
    llvm::IRBuilder<> b(builder_.getContext());
    placeAtFrameStart(b, entry);
    llvm::Constant *group = description_.group(*mesh, axes);
    return b.CreateCall(
        runtime("shardrt_group_index", b.getInt64Ty(), {b.getInt8PtrTy(), group->getType()}),
        {context, group}, "group_index");
  };
}

int64_t KernelEmitter::profileId(const Op &op) {
  std::string label;
  for (const auto &result : op.results)
    label += (label.empty() ? "%" : ", %") + result->name;
  label += std::string(label.empty() ? "" : " = ") + op.name();
  if (op.loc.known()) {
    std::string file = op.loc.file->name();
    size_t slash = file.rfind('/');
    label += " (" + (slash == std::string::npos ? file : file.substr(slash + 1)) + ":" +
             std::to_string(op.loc.line) + ":" + std::to_string(op.loc.col) + ")";
  }
  int64_t id = description_.addOpName(label);
  k_->opIds[&op] = id;
  return id;
}

// The driver is straight-line code, one block for a whole program without
// control flow, and LLVM's fast register allocator and instruction selection
// at -O0 take more than linear time in a block's length: code generation of
// the driver took 0.15, 0.40, 0.98 and 2.68 s for programs of 2,500, 5,000,
// 10,000 and 20,000 ops. Ending the block every few ops (an unconditional
// branch to the next, nothing else changes: the driver's values are made
// again for each kernel call, and loops' phis take the block they are in)
// keeps each block short.
namespace {
constexpr int64_t kOpsPerDriverBlock = 64;
} // namespace

void KernelEmitter::splitLongBlock() {
  if (++opsInBlock_ < kOpsPerDriverBlock)
    return;
  opsInBlock_ = 0;
  llvm::BasicBlock *next =
      llvm::BasicBlock::Create(module_.getContext(), "ops", builder_.GetInsertBlock()->getParent());
  builder_.CreateBr(next);
  builder_.SetInsertPoint(next);
}

void KernelEmitter::lowerBlock(const Block &block, bool topLevel) {
  k_->setFusion(&plan_.fusion(block));
  for (const auto &opPtr : block.ops) {
    const Op &op = *opPtr;
    if (const SliceChain *chain = plan_.chainOf(op)) {
      if (&op == chain->ops.front())
        lowerChain(*chain);
      continue;
    }
    if (topLevel && op.kind == OpKind::ManualComputation) {
      lowerManual(op);
      k_->setFusion(&plan_.fusion(block));
    } else if (topLevel && op.kind == OpKind::Reshard) {
      lowerRedistribute(op);
    } else if (op.kind == OpKind::For || op.kind == OpKind::While || op.kind == OpKind::If) {
      if (op.kind == OpKind::For)
        lowerFor(op, topLevel);
      else if (op.kind == OpKind::While)
        lowerWhile(op, topLevel);
      else
        lowerIf(op, topLevel);
      k_->setFusion(&plan_.fusion(block));
    } else {
      lowerOp(op);
      splitLongBlock();
    }
  }
}

void KernelEmitter::lowerManual(const Op &op) {
  const ManualComputationParts parts = manualComputationParts(op);
  if (parts.inShardings.empty() && parts.outShardings.empty())
    throw CodegenError(op.loc, "manual_computation without in/out shardings");
  const Sharding &any =
      parts.inShardings.empty() ? parts.outShardings.front() : parts.inShardings.front();
  const Mesh &mesh = description_.meshOf(any);
  // The body runs once per device: every axis must be manual (the
  // partitioned form), or a collective's groups and each block's shape
  // would mean something else.
  bool allManual = parts.manualAxes.size() == mesh.axes.size();
  for (size_t i = 0; allManual && i < mesh.axes.size(); ++i)
    allManual = !parts.manualAxes[i].isSubAxis() && parts.manualAxes[i].name == mesh.axes[i].name;
  if (!allManual)
    throw CodegenError(op.loc, "manual_computation must make every axis of mesh @" + mesh.name +
                                   " manual, in mesh order (the partitioned form)");
  // Only the ranks with a place on the mesh run the body.
  auto *i8p = builder_.getInt8PtrTy();
  llvm::Value *position = builder_.CreateCall(
      runtime("shardrt_mesh_position", builder_.getInt64Ty(), {i8p, builder_.getInt64Ty()}),
      {k_->runtimeContext, k_->i64(description_.meshIndex(mesh))});
  llvm::Function *fn = builder_.GetInsertBlock()->getParent();
  auto *bodyBlock = llvm::BasicBlock::Create(module_.getContext(), "manual", fn);
  auto *after = llvm::BasicBlock::Create(module_.getContext(), "manual.end", fn);
  builder_.CreateCondBr(builder_.CreateICmpSGE(position, k_->i64(0)), bodyBlock, after);
  builder_.SetInsertPoint(bodyBlock);
  const Mesh *outer = k_->currentMesh();
  k_->setCurrentMesh(&mesh);
  lowerBlock(*op.body, /*topLevel=*/false);
  k_->setCurrentMesh(outer);
  builder_.CreateBr(after);
  // Buffer pointers loaded in the body do not dominate what follows (ranks
  // off the mesh skip it): load them again there.
  startBlock(after);
}

void KernelEmitter::lowerRedistribute(const Op &op) {
  const Value *from = op.operands.at(0);
  const Value *to = op.result();
  if (!from->sharding || !to->sharding)
    throw CodegenError(op.loc, "reshard between meshes needs both shardings");
  auto *i8p = builder_.getInt8PtrTy();
  auto *tensorPtr = description_.tensorType()->getPointerTo();
  int64_t id = profileId(op);
  builder_.CreateCall(
      runtime("shardrt_redistribute", builder_.getVoidTy(),
              {i8p, builder_.getInt64Ty(), tensorPtr, tensorPtr, i8p, i8p}),
      {k_->runtimeContext, k_->i64(id), description_.tensor(nullptr, from->type, &*from->sharding),
       description_.tensor(nullptr, to->type, &*to->sharding), k_->buffer(from), k_->buffer(to)});
}

void KernelEmitter::lowerOp(const Op &op) {
  if (op.kind == OpKind::ShardingConstraint || op.kind == OpKind::Reshard)
    return; // an alias of its operand's buffer (KernelPlan)
  if (op.kind == OpKind::ManualComputation)
    throw CodegenError(op.loc, "a manual_computation nested in another one is not lowered yet");
  bool elemental = isElementalOp(op.kind);
  if (elemental) {
    bool any = false;
    for (const auto &result : op.results)
      any |= k_->fusion().isMaterialized(result.get());
    if (!any)
      return; // fused into its consumer's loop
  }
  int64_t id = profileId(op);
  if (k_->fusion().isDeferredGather(op))
    return; // exchanged by its contraction's kernel, which records it under this op's id
  if (!elemental && opInfo(op.kind).group == OpGroup::Collective) {
    emitKernelCall([&](KernelLowering &k) { emitCollective(k, description_, op); }); // timed inside
    return;
  }
  auto *i8p = builder_.getInt8PtrTy();
  llvm::FunctionCallee begin =
      runtime("shardrt_op_begin", builder_.getVoidTy(), {i8p, builder_.getInt64Ty()});
  llvm::FunctionCallee end =
      runtime("shardrt_op_end", builder_.getVoidTy(), {i8p, builder_.getInt64Ty()});
  if (!elemental && op.kind != OpKind::Matmul && op.kind != OpKind::Einsum)
    throw CodegenError(op.loc,
                       std::string("the LLVM backend cannot lower '") + op.name() + "' here");
  builder_.CreateCall(begin, {kernelContext_, k_->i64(id)});
  emitKernelCall([&](KernelLowering &k) {
    if (elemental) {
      for (const auto &result : op.results)
        if (k.fusion().isMaterialized(result.get()))
          emitElementalOp(k, result.get());
    } else if (auto gathered = k.fusion().gatheredOperands.find(&op);
               gathered != k.fusion().gatheredOperands.end()) {
      emitGatherContraction(k, description_, op, gathered->second);
    } else {
      emitContraction(k, op);
    }
    k.freeScratch();
  });
  builder_.CreateCall(end, {kernelContext_, k_->i64(id)});
}

// Each op of the shadow is a kernel of its own, as any op; the views'
// pointers move with the slice, the chain's own storage stays put (and in
// cache). Each kernel call is profiled, so an op's profile counts one call
// per slice.
void KernelEmitter::lowerChain(const SliceChain &chain) {
  const FusionPlan *outer = &k_->fusion();
  k_->emitLoopNest(chain.sliceCounts(), [&](const std::vector<llvm::Value *> &slice) {
    sliceOffsets_.clear();
    for (const auto &[shadow, view] : chain.views) {
      llvm::Value *elements = k_->i64(0);
      for (size_t a = 0; a < slice.size(); ++a)
        if (view.strides[a] != 0)
          elements = builder_.CreateAdd(
              elements, builder_.CreateMul(slice[a], k_->i64(chain.tile[a] * view.strides[a])));
      // (Named after the value: --emit=llvm shows which values are sliced.)
      sliceOffsets_[shadow] = builder_.CreateMul(
          elements, k_->i64(dtypeBytes(view.original->type.dtype)), view.original->name + ".slice");
    }
    k_->setFusion(&chain.fusion);
    for (const auto &op : chain.shadow.ops)
      lowerOp(*op);
    k_->setFusion(outer);
  });
  sliceOffsets_.clear();
  k_->resetBuffers(); // (pointers made in the loop do not dominate what follows)
}

void KernelEmitter::copyResults(llvm::Value *outputs) {
  auto *i8p = builder_.getInt8PtrTy();
  for (size_t i = 0; i < main_.body.returned.size(); ++i) {
    const Value *v = main_.body.returned[i];
    if (plan_.outputIndexOf(v) == static_cast<int64_t>(i))
      continue; // computed in place
    const TensorType local = plan_.hasStorage(v) ? plan_.localType(v) : localTypeOf(program_, *v);
    llvm::Value *out = builder_.CreateLoad(
        i8p, builder_.CreateConstInBoundsGEP1_64(i8p, outputs, static_cast<uint64_t>(i)));
    builder_.CreateMemCpy(out, llvm::MaybeAlign(1), k_->buffer(v), llvm::MaybeAlign(1),
                          local.bytes());
  }
}

} // namespace shardc::llvmgen
