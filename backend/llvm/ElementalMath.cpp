// The math the elementwise ops need beyond single instructions: intrinsic
// calls (which the driver's libmvec vector library vectorizes: exp, log, sin,
// cos, pow), tanh and sigmoid written with exp, erf, NaN-propagating max/min
// and integer power. Everything is branch-free so that a loop containing it
// still vectorizes, and nothing can produce poison.
#include "backend/llvm/ElementalInternal.h"

#include <llvm/IR/Intrinsics.h>

#include <cmath>
#include <limits>

namespace shardc::llvmgen::elemental {

llvm::Value *callIntrinsic(KernelLowering &k, llvm::Intrinsic::ID id,
                           const std::vector<llvm::Value *> &args) {
  llvm::Function *fn = llvm::Intrinsic::getDeclaration(&k.module, id, {args[0]->getType()});
  return k.builder.CreateCall(fn, args);
}

llvm::Value *emitTanh(KernelLowering &k, llvm::Value *x) {
  llvm::IRBuilder<> &b = k.builder;
  llvm::Type *type = x->getType();
  bool isF32 = type->isFloatTy();
  // Away from 0: tanh|x| = (1 - t) / (1 + t) with t = e^(-2|x|) in (0, 1], so
  // nothing overflows and large |x| saturates to 1. Near 0 that difference
  // cancels (relative error eps / 2|x|), so below the threshold the Taylor
  // series takes over: its first omitted term, 929569/638512875 x^15, is
  // 4e-9 relative at 0.4 (f32) and 1e-20 at 1/16 (f64).
  llvm::Value *ax = callIntrinsic(k, llvm::Intrinsic::fabs, {x});
  llvm::Value *t = callIntrinsic(k, llvm::Intrinsic::exp, {b.CreateFMul(ax, constantOf(type, -2))});
  llvm::Value *one = constantOf(type, 1);
  llvm::Value *far = b.CreateFDiv(b.CreateFSub(one, t), b.CreateFAdd(one, t));
  far = callIntrinsic(k, llvm::Intrinsic::copysign, {far, x});

  static const double coefficients[] = {// x^3, x^5, ..., x^13
                                        -1.0 / 3,    2.0 / 15,         -17.0 / 315,
                                        62.0 / 2835, -1382.0 / 155925, 21844.0 / 6081075};
  llvm::Value *x2 = b.CreateFMul(x, x);
  llvm::Value *poly = constantOf(type, coefficients[5]);
  for (int i = 4; i >= 0; --i)
    poly = b.CreateFAdd(b.CreateFMul(poly, x2), constantOf(type, coefficients[i]));
  // x + x * x2 * poly: odd in x, so the sign and -0 come out right.
  llvm::Value *near = b.CreateFAdd(x, b.CreateFMul(x, b.CreateFMul(x2, poly)));

  llvm::Value *isNear = b.CreateFCmpOLT(ax, constantOf(type, isF32 ? 0.4 : 0.0625));
  return b.CreateSelect(isNear, near, far); // NaN: not near, and far is NaN
}

llvm::Value *emitSigmoid(KernelLowering &k, llvm::Value *x) {
  // With e = e^-|x| in (0, 1]: 1 / (1 + e) for x >= 0 and e / (1 + e) for
  // x < 0. Nothing overflows, and the far negative tail keeps its tiny
  // values (1 / (1 + e^-x) would give 0 once e^-x overflows).
  llvm::IRBuilder<> &b = k.builder;
  llvm::Type *type = x->getType();
  llvm::Value *e = callIntrinsic(k, llvm::Intrinsic::exp,
                                 {b.CreateFNeg(callIntrinsic(k, llvm::Intrinsic::fabs, {x}))});
  llvm::Value *numerator =
      b.CreateSelect(b.CreateFCmpOLT(x, constantOf(type, 0)), e, constantOf(type, 1));
  return b.CreateFDiv(numerator, b.CreateFAdd(constantOf(type, 1), e)); // NaN: e is NaN
}

llvm::Value *emitErf(KernelLowering &k, llvm::Value *x) {
  llvm::Type *type = x->getType();
  llvm::FunctionCallee fn = k.runtimeFunction(type->isFloatTy() ? "erff" : "erf",
                                              llvm::FunctionType::get(type, {type}, false));
  // erf reads and writes no memory the program sees (at most errno), so it
  // may be hoisted and its calls merged.
  if (auto *declaration = llvm::dyn_cast<llvm::Function>(fn.getCallee())) {
    declaration->setDoesNotAccessMemory();
    declaration->setDoesNotThrow();
    declaration->addFnAttr(llvm::Attribute::WillReturn);
  }
  return k.builder.CreateCall(fn, {x});
}

llvm::Value *emitFloatMax(KernelLowering &k, llvm::Value *a, llvm::Value *b, bool isMax) {
  // std::max(a, b) = a < b ? b : a and std::min(a, b) = b < a ? b : a (the
  // interpreter's choice between -0 and +0), NaN when either is NaN.
  llvm::IRBuilder<> &ir = k.builder;
  llvm::Value *takeB = isMax ? ir.CreateFCmpOLT(a, b) : ir.CreateFCmpOLT(b, a);
  llvm::Value *result = ir.CreateSelect(takeB, b, a);
  llvm::Value *nan = llvm::ConstantFP::getNaN(a->getType());
  return ir.CreateSelect(ir.CreateFCmpUNO(a, b), nan, result);
}

llvm::Value *emitIntPow(KernelLowering &k, llvm::Value *base, llvm::Value *exponent) {
  // Square and multiply over every bit but the sign, unrolled: branch-free,
  // and a negative exponent (sign bit set) gives 0 like the interpreter.
  llvm::IRBuilder<> &b = k.builder;
  llvm::Type *type = base->getType();
  unsigned bits = type->getIntegerBitWidth();
  llvm::Value *result = constantOf(type, 1), *power = base;
  for (unsigned bit = 0; bit + 1 < bits; ++bit) {
    llvm::Value *mask = llvm::ConstantInt::get(type, uint64_t(1) << bit);
    llvm::Value *set = b.CreateICmpNE(b.CreateAnd(exponent, mask), constantOf(type, 0));
    result = b.CreateSelect(set, b.CreateMul(result, power), result);
    if (bit + 2 < bits)
      power = b.CreateMul(power, power);
  }
  llvm::Value *negative = b.CreateICmpSLT(exponent, constantOf(type, 0));
  return b.CreateSelect(negative, constantOf(type, 0), result);
}

} // namespace shardc::llvmgen::elemental
