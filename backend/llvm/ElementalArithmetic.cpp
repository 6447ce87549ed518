// Elementwise ops, one element at a time: unary, convert, binary with numpy
// broadcasting, select. The numerics follow the interpreter
// (backend/interpreter/ElementwiseOps.cpp) without any UB or poison:
// integers wrap, div by 0 gives 0 and INT_MIN / -1 wraps, max/min propagate
// NaN, round is half to even, float -> int truncates and gives the type's
// minimum for NaN and out of range (numpy on x86), NaN -> i1 is true. i1 values
// compute as 0/1 in i64 (as the interpreter holds them) and keep the low bit.
#include "backend/llvm/ElementalInternal.h"

#include <llvm/IR/Intrinsics.h>

namespace shardc::llvmgen::elemental {
namespace {

llvm::Value *unaryFloat(KernelLowering &k, const Op &op, llvm::Value *x) {
  llvm::IRBuilder<> &b = k.builder;
  llvm::Type *type = x->getType();
  llvm::Value *zero = constantOf(type, 0), *one = constantOf(type, 1);
  switch (op.kind) {
  case OpKind::Abs:
    return callIntrinsic(k, llvm::Intrinsic::fabs, {x});
  case OpKind::Neg:
    return b.CreateFNeg(x);
  case OpKind::Exp:
    return emitExp(k, x);
  case OpKind::Log:
    return callIntrinsic(k, llvm::Intrinsic::log, {x});
  case OpKind::Sqrt:
    return callIntrinsic(k, llvm::Intrinsic::sqrt, {x});
  case OpKind::Rsqrt:
    return b.CreateFDiv(one, callIntrinsic(k, llvm::Intrinsic::sqrt, {x}));
  case OpKind::Tanh:
    return emitTanh(k, x);
  case OpKind::Sigmoid:
    return emitSigmoid(k, x);
  case OpKind::Relu: // NaN stays NaN (unordered compare), -0 becomes 0
    return b.CreateSelect(b.CreateFCmpUGT(x, zero), x, zero);
  case OpKind::Sin:
    return callIntrinsic(k, llvm::Intrinsic::sin, {x});
  case OpKind::Cos:
    return callIntrinsic(k, llvm::Intrinsic::cos, {x});
  case OpKind::Floor:
    return callIntrinsic(k, llvm::Intrinsic::floor, {x});
  case OpKind::Ceil:
    return callIntrinsic(k, llvm::Intrinsic::ceil, {x});
  case OpKind::Round:
    return callIntrinsic(k, llvm::Intrinsic::roundeven, {x});
  case OpKind::Sign: // numpy's: NaN stays, -0 gives +0
    return b.CreateSelect(b.CreateFCmpOGT(x, zero), one,
                          b.CreateSelect(b.CreateFCmpOLT(x, zero), constantOf(type, -1),
                                         b.CreateSelect(b.CreateFCmpOEQ(x, zero), zero, x)));
  case OpKind::Reciprocal:
    return b.CreateFDiv(one, x);
  case OpKind::Erf:
    return emitErf(k, x);
  case OpKind::Identity:
    return x;
  default:
    unsupported(op, "element type must be an integer or i1");
  }
}

llvm::Value *unaryInt(KernelLowering &k, const Op &op, llvm::Value *x) {
  llvm::IRBuilder<> &b = k.builder;
  llvm::Type *type = x->getType();
  llvm::Value *zero = constantOf(type, 0);
  switch (op.kind) {
  case OpKind::Abs: // abs(INT_MIN) wraps to INT_MIN
    return b.CreateSelect(b.CreateICmpSLT(x, zero), b.CreateSub(zero, x), x);
  case OpKind::Neg:
    return b.CreateSub(zero, x);
  case OpKind::Sign:
    return b.CreateSelect(b.CreateICmpSGT(x, zero), constantOf(type, 1),
                          b.CreateSelect(b.CreateICmpSLT(x, zero), constantOf(type, -1), zero));
  case OpKind::Relu:
    return b.CreateSelect(b.CreateICmpSGT(x, zero), x, zero);
  case OpKind::Not:
    return b.CreateNot(x);
  case OpKind::Identity:
    return x;
  default:
    unsupported(op, "element type must be a float");
  }
}

llvm::Value *compare(KernelLowering &k, OpKind kind, llvm::Value *a, llvm::Value *c) {
  llvm::IRBuilder<> &b = k.builder;
  using P = llvm::CmpInst::Predicate;
  bool isFloatCompare = a->getType()->isFloatingPointTy();
  P predicate;
  switch (kind) {
  case OpKind::Eq:
    predicate = isFloatCompare ? P::FCMP_OEQ : P::ICMP_EQ;
    break;
  case OpKind::Ne: // NaN != anything
    predicate = isFloatCompare ? P::FCMP_UNE : P::ICMP_NE;
    break;
  case OpKind::Lt:
    predicate = isFloatCompare ? P::FCMP_OLT : P::ICMP_SLT;
    break;
  case OpKind::Le:
    predicate = isFloatCompare ? P::FCMP_OLE : P::ICMP_SLE;
    break;
  case OpKind::Gt:
    predicate = isFloatCompare ? P::FCMP_OGT : P::ICMP_SGT;
    break;
  default:
    predicate = isFloatCompare ? P::FCMP_OGE : P::ICMP_SGE;
    break;
  }
  return isFloatCompare ? b.CreateFCmp(predicate, a, c) : b.CreateICmp(predicate, a, c);
}

bool isComparison(OpKind kind) { return kind >= OpKind::Eq && kind <= OpKind::Ge; }

llvm::Value *binaryFloat(KernelLowering &k, const Op &op, llvm::Value *a, llvm::Value *c) {
  llvm::IRBuilder<> &b = k.builder;
  switch (op.kind) {
  case OpKind::Add:
    return b.CreateFAdd(a, c);
  case OpKind::Sub:
    return b.CreateFSub(a, c);
  case OpKind::Mul:
    return b.CreateFMul(a, c);
  case OpKind::Div:
    return emitFloatDiv(k, a, c);
  case OpKind::Max:
  case OpKind::Min:
    return emitFloatMax(k, a, c, op.kind == OpKind::Max);
  case OpKind::Pow:
    return callIntrinsic(k, llvm::Intrinsic::pow, {a, c});
  default:
    unsupported(op, "element type must be i1 or an integer");
  }
}

llvm::Value *binaryInt(KernelLowering &k, const Op &op, llvm::Value *a, llvm::Value *c) {
  llvm::IRBuilder<> &b = k.builder;
  llvm::Type *type = a->getType();
  switch (op.kind) {
  case OpKind::Add:
    return b.CreateAdd(a, c);
  case OpKind::Sub:
    return b.CreateSub(a, c);
  case OpKind::Mul:
    return b.CreateMul(a, c);
  case OpKind::Div: {
    // x / 0 = 0 and x / -1 = -x (INT_MIN wraps): both chosen by select, the
    // sdiv itself only ever sees a divisor that cannot trap.
    llvm::Value *isZero = b.CreateICmpEQ(c, constantOf(type, 0));
    llvm::Value *isMinusOne = b.CreateICmpEQ(c, constantOf(type, -1));
    llvm::Value *safe = b.CreateSelect(b.CreateOr(isZero, isMinusOne), constantOf(type, 1), c);
    llvm::Value *quotient = b.CreateSDiv(a, safe);
    return b.CreateSelect(
        isZero, constantOf(type, 0),
        b.CreateSelect(isMinusOne, b.CreateSub(constantOf(type, 0), a), quotient));
  }
  case OpKind::Max:
    return b.CreateSelect(b.CreateICmpSLT(a, c), c, a);
  case OpKind::Min:
    return b.CreateSelect(b.CreateICmpSLT(c, a), c, a);
  case OpKind::Pow:
    return emitIntPow(k, a, c);
  case OpKind::And:
    return b.CreateAnd(a, c);
  case OpKind::Or:
    return b.CreateOr(a, c);
  case OpKind::Xor:
    return b.CreateXor(a, c);
  default:
    unsupported(op, "element type must be a number");
  }
}

llvm::Value *convert(KernelLowering &k, llvm::Value *x, DType from, DType to) {
  llvm::IRBuilder<> &b = k.builder;
  llvm::Type *target = k.elementType(to);
  if (from == to)
    return x;
  if (isFloat(from)) {
    if (isFloat(to))
      return b.CreateFPCast(x, target);
    if (to == DType::I1) // "not zero": NaN -> true, as numpy's astype(bool)
      return b.CreateFCmpUNE(x, constantOf(x->getType(), 0));
    // Truncation in range; NaN and out of range give the type's minimum
    // (numpy on x86). The bounds compare in double, where -2^31 - 1, 2^31
    // and +-2^63 are exact; fptosi_sat keeps the conversion free of poison
    // for the values the select then drops.
    bool is32 = to == DType::I32;
    llvm::Value *wide = b.CreateFPExt(x, b.getDoubleTy());
    llvm::Value *low = constantOf(b.getDoubleTy(), is32 ? -2147483649.0 : -9223372036854775808.0);
    llvm::Value *high = constantOf(b.getDoubleTy(), is32 ? 2147483648.0 : 9223372036854775808.0);
    llvm::Value *inRange =
        b.CreateAnd(is32 ? b.CreateFCmpOGT(wide, low) : b.CreateFCmpOGE(wide, low),
                    b.CreateFCmpOLT(wide, high));
    llvm::Function *fn = llvm::Intrinsic::getDeclaration(&k.module, llvm::Intrinsic::fptosi_sat,
                                                         {target, x->getType()});
    unsigned bits = target->getIntegerBitWidth();
    return b.CreateSelect(inRange, b.CreateCall(fn, {x}),
                          llvm::ConstantInt::get(target, llvm::APInt::getSignedMinValue(bits)));
  }
  if (isFloat(to))
    return from == DType::I1 ? b.CreateUIToFP(x, target) : b.CreateSIToFP(x, target);
  if (to == DType::I1)
    return b.CreateICmpNE(x, constantOf(x->getType(), 0));
  return from == DType::I1 ? b.CreateZExt(x, target) : b.CreateSExtOrTrunc(x, target);
}

/// Element `index` (of the result's shape) of operand `v`, read numpy-style:
/// dims aligned from the right, size-1 dims at index 0.
llvm::Value *broadcastOperand(KernelLowering &k, const Value *v, ElementIndex &index) {
  const std::vector<int64_t> &shape = v->type.shape;
  if (shape == index.shape())
    return elementOf(k, v, index);
  size_t offset = index.shape().size() - shape.size();
  std::vector<llvm::Value *> dims;
  for (size_t d = 0; d < shape.size(); ++d)
    dims.push_back(shape[d] == 1 ? k.i64(0) : index.dim(k, offset + d));
  ElementIndex at(shape, dims);
  return elementOf(k, v, at);
}

} // namespace

llvm::Value *emitElementwise(KernelLowering &k, const Op &op, ElementIndex &index) {
  llvm::IRBuilder<> &b = k.builder;
  DType dtype = op.operands[0]->type.dtype;
  if (op.kind == OpKind::Convert)
    return convert(k, elementOf(k, op.operands[0], index), dtype, op.result()->type.dtype);
  if (op.kind == OpKind::Select) {
    llvm::Value *pred = broadcastOperand(k, op.operands[0], index);
    llvm::Value *onTrue = broadcastOperand(k, op.operands[1], index);
    llvm::Value *onFalse = broadcastOperand(k, op.operands[2], index);
    return b.CreateSelect(pred, onTrue, onFalse);
  }

  std::vector<llvm::Value *> operands;
  for (const Value *operand : op.operands) {
    llvm::Value *x = broadcastOperand(k, operand, index);
    // i1 computes as 0/1 in i64 (the interpreter's view): comparisons are
    // then unsigned and `not` flips the low bit.
    operands.push_back(dtype == DType::I1 ? b.CreateZExt(x, b.getInt64Ty()) : x);
  }
  llvm::Value *result;
  if (opInfo(op.kind).group == OpGroup::Unary)
    result = isFloat(dtype) ? unaryFloat(k, op, operands[0]) : unaryInt(k, op, operands[0]);
  else if (isComparison(op.kind))
    return compare(k, op.kind, operands[0], operands[1]);
  else if (isFloat(dtype))
    result = binaryFloat(k, op, operands[0], operands[1]);
  else
    result = binaryInt(k, op, operands[0], operands[1]);
  return dtype == DType::I1 ? b.CreateTrunc(result, b.getInt1Ty()) : result;
}

} // namespace shardc::llvmgen::elemental
