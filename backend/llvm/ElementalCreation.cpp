// Creation ops, one element at a time: constant (a splat is an immediate, a
// dense literal a private constant array), iota, and the random ops. Random
// values are the counter-based generator of support/Random.h (the
// interpreter's, with the same constants) computed at the element's linear index in
// the op's result: in a per-device body random ops stand at their global
// shape, so every device computes exactly the global program's values.
#include "backend/llvm/ElementalInternal.h"
#include "support/Random.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/Intrinsics.h>

#include <cmath>

namespace shardc::llvmgen::elemental {
namespace {

// ---- constant -------------------------------------------------------------------

/// The element a literal scalar becomes in `dtype`, as the interpreter
/// stores it: floats from the number, integers from the integer (wrapped),
/// i1 its low bit.
llvm::Constant *literalElement(KernelLowering &k, const Scalar &s, DType dtype) {
  llvm::Type *type = k.elementType(dtype);
  if (isFloat(dtype))
    return llvm::ConstantFP::get(type, s.asDouble());
  if (dtype == DType::I1)
    return k.builder.getInt1((s.i & 1) != 0);
  return llvm::ConstantInt::get(type, static_cast<uint64_t>(s.i), /*isSigned=*/true);
}

llvm::Value *constant(KernelLowering &k, const Op &op, ElementIndex &index) {
  const Attribute *value = op.attr(attrs::dense);
  if (!value || value->kind != Attribute::Kind::Dense || value->dense.elements.empty())
    unsupported(op, "missing attribute: value");
  const DenseLiteral &dense = value->dense;
  const TensorType &type = op.result()->type;
  if (dense.splat)
    return literalElement(k, dense.elements[0], type.dtype);
  if (static_cast<int64_t>(dense.elements.size()) != type.numElements())
    unsupported(op, "literal shape doesn't match result type");

  // The literal as a private constant array in memory type (i1: one byte).
  std::vector<llvm::Constant *> elements;
  for (const Scalar &s : dense.elements) {
    llvm::Constant *c = literalElement(k, s, type.dtype);
    if (type.dtype == DType::I1)
      c = llvm::ConstantExpr::getZExt(c, k.builder.getInt8Ty());
    elements.push_back(c);
  }
  auto *arrayType = llvm::ArrayType::get(k.memoryType(type.dtype), elements.size());
  auto *global = new llvm::GlobalVariable(
      k.module, arrayType, /*isConstant=*/true, llvm::GlobalValue::PrivateLinkage,
      llvm::ConstantArray::get(arrayType, elements), "constant");
  global->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  llvm::Value *buffer = k.builder.CreateBitCast(global, k.builder.getInt8PtrTy());
  return k.load(buffer, type.dtype, index.linear(k));
}

// ---- iota ---------------------------------------------------------------------

llvm::Value *iota(KernelLowering &k, const Op &op, ElementIndex &index) {
  int64_t dim = intAttr(op, attrs::dim);
  const TensorType &type = op.result()->type;
  if (dim < 0 || dim >= static_cast<int64_t>(type.rank()))
    unsupported(op, "dim out of range");
  llvm::Value *i = index.dim(k, static_cast<size_t>(dim));
  llvm::Type *target = k.elementType(type.dtype);
  if (isFloat(type.dtype))
    return k.builder.CreateSIToFP(i, target);
  return k.builder.CreateTrunc(i, target); // i1 keeps the low bit, like the interpreter
}

// ---- random -------------------------------------------------------------------

/// support::splitMix64 on an i64 value: the same constants and shifts.
llvm::Value *emitSplitMix64(KernelLowering &k, llvm::Value *x) {
  llvm::IRBuilder<> &b = k.builder;
  x = b.CreateAdd(x, b.getInt64(support::kSplitMixIncrement));
  x = b.CreateMul(b.CreateXor(x, b.CreateLShr(x, support::kSplitMixShift1)),
                  b.getInt64(support::kSplitMixMultiplier1));
  x = b.CreateMul(b.CreateXor(x, b.CreateLShr(x, support::kSplitMixShift2)),
                  b.getInt64(support::kSplitMixMultiplier2));
  return b.CreateXor(x, b.CreateLShr(x, support::kSplitMixShift3));
}

/// support::randomUnit(seed, index, stream): a double in [0, 1) from the top
/// 53 of randomBits = splitMix(splitMix(splitMix(seed) ^ index) ^ stream),
/// the innermost step folded at compile time.
llvm::Value *emitRandomUnit(KernelLowering &k, uint64_t seed, llvm::Value *index, uint64_t stream) {
  llvm::IRBuilder<> &b = k.builder;
  llvm::Value *bits = emitSplitMix64(k, b.CreateXor(b.getInt64(support::splitMix64(seed)), index));
  bits = emitSplitMix64(k, b.CreateXor(bits, b.getInt64(stream)));
  // Below 2^53 the signed conversion is exact (and cheaper to vectorize).
  llvm::Value *unit = b.CreateSIToFP(b.CreateLShr(bits, support::kUnitShift), b.getDoubleTy());
  return b.CreateFMul(unit, llvm::ConstantFP::get(b.getDoubleTy(), support::kUnitScale));
}

llvm::Value *random(KernelLowering &k, const Op &op, ElementIndex &index) {
  const TensorType &type = op.result()->type;
  if (!isFloat(type.dtype))
    unsupported(op, "element type must be a float");
  const Attribute *seedAttr = op.attr(attrs::seed);
  uint64_t seed =
      seedAttr && seedAttr->kind == Attribute::Kind::Int ? static_cast<uint64_t>(seedAttr->i) : 0;
  llvm::IRBuilder<> &b = k.builder;
  llvm::Type *f64 = b.getDoubleTy();
  llvm::Type *target = k.elementType(type.dtype);
  llvm::Value *linear = index.linear(k);

  if (op.kind == OpKind::RandomNormal) {
    // Box-Muller over streams 0 and 1, in double, rounded once at the end.
    double mean = op.get(attrs::mean, 0), stddev = op.get(attrs::stddev, 1);
    llvm::Value *u1 =
        b.CreateFSub(llvm::ConstantFP::get(f64, 1.0), emitRandomUnit(k, seed, linear, 0));
    llvm::Value *u2 = emitRandomUnit(k, seed, linear, 1);
    llvm::Value *radius =
        callIntrinsic(k, llvm::Intrinsic::sqrt,
                      {b.CreateFMul(llvm::ConstantFP::get(f64, -2.0),
                                    callIntrinsic(k, llvm::Intrinsic::log, {u1}))});
    llvm::Value *angle = b.CreateFMul(llvm::ConstantFP::get(f64, 2.0 * M_PI), u2);
    llvm::Value *z = b.CreateFMul(radius, callIntrinsic(k, llvm::Intrinsic::cos, {angle}));
    llvm::Value *sample = b.CreateFAdd(llvm::ConstantFP::get(f64, mean),
                                       b.CreateFMul(llvm::ConstantFP::get(f64, stddev), z));
    return b.CreateFPCast(sample, target);
  }

  double low = op.get(attrs::uniformLow, 0), high = op.get(attrs::uniformHigh, 1);
  llvm::Value *u = emitRandomUnit(k, seed, linear, 0);
  llvm::Value *sample = b.CreateFAdd(llvm::ConstantFP::get(f64, low),
                                     b.CreateFMul(llvm::ConstantFP::get(f64, high - low), u));
  llvm::Value *rounded = b.CreateFPCast(sample, target);
  // Rounding can land on `high` itself; the range is [low, high), so such a
  // value becomes the largest one below high (in the element type).
  double below =
      type.dtype == DType::F32
          ? static_cast<double>(std::nextafter(static_cast<float>(high), static_cast<float>(low)))
          : std::nextafter(high, low);
  llvm::Value *atHigh =
      b.CreateFCmpOGE(b.CreateFPCast(rounded, f64), llvm::ConstantFP::get(f64, high));
  return b.CreateSelect(atHigh, llvm::ConstantFP::get(target, below), rounded);
}

} // namespace

llvm::Value *emitCreationElement(KernelLowering &k, const Op &op, ElementIndex &index) {
  switch (op.kind) {
  case OpKind::Constant:
    return constant(k, op, index);
  case OpKind::Iota:
    return iota(k, op, index);
  case OpKind::RandomUniform:
  case OpKind::RandomNormal:
    return random(k, op, index);
  default:
    unsupported(op, "not a creation op");
  }
}

} // namespace shardc::llvmgen::elemental
