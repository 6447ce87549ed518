// Reductions, one element at a time: element `index` of reduce_* loops over
// the reduced dims of the operand (which is fused: each operand element is
// read by exactly one result element) carrying the accumulator in a phi.
// Numerics as backend/interpreter/ReductionOps.cpp: float sums and means
// accumulate in double (with `reassoc`, so the loop vectorizes) and round
// once, f32 ones by chunks of 256 elements summed in f32 (sumInChunks, a
// few f32 roundings of the chunk, as numpy's pairwise sum has); integers
// wrap; max/min propagate NaN (through a separate NaN flag, so the max
// itself is a maxnum reduction that vectorizes too); an empty
// reduction gives the identity (mean: NaN). reduce_mean of integers is their
// wrapped sum divided by the count, truncated (an empty one: 0), as there.
//
// A materialized reduction that keeps its operand's innermost dim (column
// sums, a bias gradient) would read that operand with a stride in the
// element loop; emitReductionByRows instead walks the operand row by row
// into a block of accumulators.
#include "backend/llvm/ElementalInternal.h"

#include <llvm/IR/Intrinsics.h>

#include <limits>

namespace shardc::llvmgen::elemental {
namespace {

/// for i in [0, count) (count > 0): state = step(i, state), starting from
/// `init` (one phi per value); returns the final state. Leaves the builder
/// after the loop.
using State = std::vector<llvm::Value *>;
State emitAccumulatingLoop(KernelLowering &k, int64_t count, const State &init,
                           const std::function<State(llvm::Value *, const State &)> &step) {
  llvm::IRBuilder<> &b = k.builder;
  llvm::Function *fn = b.GetInsertBlock()->getParent();
  llvm::BasicBlock *pre = b.GetInsertBlock();
  llvm::BasicBlock *header = llvm::BasicBlock::Create(k.context, "reduce", fn);
  llvm::BasicBlock *exit = llvm::BasicBlock::Create(k.context, "reduce.end", fn);
  b.CreateBr(header);
  b.SetInsertPoint(header);
  llvm::PHINode *i = b.CreatePHI(b.getInt64Ty(), 2, "r");
  i->addIncoming(k.i64(0), pre);
  std::vector<llvm::PHINode *> phis;
  State state;
  for (llvm::Value *v : init) {
    phis.push_back(b.CreatePHI(v->getType(), 2, "acc"));
    phis.back()->addIncoming(v, pre);
    state.push_back(phis.back());
  }
  State next = step(i, state);
  llvm::Value *nextI = b.CreateAdd(i, k.i64(1), "", true, true);
  i->addIncoming(nextI, b.GetInsertBlock());
  for (size_t j = 0; j < phis.size(); ++j)
    phis[j]->addIncoming(next[j], b.GetInsertBlock());
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

  // The loop-carried state of one result element: the accumulator, and for
  // float max/min a NaN flag. maxnum/minnum ignore NaN but form a reduction
  // LLVM vectorizes (the select of combine does not); the flag, an
  // or-reduction, restores NaN propagation at the end.
  bool tracksNaN() const { return isFloat(dtype) && isMinMax(); }

  State initialState(KernelLowering &k) const {
    if (tracksNaN())
      return {identity(), k.builder.getFalse()};
    return {identity()};
  }

  State step(KernelLowering &k, const State &state, llvm::Value *x) const {
    if (!tracksNaN())
      return {combine(k, state[0], x)};
    llvm::IRBuilder<> &b = k.builder;
    // maxnum carries `nnan nsz` (what the vectorizer asks of an FP min/max
    // reduction), so once a NaN element enters, the accumulator is poison;
    // but then the flag is set and finishState's select returns NaN instead
    // (a select is poison only when the operand it picks is). Replacing NaN
    // elements by the identity first would keep the accumulator defined at
    // the price of a compare and a blend per vector, a third of a softmax
    // row's max pass.
    llvm::Value *isNaN = b.CreateFCmpUNO(x, x);
    llvm::Value *acc = callIntrinsic(k, isMax() ? llvm::Intrinsic::maxnum : llvm::Intrinsic::minnum,
                                     {state[0], x});
    if (auto *call = llvm::dyn_cast<llvm::Instruction>(acc)) {
      call->setHasNoNaNs(true);
      call->setHasNoSignedZeros(true);
    }
    return {acc, b.CreateOr(state[1], isNaN)};
  }

  llvm::Value *finishState(KernelLowering &k, const State &state, int64_t count) const {
    llvm::Value *acc = state[0];
    if (tracksNaN())
      acc = k.builder.CreateSelect(state[1], llvm::ConstantFP::getNaN(accType), acc);
    return finish(k, acc, count);
  }

  /// An f32 sum over a row adds chunks of kSumChunk elements in f32 and the
  /// chunks' sums in double (sumInChunks).
  bool sumsFloatInChunks() const {
    return dtype == DType::F32 && !isMinMax() && accType->isDoubleTy();
  }

  /// The result element from the final accumulator over `count` elements.
  llvm::Value *finish(KernelLowering &k, llvm::Value *acc, int64_t count) const {
    llvm::IRBuilder<> &b = k.builder;
    llvm::Type *target = k.elementType(dtype);
    if (!isFloat(dtype) && kind == OpKind::ReduceMean) // count > 0: the sdiv cannot trap
      return count ? b.CreateSDiv(acc, llvm::ConstantInt::get(accType, count))
                   : llvm::ConstantInt::get(target, 0);
    if (!isFloat(dtype))
      return b.CreateTrunc(acc, target);
    if (kind == OpKind::ReduceMean) // 0 / 0 = NaN for an empty mean
      acc = b.CreateFDiv(acc, llvm::ConstantFP::get(accType, static_cast<double>(count)));
    return b.CreateFPCast(acc, target);
  }
};

/// What a reduce_* op does to its operand's dims, and how it accumulates.
struct ReductionShape {
  Reduction reduction;
  std::vector<bool> reduced; // per operand dim
  bool keepDims = false;
  int64_t count = 1; // operand elements per result element
};

/// The elements an f32 sum adds in f32 before it adds their sum to its
/// double accumulator. Widening every element costs a softmax row's sum two
/// conversions and a second add per vector (6 of its about 28 vector ops
/// per 16 floats); a chunk's vectorized f32 sum adds at most 256 / 16 = 16
/// elements in a row per lane, then its lanes in a tree, so its relative
/// error stays within about 20 f32 rounding steps of its terms' magnitudes
/// (numpy's pairwise f32 sum has about as many), and the double sum of the
/// chunks adds no error of its own that matters.
constexpr int64_t kSumChunk = 256;

/// sum += x(i) for i in [0, count): f32 chunks of kSumChunk (the last one
/// shorter), each one vectorizable sum, added to the double accumulator.
State sumInChunks(KernelLowering &k, int64_t count, const State &state,
                  const std::function<llvm::Value *(llvm::Value *)> &x) {
  llvm::IRBuilder<> &b = k.builder;
  auto chunk = [&](llvm::Value *base, int64_t length, llvm::Value *sum) {
    llvm::Value *zero = llvm::ConstantFP::get(b.getFloatTy(), 0.0);
    State part = emitAccumulatingLoop(k, length, {zero}, [&](llvm::Value *i, const State &acc) {
      llvm::Value *added = b.CreateFAdd(acc[0], x(b.CreateAdd(base, i, "", true, true)));
      llvm::cast<llvm::Instruction>(added)->setHasAllowReassoc(true); // vectorizable
      return State{added};
    });
    return b.CreateFAdd(sum, b.CreateFPExt(part[0], sum->getType()));
  };
  const int64_t whole = count / kSumChunk, rest = count % kSumChunk;
  State sum = state;
  if (whole > 0)
    sum = emitAccumulatingLoop(k, whole, sum, [&](llvm::Value *c, const State &acc) {
      return State{chunk(b.CreateMul(c, k.i64(kSumChunk), "", true, true), kSumChunk, acc[0])};
    });
  if (rest > 0)
    sum = State{chunk(k.i64(whole * kSumChunk), rest, sum[0])};
  return sum;
}

ReductionShape describeReduction(KernelLowering &k, const Op &op) {
  const Value *x = op.operands[0];
  ReductionShape r{{op.kind, x->type.dtype, nullptr}, std::vector<bool>(x->type.rank(), false)};
  for (int64_t d : intListAttr(op, attrs::dims)) {
    if (d < 0 || d >= static_cast<int64_t>(x->type.rank()))
      unsupported(op, "dims out of range");
    r.reduced[d] = true;
  }
  const Attribute *keepAttr = op.attr(attrs::keepDims);
  r.keepDims = keepAttr && keepAttr->b;
  for (size_t d = 0; d < x->type.rank(); ++d)
    if (r.reduced[d])
      r.count *= x->type.shape[d];
  DType dtype = x->type.dtype;
  if (isFloat(dtype))
    r.reduction.accType = r.reduction.isMinMax() ? k.elementType(dtype) : k.builder.getDoubleTy();
  else
    r.reduction.accType = dtype == DType::I1 ? k.builder.getInt64Ty() : k.elementType(dtype);
  return r;
}

} // namespace

llvm::Value *emitReductionElement(KernelLowering &k, const Op &op, ElementIndex &index) {
  const Value *x = op.operands[0];
  const std::vector<int64_t> &shape = x->type.shape;
  ReductionShape r = describeReduction(k, op);

  // The operand's index: kept dims from the result's index (read now, before
  // any loop opens), reduced dims from the loops.
  std::vector<llvm::Value *> dims(shape.size(), nullptr);
  std::vector<size_t> loopDims;
  for (size_t d = 0, out = 0; d < shape.size(); ++d) {
    if (r.reduced[d]) {
      loopDims.push_back(d);
      out += r.keepDims ? 1 : 0;
    } else {
      dims[d] = index.dim(k, out++);
    }
  }
  if (r.count == 0)
    return r.reduction.finish(k, r.reduction.identity(), 0);

  std::function<State(size_t, const State &)> nest = [&](size_t level, const State &state) {
    if (level == loopDims.size()) {
      ElementIndex at(shape, dims);
      return r.reduction.step(k, state, elementOf(k, x, at));
    }
    size_t d = loopDims[level];
    if (level + 1 == loopDims.size() && r.reduction.sumsFloatInChunks())
      return sumInChunks(k, shape[d], state, [&](llvm::Value *i) {
        dims[d] = i;
        ElementIndex at(shape, dims);
        return elementOf(k, x, at);
      });
    return emitAccumulatingLoop(k, shape[d], state, [&](llvm::Value *i, const State &inner) {
      dims[d] = i;
      return nest(level + 1, inner);
    });
  };
  return r.reduction.finishState(k, nest(0, r.reduction.initialState(k)), r.count);
}

RowAccumulator::RowAccumulator(KernelLowering &k, const Op &op, int64_t count)
    : k_(k), kind_(op.kind), count_(count) {
  Reduction r = describeReduction(k, op).reduction;
  dtype_ = r.dtype;
  accType_ = r.accType;
  chunked_ = r.sumsFloatInChunks();
  llvm::Function *fn = k.builder.GetInsertBlock()->getParent();
  llvm::IRBuilder<> entry(&fn->getEntryBlock(), fn->getEntryBlock().getFirstInsertionPt());
  for (llvm::Value *v : r.initialState(k))
    slots_.push_back(entry.CreateAlloca(v->getType(), nullptr, "acc"));
  if (chunked_)
    partial_ = entry.CreateAlloca(entry.getFloatTy(), nullptr, "chunk");
}

int64_t RowAccumulator::chunkLength() { return kSumChunk; }

std::vector<llvm::Value *> RowAccumulator::loadState() {
  State state;
  for (llvm::AllocaInst *slot : slots_)
    state.push_back(k_.builder.CreateLoad(slot->getAllocatedType(), slot));
  return state;
}

void RowAccumulator::storeState(const std::vector<llvm::Value *> &state) {
  for (size_t i = 0; i < slots_.size(); ++i)
    k_.builder.CreateStore(state[i], slots_[i]);
}

void RowAccumulator::reset() {
  llvm::IRBuilder<> &b = k_.builder;
  storeState(Reduction{kind_, dtype_, accType_}.initialState(k_));
  if (partial_)
    b.CreateStore(llvm::ConstantFP::get(b.getFloatTy(), 0.0), partial_);
}

void RowAccumulator::add(llvm::Value *x) {
  llvm::IRBuilder<> &b = k_.builder;
  if (partial_) { // as sumInChunks' chunk loop
    llvm::Value *added = b.CreateFAdd(b.CreateLoad(b.getFloatTy(), partial_), x);
    llvm::cast<llvm::Instruction>(added)->setHasAllowReassoc(true); // vectorizable
    b.CreateStore(added, partial_);
    return;
  }
  storeState(Reduction{kind_, dtype_, accType_}.step(k_, loadState(), x));
}

void RowAccumulator::endChunk() {
  if (!partial_)
    return;
  llvm::IRBuilder<> &b = k_.builder;
  llvm::Value *part = b.CreateLoad(b.getFloatTy(), partial_);
  llvm::Value *sum = b.CreateLoad(accType_, slots_[0]);
  b.CreateStore(b.CreateFAdd(sum, b.CreateFPExt(part, accType_)), slots_[0]);
  b.CreateStore(llvm::ConstantFP::get(b.getFloatTy(), 0.0), partial_);
}

llvm::Value *RowAccumulator::result() {
  return Reduction{kind_, dtype_, accType_}.finishState(k_, loadState(), count_);
}

bool emitReductionByRows(KernelLowering &k, const Value *v) {
  const Op &op = *v->definingOp;
  const Value *x = op.operands[0];
  const std::vector<int64_t> &shape = x->type.shape;
  size_t n = shape.size();
  ReductionShape r = describeReduction(k, op);
  if (n < 2 || r.reduced[n - 1] || shape[n - 1] < 2 || r.count == 0 || v->type.numElements() == 0)
    return false;
  llvm::IRBuilder<> &b = k.builder;
  const Reduction &reduction = r.reduction;

  // Accumulators for one block of the innermost dim, on the stack (the entry
  // block, so they are allocated once).
  const int64_t rowLength = shape[n - 1];
  const int64_t block = rowLength <= 512 ? rowLength : 256;
  llvm::Function *fn = b.GetInsertBlock()->getParent();
  llvm::IRBuilder<> entry(&fn->getEntryBlock(), fn->getEntryBlock().getFirstInsertionPt());
  auto *accArray = llvm::ArrayType::get(reduction.accType, static_cast<uint64_t>(block));
  llvm::AllocaInst *accumulators = entry.CreateAlloca(accArray, nullptr, "accumulators");
  // Cache-line aligned, so that no vector of the loops over it straddles two
  // lines (as ElementalRows.cpp's row buffers).
  accumulators->setAlignment(llvm::Align(64));
  auto accAt = [&](llvm::Value *c) {
    return b.CreateInBoundsGEP(accArray, accumulators, {k.i64(0), c});
  };

  std::vector<size_t> outerDims, reducedDims;
  std::vector<int64_t> outerShape, reducedShape;
  for (size_t d = 0; d + 1 < n; ++d) {
    (r.reduced[d] ? reducedDims : outerDims).push_back(d);
    (r.reduced[d] ? reducedShape : outerShape).push_back(shape[d]);
  }
  std::vector<llvm::Value *> dims(n, nullptr);
  llvm::Value *out = k.buffer(v);

  // One block [base, base + length) of a row: reset, accumulate over the
  // reduced dims (the inner loop runs along the row: contiguous, and
  // vectorizable since every position has its own accumulator), store.
  auto reduceBlock = [&](llvm::Value *base, llvm::Value *length) {
    k.emitLoop(length, [&](llvm::Value *c) { b.CreateStore(reduction.identity(), accAt(c)); });
    k.emitLoopNest(reducedShape, [&](const std::vector<llvm::Value *> &index) {
      for (size_t j = 0; j < reducedDims.size(); ++j)
        dims[reducedDims[j]] = index[j];
      k.emitLoop(length, [&](llvm::Value *c) {
        dims[n - 1] = b.CreateAdd(base, c);
        ElementIndex at(shape, dims);
        llvm::Value *element = elementOf(k, x, at);
        llvm::Value *acc = b.CreateLoad(reduction.accType, accAt(c));
        b.CreateStore(reduction.combine(k, acc, element), accAt(c));
      });
    });
    k.emitLoop(length, [&](llvm::Value *c) {
      std::vector<llvm::Value *> outIndex;
      for (size_t d = 0; d < n; ++d) {
        if (!r.reduced[d])
          outIndex.push_back(d + 1 == n ? b.CreateAdd(base, c) : dims[d]);
        else if (r.keepDims)
          outIndex.push_back(k.i64(0));
      }
      llvm::Value *acc = b.CreateLoad(reduction.accType, accAt(c));
      k.store(out, v->type.dtype, k.linearIndex(v->type.shape, outIndex),
              reduction.finish(k, acc, r.count));
    });
  };

  // Live only during this op, so the stack slots of successive reductions
  // can share memory.
  llvm::TypeSize accBytes = fn->getParent()->getDataLayout().getTypeAllocSize(accArray);
  b.CreateLifetimeStart(accumulators, b.getInt64(accBytes.getFixedSize()));
  k.emitLoopNest(outerShape, [&](const std::vector<llvm::Value *> &index) {
    for (size_t j = 0; j < outerDims.size(); ++j)
      dims[outerDims[j]] = index[j];
    if (block == rowLength) {
      reduceBlock(k.i64(0), k.i64(rowLength));
      return;
    }
    k.emitLoop(k.i64((rowLength + block - 1) / block), [&](llvm::Value *q) {
      llvm::Value *base = b.CreateMul(q, k.i64(block));
      llvm::Value *rest = b.CreateSub(k.i64(rowLength), base);
      reduceBlock(base, b.CreateSelect(b.CreateICmpSLT(rest, k.i64(block)), rest, k.i64(block)));
    });
  });
  b.CreateLifetimeEnd(accumulators, b.getInt64(accBytes.getFixedSize()));
  return true;
}

} // namespace shardc::llvmgen::elemental
