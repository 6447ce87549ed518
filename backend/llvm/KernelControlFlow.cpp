// Control flow in the kernel function: `for`, `while` and `if` become loops
// and branches of the kernel around the calls of their regions' ops (each op
// still in a function of its own), on the storage KernelPlan gives them.
#include "backend/llvm/KernelEmitter.h"

#include "backend/llvm/Codegen.h"

#include <llvm/IR/Metadata.h>

namespace shardc::llvmgen {

void KernelEmitter::startBlock(llvm::BasicBlock *block) {
  builder_.SetInsertPoint(block);
  k_->resetBuffers();
}

void KernelEmitter::copyStorage(const Value *to, const Value *from) {
  if (plan_.storageOf(to) == plan_.storageOf(from))
    return;
  const TensorType &type = plan_.localType(to);
  builder_.CreateMemCpy(k_->buffer(to), llvm::MaybeAlign(1), k_->buffer(from), llvm::MaybeAlign(1),
                        type.bytes());
}

llvm::Value *KernelEmitter::loadPredicate(const Value *v) {
  if (v->type.dtype != DType::I1 || v->type.rank() != 0)
    throw CodegenError(v->loc, "a predicate must be a tensor<i1>: %" + v->name);
  return k_->load(k_->buffer(v), DType::I1, k_->i64(0));
}

// Two phases: returned values that are other carried values first go to
// their temporaries, then every copy lands in the carried storage.
void KernelEmitter::copyCarried(const Op &loop) {
  const Block &body = *loop.body;
  for (size_t i = 0; i < body.returned.size(); ++i)
    if (const Value *temporary = plan_.copyTemporary(loop, i))
      copyStorage(temporary, body.returned[i]);
  for (size_t i = 0; i < body.returned.size(); ++i) {
    const Value *temporary = plan_.copyTemporary(loop, i);
    copyStorage(KernelPlan::carriedStorage(loop, i), temporary ? temporary : body.returned[i]);
  }
}

// for %i = LB to UB step S: the trip count is known here, so the kernel
// counts iterations t = 0, 1, ... and stores LB + t*S into %i's storage
// (no overflow near the i64 limits).
void KernelEmitter::lowerFor(const Op &op, bool topLevel) {
  const int64_t lower = op.get(attrs::lower, int64_t{0});
  const int64_t upper = op.get(attrs::upper, int64_t{0});
  const int64_t step = op.get(attrs::loopStep, int64_t{1});
  if (step <= 0)
    throw CodegenError(op.loc, "for - the step must be positive: " + std::to_string(step));
  int64_t trips = 0;
  if (lower < upper) {
    const auto span = static_cast<uint64_t>(upper) - static_cast<uint64_t>(lower);
    trips = static_cast<int64_t>((span - 1) / static_cast<uint64_t>(step) + 1);
  }
  for (size_t i = 0; i < op.operands.size(); ++i)
    copyStorage(KernelPlan::carriedStorage(op, i), op.operands[i]);
  llvm::LLVMContext &context = module_.getContext();
  llvm::Function *fn = builder_.GetInsertBlock()->getParent();
  llvm::BasicBlock *before = builder_.GetInsertBlock();
  auto *header = llvm::BasicBlock::Create(context, "for.header", fn);
  auto *bodyBlock = llvm::BasicBlock::Create(context, "for.body", fn);
  auto *exit = llvm::BasicBlock::Create(context, "for.end", fn);
  builder_.CreateBr(header);

  startBlock(header);
  llvm::PHINode *trip = builder_.CreatePHI(builder_.getInt64Ty(), 2, "trip");
  trip->addIncoming(k_->i64(0), before);
  builder_.CreateCondBr(builder_.CreateICmpSLT(trip, k_->i64(trips)), bodyBlock, exit);

  startBlock(bodyBlock);
  const Value *index = op.body->args.at(0).get();
  llvm::Value *value = builder_.CreateAdd(k_->i64(lower), builder_.CreateMul(trip, k_->i64(step)));
  k_->store(k_->buffer(index), DType::I64, k_->i64(0), value);
  lowerBlock(*op.body, topLevel);
  copyCarried(op);
  trip->addIncoming(builder_.CreateAdd(trip, k_->i64(1)), builder_.GetInsertBlock());
  // Kept a loop: unrolled, the kernel would grow with the trip count times
  // the body's calls (and so would the time to compile it), for nothing: the
  // work is in the calls.
  llvm::BranchInst *back = builder_.CreateBr(header);
  llvm::MDNode *disable =
      llvm::MDNode::get(context, llvm::MDString::get(context, "llvm.loop.unroll.disable"));
  llvm::MDNode *loop = llvm::MDNode::getDistinct(context, {nullptr, disable});
  loop->replaceOperandWith(0, loop);
  back->setMetadata(llvm::LLVMContext::MD_loop, loop);
  startBlock(exit);
}

void KernelEmitter::lowerWhile(const Op &op, bool topLevel) {
  if (!op.cond || op.cond->returned.size() != 1)
    throw CodegenError(op.loc, "while - the cond region must return one predicate");
  for (size_t i = 0; i < op.operands.size(); ++i)
    copyStorage(KernelPlan::carriedStorage(op, i), op.operands[i]);
  llvm::LLVMContext &context = module_.getContext();
  llvm::Function *fn = builder_.GetInsertBlock()->getParent();
  auto *header = llvm::BasicBlock::Create(context, "while.cond", fn);
  auto *bodyBlock = llvm::BasicBlock::Create(context, "while.body", fn);
  auto *exit = llvm::BasicBlock::Create(context, "while.end", fn);
  builder_.CreateBr(header);

  startBlock(header);
  lowerBlock(*op.cond, topLevel);
  builder_.CreateCondBr(loadPredicate(op.cond->returned[0]), bodyBlock, exit);

  startBlock(bodyBlock);
  lowerBlock(*op.body, topLevel);
  copyCarried(op);
  builder_.CreateBr(header);
  startBlock(exit);
}

void KernelEmitter::lowerIf(const Op &op, bool topLevel) {
  if (op.operands.size() != 1)
    throw CodegenError(op.loc, "if - expects one predicate");
  llvm::LLVMContext &context = module_.getContext();
  llvm::Function *fn = builder_.GetInsertBlock()->getParent();
  auto *thenBlock = llvm::BasicBlock::Create(context, "if.then", fn);
  auto *elseBlock = llvm::BasicBlock::Create(context, "if.else", fn);
  auto *exit = llvm::BasicBlock::Create(context, "if.end", fn);
  builder_.CreateCondBr(loadPredicate(op.operands[0]), thenBlock, elseBlock);
  for (auto [branch, start] :
       {std::pair{op.body.get(), thenBlock}, {op.elseBody.get(), elseBlock}}) {
    startBlock(start);
    if (branch) {
      lowerBlock(*branch, topLevel);
      for (size_t i = 0; i < op.results.size() && i < branch->returned.size(); ++i)
        copyStorage(op.result(i), branch->returned[i]);
    }
    builder_.CreateBr(exit);
  }
  startBlock(exit);
}

} // namespace shardc::llvmgen
