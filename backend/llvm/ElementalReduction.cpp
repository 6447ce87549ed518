// Reductions, one element at a time: element `index` of reduce_* loops over
// the reduced dims of the operand (which is fused: each operand element is
// read by exactly one result element) carrying the accumulator in a phi.
// Numerics as backend/interpreter/ReductionOps.cpp: float sums and means
// accumulate in double (with `reassoc`, so the loop vectorizes) and round
// once; integers wrap; max/min propagate NaN; an empty reduction gives the
// identity (mean: NaN). reduce_mean of integers is their sum, as there.
#include "backend/llvm/ElementalInternal.h"

#include <limits>

namespace shardc::llvmgen::elemental {
namespace {

/// for i in [0, count) (count > 0): acc = step(i, acc), starting from
/// `init`; returns the final acc. Leaves the builder after the loop.
llvm::Value *
emitAccumulatingLoop(KernelLowering &k, int64_t count, llvm::Value *init,
                     const std::function<llvm::Value *(llvm::Value *, llvm::Value *)> &step) {
  llvm::IRBuilder<> &b = k.builder;
  llvm::Function *fn = b.GetInsertBlock()->getParent();
  llvm::BasicBlock *pre = b.GetInsertBlock();
  llvm::BasicBlock *header = llvm::BasicBlock::Create(k.context, "reduce", fn);
  llvm::BasicBlock *exit = llvm::BasicBlock::Create(k.context, "reduce.end", fn);
  b.CreateBr(header);
  b.SetInsertPoint(header);
  llvm::PHINode *i = b.CreatePHI(b.getInt64Ty(), 2, "r");
  llvm::PHINode *acc = b.CreatePHI(init->getType(), 2, "acc");
  i->addIncoming(k.i64(0), pre);
  acc->addIncoming(init, pre);
  llvm::Value *next = step(i, acc);
  llvm::Value *nextI = b.CreateAdd(i, k.i64(1), "", true, true);
  i->addIncoming(nextI, b.GetInsertBlock());
  acc->addIncoming(next, b.GetInsertBlock());
  b.CreateCondBr(b.CreateICmpSLT(nextI, k.i64(count)), header, exit);
  b.SetInsertPoint(exit);
  return next;
}

struct Reduction {
  OpKind kind;
  DType dtype;         // the operand's and result's
  llvm::Type *accType; // double for float sums, i64 for i1, else the element type

  bool isMax() const { return kind == OpKind::ReduceMax; }
  bool isMinMax() const { return kind == OpKind::ReduceMax || kind == OpKind::ReduceMin; }

  llvm::Value *identity() const {
    if (isFloat(dtype))
      return isMinMax() ? llvm::ConstantFP::getInfinity(accType, /*Negative=*/isMax())
                        : llvm::ConstantFP::get(accType, 0.0);
    if (!isMinMax())
      return llvm::ConstantInt::get(accType, 0);
    // The type's min (for max) or max (for min); i1 accumulates in i64 from
    // int64's bounds, as the interpreter does.
    unsigned bits = accType->getIntegerBitWidth();
    return llvm::ConstantInt::get(accType, isMax() ? llvm::APInt::getSignedMinValue(bits)
                                                   : llvm::APInt::getSignedMaxValue(bits));
  }

  llvm::Value *combine(KernelLowering &k, llvm::Value *acc, llvm::Value *x) const {
    llvm::IRBuilder<> &b = k.builder;
    if (isFloat(dtype)) {
      if (isMinMax())
        return emitFloatMax(k, acc, x, isMax());
      llvm::Value *sum = b.CreateFAdd(acc, b.CreateFPExt(x, accType));
      if (auto *instruction = llvm::dyn_cast<llvm::Instruction>(sum))
        instruction->setHasAllowReassoc(true); // a vectorizable sum
      return sum;
    }
    if (dtype == DType::I1)
      x = b.CreateZExt(x, accType);
    if (!isMinMax())
      return b.CreateAdd(acc, x);
    // std::max(acc, x) = acc < x ? x : acc; std::min(acc, x) = x < acc ? x : acc.
    llvm::Value *takeX = isMax() ? b.CreateICmpSLT(acc, x) : b.CreateICmpSLT(x, acc);
    return b.CreateSelect(takeX, x, acc);
  }

  /// The result element from the final accumulator over `count` elements.
  llvm::Value *finish(KernelLowering &k, llvm::Value *acc, int64_t count) const {
    llvm::IRBuilder<> &b = k.builder;
    llvm::Type *target = k.elementType(dtype);
    if (!isFloat(dtype))
      return b.CreateTrunc(acc, target);
    if (kind == OpKind::ReduceMean) // 0 / 0 = NaN for an empty mean
      acc = b.CreateFDiv(acc, llvm::ConstantFP::get(accType, static_cast<double>(count)));
    return b.CreateFPCast(acc, target);
  }
};

} // namespace

llvm::Value *emitReductionElement(KernelLowering &k, const Op &op, ElementIndex &index) {
  const Value *x = op.operands[0];
  const std::vector<int64_t> &shape = x->type.shape;
  std::vector<bool> reduced(shape.size(), false);
  for (int64_t d : intListAttr(op, "dims")) {
    if (d < 0 || d >= static_cast<int64_t>(shape.size()))
      unsupported(op, "dims out of range");
    reduced[d] = true;
  }
  const Attribute *keepAttr = op.attr("keep_dims");
  bool keepDims = keepAttr && keepAttr->b;

  Reduction reduction{op.kind, x->type.dtype, nullptr};
  if (isFloat(reduction.dtype))
    reduction.accType =
        reduction.isMinMax() ? k.elementType(reduction.dtype) : k.builder.getDoubleTy();
  else
    reduction.accType =
        reduction.dtype == DType::I1 ? k.builder.getInt64Ty() : k.elementType(reduction.dtype);

  // The operand's index: kept dims from the result's index (read now, before
  // any loop opens), reduced dims from the loops.
  std::vector<llvm::Value *> dims(shape.size(), nullptr);
  std::vector<size_t> loopDims;
  int64_t count = 1;
  for (size_t d = 0, out = 0; d < shape.size(); ++d) {
    if (reduced[d]) {
      loopDims.push_back(d);
      count *= shape[d];
      out += keepDims ? 1 : 0;
    } else {
      dims[d] = index.dim(k, out++);
    }
  }
  if (count == 0)
    return reduction.finish(k, reduction.identity(), 0);

  std::function<llvm::Value *(size_t, llvm::Value *)> nest = [&](size_t level, llvm::Value *acc) {
    if (level == loopDims.size()) {
      ElementIndex at(shape, dims);
      return reduction.combine(k, acc, elementOf(k, x, at));
    }
    size_t d = loopDims[level];
    return emitAccumulatingLoop(k, shape[d], acc, [&](llvm::Value *i, llvm::Value *inner) {
      dims[d] = i;
      return nest(level + 1, inner);
    });
  };
  return reduction.finish(k, nest(0, reduction.identity()), count);
}

} // namespace shardc::llvmgen::elemental
