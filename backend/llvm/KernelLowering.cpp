// The building blocks every part of the backend emits with: element types,
// addresses, loads and stores, loops, runtime declarations.
#include "backend/llvm/Lowering.h"

#include <stdexcept>

namespace shardc::llvmgen {

llvm::Value *KernelLowering::buffer(const Value *v) const {
  auto it = buffers_.find(v);
  if (it != buffers_.end())
    return it->second;
  llvm::Value *pointer = bufferSource ? bufferSource(v) : nullptr;
  if (!pointer)
    throw std::logic_error("llvm backend: %" + v->name + " has no buffer");
  return buffers_[v] = pointer;
}

void KernelLowering::setBuffer(const Value *v, llvm::Value *bufferPtr) { buffers_[v] = bufferPtr; }

llvm::Value *KernelLowering::scratch(int64_t bytes) {
  auto *i8p = builder.getInt8PtrTy();
  llvm::FunctionCallee alloc = runtimeFunction(
      "shardrt_alloc", llvm::FunctionType::get(i8p, {i8p, builder.getInt64Ty()}, false));
  llvm::Value *buffer = builder.CreateCall(alloc, {runtimeContext, i64(bytes)}, "scratch");
  scratch_.push_back(buffer);
  return buffer;
}

void KernelLowering::freeScratch() {
  auto *i8p = builder.getInt8PtrTy();
  llvm::FunctionCallee release =
      runtimeFunction("shardrt_free", llvm::FunctionType::get(builder.getVoidTy(), {i8p}, false));
  for (llvm::Value *buffer : scratch_)
    builder.CreateCall(release, {buffer});
  scratch_.clear();
}

llvm::Type *KernelLowering::elementType(DType t) {
  switch (t) {
  case DType::F32:
    return builder.getFloatTy();
  case DType::F64:
    return builder.getDoubleTy();
  case DType::I32:
    return builder.getInt32Ty();
  case DType::I64:
    return builder.getInt64Ty();
  case DType::I1:
    return builder.getInt1Ty();
  }
  throw std::logic_error("llvm backend: unknown dtype");
}

llvm::Type *KernelLowering::memoryType(DType t) {
  return t == DType::I1 ? builder.getInt8Ty() : elementType(t);
}

llvm::Value *KernelLowering::i64(int64_t c) { return builder.getInt64(static_cast<uint64_t>(c)); }

llvm::Value *KernelLowering::elementAddress(llvm::Value *buffer, DType t, llvm::Value *linear) {
  llvm::Type *type = memoryType(t);
  llvm::Value *typed = builder.CreateBitCast(buffer, type->getPointerTo());
  return builder.CreateInBoundsGEP(type, typed, linear);
}

llvm::Value *KernelLowering::load(llvm::Value *buffer, DType t, llvm::Value *linear) {
  llvm::Value *loaded = builder.CreateLoad(memoryType(t), elementAddress(buffer, t, linear));
  if (t == DType::I1)
    return builder.CreateICmpNE(loaded, builder.getInt8(0));
  return loaded;
}

void KernelLowering::store(llvm::Value *buffer, DType t, llvm::Value *linear,
                           llvm::Value *element) {
  if (t == DType::I1)
    element = builder.CreateZExt(element, builder.getInt8Ty());
  builder.CreateStore(element, elementAddress(buffer, t, linear));
}

llvm::Value *KernelLowering::linearIndex(const std::vector<int64_t> &shape,
                                         const std::vector<llvm::Value *> &index) {
  llvm::Value *linear = i64(0);
  for (size_t d = 0; d < shape.size(); ++d)
    linear = builder.CreateAdd(builder.CreateMul(linear, i64(shape[d]), "", /*HasNUW=*/true,
                                                 /*HasNSW=*/true),
                               index[d], "", true, true);
  return linear;
}

void KernelLowering::emitLoop(llvm::Value *count, const std::function<void(llvm::Value *)> &body,
                              bool versionable) {
  llvm::Function *fn = builder.GetInsertBlock()->getParent();
  // Created before the loop's blocks, so isLoopInvariant sees the entry (and
  // the conditions fastPathIf builds there) outside the loop.
  llvm::BasicBlock *entry = llvm::BasicBlock::Create(context, "loop.entry", fn);
  llvm::BasicBlock *exit = llvm::BasicBlock::Create(context, "loop.end", fn);
  // Guarded: a zero-trip loop never enters its body.
  builder.CreateCondBr(builder.CreateICmpSGT(count, i64(0)), entry, exit);
  loopVersions_.emplace_back();
  loopVersions_.back().entry = entry;
  loopVersions_.back().versionable = versionable;
  llvm::BasicBlock *general = nullptr, *fast = nullptr;
  try {
    general = emitLoopCopy(count, body, entry, exit);
    if (!loopVersions_.back().conditions.empty()) {
      loopVersions_.back().emittingFast = true;
      fast = emitLoopCopy(count, body, entry, exit);
    }
  } catch (...) {
    loopVersions_.pop_back();
    throw;
  }
  LoopVersions versions = std::move(loopVersions_.back());
  loopVersions_.pop_back();
  if (fast && versions.nextAnswer != versions.answers.size())
    throw std::logic_error("llvm backend: the two copies of a versioned loop differ");
  llvm::IRBuilder<> atEntry(entry);
  if (fast)
    atEntry.CreateCondBr(atEntry.CreateAnd(versions.conditions), fast, general);
  else
    atEntry.CreateBr(general);
  builder.SetInsertPoint(exit);
}

llvm::BasicBlock *KernelLowering::emitLoopCopy(llvm::Value *count,
                                               const std::function<void(llvm::Value *)> &body,
                                               llvm::BasicBlock *entry, llvm::BasicBlock *exit) {
  llvm::BasicBlock *header =
      llvm::BasicBlock::Create(context, "loop", builder.GetInsertBlock()->getParent());
  builder.SetInsertPoint(header);
  llvm::PHINode *i = builder.CreatePHI(builder.getInt64Ty(), 2, "i");
  i->addIncoming(i64(0), entry);
  openLoops_.push_back(header);
  try {
    body(i);
  } catch (...) {
    openLoops_.pop_back();
    throw;
  }
  openLoops_.pop_back();
  llvm::Value *next = builder.CreateAdd(i, i64(1), "", true, true);
  i->addIncoming(next, builder.GetInsertBlock());
  builder.CreateCondBr(builder.CreateICmpSLT(next, count), header, exit);
  return header;
}

bool KernelLowering::fastPathIf(
    const std::function<llvm::Value *(llvm::IRBuilder<> &)> &makeCondition) {
  if (loopVersions_.empty() || !loopVersions_.back().versionable)
    return false;
  LoopVersions &versions = loopVersions_.back();
  if (versions.emittingFast) {
    if (versions.nextAnswer >= versions.answers.size())
      throw std::logic_error("llvm backend: the two copies of a versioned loop differ");
    return versions.answers[versions.nextAnswer++];
  }
  llvm::IRBuilder<> atEntry(versions.entry); // no terminator yet: appends
  llvm::Value *condition = makeCondition(atEntry);
  if (auto *constant = llvm::dyn_cast<llvm::ConstantInt>(condition)) {
    versions.answers.push_back(constant->isOne());
    return constant->isOne();
  }
  versions.conditions.push_back(condition);
  versions.answers.push_back(true);
  return false;
}

bool KernelLowering::isLoopInvariant(const llvm::Value *v) const {
  const auto *instruction = llvm::dyn_cast<llvm::Instruction>(v);
  if (!instruction || openLoops_.empty())
    return true;
  // Blocks are appended as they are created, so the loop's own blocks (and
  // any created since) follow its header.
  llvm::BasicBlock *header = openLoops_.back();
  for (auto block = header->getIterator(); block != header->getParent()->end(); ++block)
    if (&*block == instruction->getParent())
      return false;
  return true;
}

void KernelLowering::emitLoopNest(
    const std::vector<int64_t> &shape,
    const std::function<void(const std::vector<llvm::Value *> &)> &body, bool versionable) {
  std::vector<llvm::Value *> index;
  std::function<void(size_t)> nest = [&](size_t dim) {
    if (dim == shape.size()) {
      body(index);
      return;
    }
    emitLoop(
        i64(shape[dim]),
        [&](llvm::Value *i) {
          index.push_back(i);
          nest(dim + 1);
          index.pop_back();
        },
        versionable && dim + 1 == shape.size());
  };
  nest(0);
}

llvm::FunctionCallee KernelLowering::runtimeFunction(const std::string &name,
                                                     llvm::FunctionType *type) {
  return module.getOrInsertFunction(name, type);
}

int64_t KernelLowering::meshIndex(const Mesh *mesh) const {
  auto it = meshIndices.find(mesh);
  if (it == meshIndices.end())
    throw std::logic_error("llvm backend: a mesh missing from the program description");
  return it->second;
}

int64_t KernelLowering::opId(const Op &op) const {
  auto it = opIds.find(&op);
  return it == opIds.end() ? -1 : it->second;
}

} // namespace shardc::llvmgen
