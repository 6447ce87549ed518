// matmul and einsum (Lowering.h's emitContraction). Floats with two
// operands go to cblas_sgemm / cblas_dgemm, one call per batch index, reading
// operands in place when their layout is a (possibly transposed) matrix per
// batch and copying them into a canonical layout otherwise. Everything else
// (integers, einsum of one or three operands, a label summed in one operand
// only) is a loop nest: the output's labels outside, the summed ones inside,
// accumulating in i64 (wrapping) or double.
#include "backend/llvm/Codegen.h"
#include "backend/llvm/Lowering.h"
#include "ir/ContractionPlan.h"

namespace shardc::llvmgen {
namespace {

/// Sizes of `labels`.
std::vector<int64_t> sizesOf(const ContractionPlan &plan, const std::vector<size_t> &labels) {
  std::vector<int64_t> sizes;
  for (size_t l : labels)
    sizes.push_back(plan.sizes[l]);
  return sizes;
}

/// sum(index[i] * strides[labels[i]])
llvm::Value *offsetOf(KernelLowering &k, const std::vector<size_t> &labels,
                      const std::vector<int64_t> &strides,
                      const std::vector<llvm::Value *> &index) {
  llvm::Value *offset = k.i64(0);
  for (size_t i = 0; i < labels.size(); ++i)
    if (strides[labels[i]] != 0)
      offset =
          k.builder.CreateAdd(offset, k.builder.CreateMul(index[i], k.i64(strides[labels[i]])));
  return offset;
}

/// An alloca in the entry block (so mem2reg makes it a register).
llvm::AllocaInst *entryAlloca(KernelLowering &k, llvm::Type *type) {
  llvm::Function *fn = k.builder.GetInsertBlock()->getParent();
  llvm::IRBuilder<> entry(&fn->getEntryBlock(), fn->getEntryBlock().begin());
  return entry.CreateAlloca(type);
}

void emitLoops(KernelLowering &k, const Op &op, const ContractionPlan &plan) {
  const DType dtype = op.result()->type.dtype;
  const bool floats = isFloat(dtype);
  llvm::IRBuilder<> &b = k.builder;
  llvm::Type *accType = floats ? b.getDoubleTy() : b.getInt64Ty();
  llvm::AllocaInst *acc = entryAlloca(k, accType);
  std::vector<size_t> outLabels, sumLabels;
  for (size_t l = 0; l < plan.sizes.size(); ++l)
    (l < plan.outputRank ? outLabels : sumLabels).push_back(l);
  llvm::Value *result = k.buffer(op.result());
  k.emitLoopNest(sizesOf(plan, outLabels), [&](const std::vector<llvm::Value *> &outIndex) {
    b.CreateStore(floats ? llvm::ConstantFP::get(accType, 0.0) : k.i64(0), acc);
    k.emitLoopNest(sizesOf(plan, sumLabels), [&](const std::vector<llvm::Value *> &sumIndex) {
      llvm::Value *product = floats ? llvm::ConstantFP::get(accType, 1.0) : k.i64(1);
      for (size_t i = 0; i < op.operands.size(); ++i) {
        const std::vector<int64_t> &s = plan.strides[i];
        llvm::Value *at =
            b.CreateAdd(offsetOf(k, outLabels, s, outIndex), offsetOf(k, sumLabels, s, sumIndex));
        const DType t = op.operands[i]->type.dtype;
        llvm::Value *x = k.load(k.buffer(op.operands[i]), t, at);
        if (floats)
          x = b.CreateFPCast(x, accType);
        else
          x = t == DType::I1 ? b.CreateZExt(x, accType) : b.CreateSExtOrTrunc(x, accType);
        product = floats ? b.CreateFMul(product, x) : b.CreateMul(product, x);
      }
      b.CreateStore(floats ? b.CreateFAdd(b.CreateLoad(accType, acc), product)
                           : b.CreateAdd(b.CreateLoad(accType, acc), product),
                    acc);
    });
    llvm::Value *sum = b.CreateLoad(accType, acc);
    llvm::Type *element = k.elementType(dtype);
    sum = floats ? b.CreateFPTrunc(sum, element) : b.CreateTrunc(sum, element);
    std::vector<int64_t> outShape = sizesOf(plan, outLabels);
    k.store(result, dtype, k.linearIndex(outShape, outIndex), sum);
  });
}

/// Copies between a buffer read with per-label `strides` and a row-major
/// buffer ordered by `labels`: gather (strided -> canonical) or scatter.
void copyCanonical(KernelLowering &k, const ContractionPlan &plan,
                   const std::vector<size_t> &labels, const std::vector<int64_t> &strides,
                   llvm::Value *strided, llvm::Value *canonical, DType dtype, bool toCanonical) {
  std::vector<int64_t> shape = sizesOf(plan, labels);
  k.emitLoopNest(shape, [&](const std::vector<llvm::Value *> &index) {
    llvm::Value *s = offsetOf(k, labels, strides, index);
    llvm::Value *c = k.linearIndex(shape, index);
    if (toCanonical)
      k.store(canonical, dtype, c, k.load(strided, dtype, s));
    else
      k.store(strided, dtype, s, k.load(canonical, dtype, c));
  });
}

std::vector<size_t> concat(std::vector<size_t> a, const std::vector<size_t> &b,
                           const std::vector<size_t> &c) {
  a.insert(a.end(), b.begin(), b.end());
  a.insert(a.end(), c.begin(), c.end());
  return a;
}

/// Makes `m` direct: a scratch buffer laid out [batch, rows, cols], into
/// which the operand `buffer` is copied (unless null: the output).
llvm::Value *canonicalOperand(KernelLowering &k, const ContractionPlan &plan, const GemmPlan &g,
                              GemmPlan::Matrix &m, const std::vector<size_t> &rows,
                              const std::vector<size_t> &cols, const std::vector<int64_t> &strides,
                              llvm::Value *buffer, DType dtype, int64_t rowCount,
                              int64_t colCount) {
  if (m.direct && buffer)
    return buffer;
  std::vector<size_t> order = concat(g.batch, rows, cols);
  int64_t elements = rowCount * colCount;
  for (size_t l : g.batch)
    elements *= plan.sizes[l];
  llvm::Value *scratch = k.scratch(elements * dtypeBytes(dtype));
  if (buffer)
    copyCanonical(k, plan, order, strides, buffer, scratch, dtype, /*toCanonical=*/true);
  m.direct = true;
  m.transposed = false;
  m.ld = std::max<int64_t>(colCount, 1);
  std::vector<int64_t> canonical = rowMajorStrides(sizesOf(plan, order));
  m.batchStrides.assign(canonical.begin(), canonical.begin() + g.batch.size());
  return scratch;
}

void emitGemm(KernelLowering &k, const Op &op, const ContractionPlan &plan, GemmPlan g) {
  const DType dtype = op.result()->type.dtype;
  if (g.M == 0 || g.N == 0)
    return; // an empty result
  llvm::IRBuilder<> &b = k.builder;
  llvm::Value *a = canonicalOperand(k, plan, g, g.a, g.m, g.k, plan.strides[0],
                                    k.buffer(op.operands[0]), dtype, g.M, g.K);
  llvm::Value *bm = canonicalOperand(k, plan, g, g.b, g.k, g.n, plan.strides[1],
                                     k.buffer(op.operands[1]), dtype, g.K, g.N);
  // The output: in place, or computed as [batch, M, N] and scattered.
  std::vector<int64_t> outStrides(plan.sizes.size(), 0);
  {
    std::vector<int64_t> own = rowMajorStrides(
        std::vector<int64_t>(plan.sizes.begin(), plan.sizes.begin() + plan.outputRank));
    std::copy(own.begin(), own.end(), outStrides.begin());
  }
  llvm::Value *result = k.buffer(op.result());
  llvm::Value *c = result;
  bool scatter = !g.c.direct;
  if (scatter)
    c = canonicalOperand(k, plan, g, g.c, g.m, g.n, outStrides, nullptr, dtype, g.M, g.N);

  const bool f32 = dtype == DType::F32;
  llvm::Type *element = k.elementType(dtype);
  llvm::Type *i32 = b.getInt32Ty();
  llvm::Type *ptr = element->getPointerTo();
  llvm::FunctionCallee gemm = k.runtimeFunction(
      f32 ? "cblas_sgemm" : "cblas_dgemm",
      llvm::FunctionType::get(
          b.getVoidTy(),
          {i32, i32, i32, i32, i32, i32, element, ptr, i32, ptr, i32, element, ptr, i32}, false));
  auto trans = [&](bool t) { return b.getInt32(t ? 112 : 111); }; // CblasTrans : CblasNoTrans
  auto at = [&](llvm::Value *buffer, llvm::Value *offset) {
    return k.elementAddress(buffer, dtype, offset);
  };
  k.emitLoopNest(sizesOf(plan, g.batch), [&](const std::vector<llvm::Value *> &index) {
    auto batchOffset = [&](const GemmPlan::Matrix &m) {
      llvm::Value *offset = k.i64(0);
      for (size_t i = 0; i < index.size(); ++i)
        if (m.batchStrides[i] != 0)
          offset = b.CreateAdd(offset, b.CreateMul(index[i], k.i64(m.batchStrides[i])));
      return offset;
    };
    b.CreateCall(gemm,
                 {b.getInt32(101), trans(g.a.transposed), trans(g.b.transposed),
                  b.getInt32(static_cast<int32_t>(g.M)), b.getInt32(static_cast<int32_t>(g.N)),
                  b.getInt32(static_cast<int32_t>(g.K)), llvm::ConstantFP::get(element, 1.0),
                  at(a, batchOffset(g.a)), b.getInt32(static_cast<int32_t>(g.a.ld)),
                  at(bm, batchOffset(g.b)), b.getInt32(static_cast<int32_t>(g.b.ld)),
                  llvm::ConstantFP::get(element, 0.0), at(c, batchOffset(g.c)),
                  b.getInt32(static_cast<int32_t>(g.c.ld))});
  });
  if (scatter)
    copyCanonical(k, plan, concat(g.batch, g.m, g.n), outStrides, result, c, dtype,
                  /*toCanonical=*/false);
}

} // namespace

void emitContraction(KernelLowering &k, const Op &op) {
  std::string error;
  std::optional<ContractionPlan> planned = ContractionPlan::of(op, error);
  if (!planned)
    throw CodegenError(op.loc, error);
  const ContractionPlan &plan = *planned;
  const DType dtype = op.result()->type.dtype;
  const int64_t limit = int64_t(1) << 31;
  bool fitsInt32 = true;
  for (int64_t size : plan.sizes)
    fitsInt32 &= size < limit;
  if (isFloat(dtype) && fitsInt32)
    if (std::optional<GemmPlan> g = planGemm(plan);
        g && g->M < limit && g->N < limit && g->K < limit)
      return emitGemm(k, op, plan, *g);
  emitLoops(k, op, plan);
}

} // namespace shardc::llvmgen
