// The math the elementwise ops need beyond single instructions: intrinsic
// calls (which the driver's libmvec vector library vectorizes: log, sin, cos,
// pow), exp written out inline, tanh and sigmoid written with exp,
// erf, NaN-propagating max/min and integer power. Everything is branch-free so
// that a loop containing it still vectorizes, and nothing can produce poison.
#include "backend/llvm/ElementalInternal.h"
#include "backend/llvm/TargetMath.h"

#include <llvm/IR/Intrinsics.h>

#include <cmath>
#include <limits>
#include <vector>

namespace shardc::llvmgen::elemental {

llvm::Value *callIntrinsic(KernelLowering &k, llvm::Intrinsic::ID id,
                           const std::vector<llvm::Value *> &args) {
  llvm::Function *fn = llvm::Intrinsic::getDeclaration(&k.module, id, {args[0]->getType()});
  return k.builder.CreateCall(fn, args);
}

llvm::Value *emitExp(KernelLowering &k, llvm::Value *x) {
  llvm::IRBuilder<> &b = k.builder;
  llvm::Type *type = x->getType();
  if (!type->isFloatTy() && !type->isDoubleTy())
    return callIntrinsic(k, llvm::Intrinsic::exp, {x});
  // Inline rather than libmvec's call, which spills every vector register
  // around it (it was a fifth of an f32 softmax's time); with AVX-512, 13
  // vector instructions per 16 floats (19 without) and 20 per 8 doubles.
  // e^x = 2^n e^r with n = round(x / ln 2) and |r| <= ln 2 / 2, where
  // r = x - n ln 2 in two parts (ln2Hi has 9 (32) significant bits, so
  // n * ln2Hi is exact for every n the clamps allow), and e^r by a
  // polynomial. f32: degree 6, 1 + r + r^2 q(r), q interpolating
  // (e^r - 1 - r) / r^2 at the Chebyshev nodes of [-ln 2 / 2, ln 2 / 2],
  // 1e-8 relative. f64: Taylor's of degree 13, whose first omitted term is
  // 4e-18 relative. Either result is within about 1 ulp (the rounding of the
  // steps).
  const bool isDouble = type->isDoubleTy();
  auto f = [&](double v) { return constantOf(type, v); };
  auto fma = [&](llvm::Value *a, llvm::Value *c, llvm::Value *d) {
    return callIntrinsic(k, llvm::Intrinsic::fmuladd, {a, c, d});
  };
  // Beyond the clamps e^x rounds to 0 (e^-104 < 2^-150, e^-746 < 2^-1075)
  // or overflows to +inf (e^89 > 2^128, e^710 > 2^1024) whatever the exact
  // x. A NaN passes both (the comparisons are false) and every step after,
  // so it comes out NaN.
  const double low = isDouble ? -746.0 : -104.0, high = isDouble ? 710.0 : 89.0;
  llvm::Value *clamped = b.CreateSelect(b.CreateFCmpOLT(x, f(low)), f(low), x);
  clamped = b.CreateSelect(b.CreateFCmpOGT(clamped, f(high)), f(high), clamped);
  // n rounded by adding 1.5 * 2^23 + 254 (1.5 * 2^52 + 2046): the sum's ulp
  // is 1, so it is an integer, and its low 9 (12) bits are n plus twice the
  // exponent bias.
  const double shifter = isDouble ? 6755399441055744.0 + 2046.0 : 12582912.0 + 254.0;
  llvm::Value *shifted = fma(clamped, f(1.4426950408889634), f(shifter));
  llvm::Value *n = b.CreateFSub(shifted, f(shifter));
  const double ln2Hi = isDouble ? 6.93147180369123816490e-01 : 0.693359375;
  const double ln2Lo = isDouble ? 1.90821492927058770002e-10 : -2.12194440054690582e-4;
  llvm::Value *r = fma(n, f(-ln2Lo), fma(n, f(-ln2Hi), clamped));
  static const std::vector<double> kFloatCoefficients = {1.0,
                                                         1.0,
                                                         0.5,
                                                         0.16666577025597937,
                                                         0.041666554662048556,
                                                         0.008363173074517644,
                                                         0.001392617612010237};
  static const std::vector<double> kDoubleCoefficients = [] {
    std::vector<double> c(14, 1.0);
    for (size_t i = 1; i < c.size(); ++i)
      c[i] = c[i - 1] / static_cast<double>(i); // 1 / i!
    return c;
  }();
  const std::vector<double> &coefficients = isDouble ? kDoubleCoefficients : kFloatCoefficients;
  llvm::Value *er = f(coefficients.back());
  for (size_t i = coefficients.size() - 1; i-- > 0;)
    er = fma(er, r, f(coefficients[i]));
  // e^r * 2^n, rounded once: a call that is inlined (TargetMath.h), so that
  // AVX-512 targets compute it with one vscalefps / vscalefpd per vector.
  return b.CreateCall(expScaleFunction(k.module, type), {er, n, shifted});
}

llvm::Value *emitTanh(KernelLowering &k, llvm::Value *x) {
  llvm::IRBuilder<> &b = k.builder;
  llvm::Type *type = x->getType();
  bool isF32 = type->isFloatTy();
  // Away from 0: tanh|x| = (1 - t) / (1 + t) with t = e^(-2|x|) in (0, 1], so
  // nothing overflows and large |x| saturates to 1. Near 0 that difference
  // cancels (relative error about t / (1 - t) times exp's), so below the
  // threshold the Taylor series takes over: x^1 to x^13 below 0.4 (f32; the
  // first omitted term is 4e-9 relative there), x^1 to x^23 below 0.3 (f64;
  // 5e-18). At the thresholds the quotient's cancellation is 0.8x and 1.2x.
  llvm::Value *ax = callIntrinsic(k, llvm::Intrinsic::fabs, {x});
  // The inline exp, not libmvec's call: on the AMD Zen 5 VM the fused
  // tanh(a*b + c) over 2^24 f32 per rank went from 21.0 to 7.7-9.1 ms
  // (memory bound again: 0.98-1.08x the STREAM triad); on the Intel Xeon of
  // an earlier session the call had been 6% faster.
  llvm::Value *t = emitExp(k, b.CreateFMul(ax, constantOf(type, -2)));
  llvm::Value *one = constantOf(type, 1);
  llvm::Value *far = b.CreateFDiv(b.CreateFSub(one, t), b.CreateFAdd(one, t));
  far = callIntrinsic(k, llvm::Intrinsic::copysign, {far, x});

  // tanh x = sum of a_k x^(2k+1): a_0 = 1 and, from tanh' = 1 - tanh^2,
  // (2k + 1) a_k = -(sum over i + j = k - 1 of a_i a_j).
  static const std::vector<double> kTaylor = [] {
    std::vector<double> a = {1.0};
    for (int n = 1; n < 12; ++n) {
      double sum = 0;
      for (int i = 0; i < n; ++i)
        sum += a[i] * a[n - 1 - i];
      a.push_back(-sum / (2 * n + 1));
    }
    return a;
  }();
  const int terms = isF32 ? 7 : 12;
  llvm::Value *x2 = b.CreateFMul(x, x);
  llvm::Value *poly = constantOf(type, kTaylor[terms - 1]);
  for (int i = terms - 2; i >= 1; --i)
    poly = b.CreateFAdd(b.CreateFMul(poly, x2), constantOf(type, kTaylor[i]));
  // x + x * (x2 * poly), odd in x; its sign is x's (the sum is within a
  // third of x), which copysign makes hold for -0 too (-0 + +0 is +0).
  llvm::Value *near = b.CreateFAdd(x, b.CreateFMul(x, b.CreateFMul(x2, poly)));
  near = callIntrinsic(k, llvm::Intrinsic::copysign, {near, x});

  llvm::Value *isNear = b.CreateFCmpOLT(ax, constantOf(type, isF32 ? 0.4 : 0.3));
  return b.CreateSelect(isNear, near, far); // NaN: not near, and far is NaN
}

llvm::Value *emitSigmoid(KernelLowering &k, llvm::Value *x) {
  // With e = e^-|x| in (0, 1]: 1 / (1 + e) for x >= 0 and e / (1 + e) for
  // x < 0. Nothing overflows, and the far negative tail keeps its tiny
  // values (1 / (1 + e^-x) would give 0 once e^-x overflows).
  llvm::IRBuilder<> &b = k.builder;
  llvm::Type *type = x->getType();
  llvm::Value *e = emitExp(k, b.CreateFNeg(callIntrinsic(k, llvm::Intrinsic::fabs, {x})));
  llvm::Value *numerator =
      b.CreateSelect(b.CreateFCmpOLT(x, constantOf(type, 0)), e, constantOf(type, 1));
  return b.CreateFDiv(numerator, b.CreateFAdd(constantOf(type, 1), e)); // NaN: e is NaN
}

llvm::Value *emitErf(KernelLowering &k, llvm::Value *x) {
  // f32 goes through libm's double erf and rounds once, as the interpreter
  // does: erff is 1 ulp off near +-1, which 1 + erf(x) (gelu) turns into a
  // large relative error against numpy's reference (scipy's erf, in double).
  llvm::IRBuilder<> &b = k.builder;
  bool isF32 = x->getType()->isFloatTy();
  llvm::Type *type = b.getDoubleTy();
  llvm::FunctionCallee fn = k.runtimeFunction("erf", llvm::FunctionType::get(type, {type}, false));
  // erf reads and writes no memory the program sees (at most errno), so it
  // may be hoisted and its calls merged.
  if (auto *declaration = llvm::dyn_cast<llvm::Function>(fn.getCallee())) {
    declaration->setDoesNotAccessMemory();
    declaration->setDoesNotThrow();
    declaration->addFnAttr(llvm::Attribute::WillReturn);
  }
  if (!isF32)
    return b.CreateCall(fn, {x});
  return b.CreateFPTrunc(b.CreateCall(fn, {b.CreateFPExt(x, type)}), x->getType());
}

llvm::Value *emitFloatDiv(KernelLowering &k, llvm::Value *a, llvm::Value *c) {
  llvm::IRBuilder<> &b = k.builder;
  if (!a->getType()->isFloatTy() || !k.isLoopInvariant(c))
    return b.CreateFDiv(a, c);
  // An f32 divisor the same on every iteration (a row's sum in softmax, a
  // constant): a multiplication by its reciprocal per element instead of a
  // division, which on AVX-512 takes several times longer (softmax's last
  // pass was bound by it). The reciprocal is computed once (LICM hoists it)
  // in double and rounded to f32, within 2 ulp of a / c for normal quotients
  // (exact for a power of two c) when it is a normal float. 1 / c spans
  // 2^-128 to 2^149, so in general it is split as reciprocal * scale, the
  // scale a power of two (2^64, 1 or 2^-64) that keeps the f32 reciprocal
  // normal, and the quotient is a * reciprocal rounded, then scaled exactly.
  // Zero, infinite and NaN divisors give a / c's infinities, zeros and NaNs.
  // The second multiplication is a third of softmax's last pass, so a loop
  // with such a division has a copy without it, entered when
  // 2^-100 <= |1 / c| <= 2^100 (where the scale is 1 and the copies agree
  // bit for bit); a constant divisor needs no copy.
  llvm::Type *f64 = b.getDoubleTy();
  llvm::Type *f32 = a->getType();
  auto reciprocalOf = [&](llvm::IRBuilder<> &at) {
    return at.CreateFDiv(llvm::ConstantFP::get(f64, 1.0), at.CreateFPExt(c, f64));
  };
  bool normalReciprocal = k.fastPathIf([&](llvm::IRBuilder<> &at) {
    llvm::Value *magnitude = at.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, reciprocalOf(at));
    // Ordered comparisons: false for a NaN divisor.
    return at.CreateAnd(at.CreateFCmpOGE(magnitude, llvm::ConstantFP::get(f64, 0x1p-100)),
                        at.CreateFCmpOLE(magnitude, llvm::ConstantFP::get(f64, 0x1p100)));
  });
  llvm::Value *reciprocal = reciprocalOf(b);
  if (normalReciprocal)
    return b.CreateFMul(a, b.CreateFPTrunc(reciprocal, f32));
  llvm::Value *magnitude = callIntrinsic(k, llvm::Intrinsic::fabs, {reciprocal});
  llvm::Value *huge = b.CreateFCmpOGT(magnitude, llvm::ConstantFP::get(f64, 0x1p100));
  llvm::Value *tiny = b.CreateFCmpOLT(magnitude, llvm::ConstantFP::get(f64, 0x1p-100));
  auto choose = [&](double ifHuge, double ifTiny, double otherwise) {
    return b.CreateSelect(huge, llvm::ConstantFP::get(f64, ifHuge),
                          b.CreateSelect(tiny, llvm::ConstantFP::get(f64, ifTiny),
                                         llvm::ConstantFP::get(f64, otherwise)));
  };
  llvm::Value *scale = choose(0x1p64, 0x1p-64, 1.0);
  // reciprocal / scale as a multiplication by 1 / scale (exact, a power of
  // two): the division would add its latency once more to every row's chain
  // from the sum to its first quotient.
  llvm::Value *scaled =
      b.CreateFPTrunc(b.CreateFMul(reciprocal, choose(0x1p-64, 0x1p64, 1.0)), f32);
  return b.CreateFMul(b.CreateFMul(a, scaled), b.CreateFPTrunc(scale, f32));
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
  // Square and multiply over every bit but the sign, unrolled: branch-free.
  // A negative exponent gives the truncated exact value, as the interpreter:
  // 1 for base 1, +-1 for base -1 (the exponent's parity), else 0.
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
  llvm::Value *odd = b.CreateTrunc(exponent, b.getInt1Ty());
  llvm::Value *ofMinusOne = b.CreateSelect(odd, constantOf(type, -1), constantOf(type, 1));
  llvm::Value *inverse = b.CreateSelect(
      b.CreateICmpEQ(base, constantOf(type, 1)), constantOf(type, 1),
      b.CreateSelect(b.CreateICmpEQ(base, constantOf(type, -1)), ofMinusOne, constantOf(type, 0)));
  return b.CreateSelect(negative, inverse, result);
}

} // namespace shardc::llvmgen::elemental
