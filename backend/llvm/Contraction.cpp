// matmul and einsum (Lowering.h's emitContraction). Floats with two
// operands go to cblas_sgemm / cblas_dgemm, one call per batch index, reading
// operands in place when their layout is a (possibly transposed) matrix per
// batch and copying them into a canonical layout otherwise. Everything else
// (integers, einsum of one or three operands, a label summed in one operand
// only) is a loop nest: the output's labels outside, the summed ones inside,
// accumulating in i64 (wrapping) or double. A piece of a contraction (part of
// its label space, possibly added to the result: GatherContraction.cpp) is
// emitted the same way, from its own plan and base addresses.
#include "backend/llvm/Codegen.h"
#include "backend/llvm/Lowering.h"

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

void emitLoops(KernelLowering &k, const Op &op, const ContractionPiece &piece) {
  const ContractionPlan &plan = piece.plan;
  const DType dtype = op.result()->type.dtype;
  const bool floats = isFloat(dtype);
  llvm::IRBuilder<> &b = k.builder;
  llvm::Type *accType = floats ? b.getDoubleTy() : b.getInt64Ty();
  llvm::AllocaInst *acc = entryAlloca(k, accType);
  std::vector<size_t> outLabels, sumLabels;
  for (size_t l = 0; l < plan.sizes.size(); ++l)
    (l < plan.outputRank ? outLabels : sumLabels).push_back(l);
  auto widen = [&](llvm::Value *x, DType t) {
    if (floats)
      return b.CreateFPCast(x, accType);
    return t == DType::I1 ? b.CreateZExt(x, accType) : b.CreateSExtOrTrunc(x, accType);
  };
  k.emitLoopNest(sizesOf(plan, outLabels), [&](const std::vector<llvm::Value *> &outIndex) {
    llvm::Value *out = offsetOf(k, outLabels, plan.resultStrides, outIndex);
    llvm::Value *zero = floats ? llvm::ConstantFP::get(accType, 0.0) : k.i64(0);
    b.CreateStore(piece.accumulate ? widen(k.load(piece.result, dtype, out), dtype) : zero, acc);
    k.emitLoopNest(sizesOf(plan, sumLabels), [&](const std::vector<llvm::Value *> &sumIndex) {
      llvm::Value *product = floats ? llvm::ConstantFP::get(accType, 1.0) : k.i64(1);
      for (size_t i = 0; i < op.operands.size(); ++i) {
        const std::vector<int64_t> &s = plan.strides[i];
        llvm::Value *at =
            b.CreateAdd(offsetOf(k, outLabels, s, outIndex), offsetOf(k, sumLabels, s, sumIndex));
        const DType t = op.operands[i]->type.dtype;
        llvm::Value *x = widen(k.load(piece.operands[i], t, at), t);
        product = floats ? b.CreateFMul(product, x) : b.CreateMul(product, x);
      }
      b.CreateStore(floats ? b.CreateFAdd(b.CreateLoad(accType, acc), product)
                           : b.CreateAdd(b.CreateLoad(accType, acc), product),
                    acc);
    });
    llvm::Value *sum = b.CreateLoad(accType, acc);
    llvm::Type *element = k.elementType(dtype);
    sum = floats ? b.CreateFPTrunc(sum, element) : b.CreateTrunc(sum, element);
    k.store(piece.result, dtype, out, sum);
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

/// Floating-point operations per BLAS call between two progress calls: about
/// 3 ms of this machine's dgemm, and K pieces of 256 or more (OpenBLAS packs
/// and updates C per block of 256-384 of K anyway, so the split costs little).
constexpr double kFlopsPerPiece = double(int64_t(1) << 28);
constexpr int64_t kLeastPieceK = 256;

void emitGemm(KernelLowering &k, const Op &op, const ContractionPiece &piece, GemmPlan g) {
  const ContractionPlan &plan = piece.plan;
  const DType dtype = op.result()->type.dtype;
  if (g.M == 0 || g.N == 0)
    return; // an empty result
  llvm::IRBuilder<> &b = k.builder;
  llvm::Value *a = canonicalOperand(k, plan, g, g.a, g.m, g.k, plan.strides[0], piece.operands[0],
                                    dtype, g.M, g.K);
  llvm::Value *bm = canonicalOperand(k, plan, g, g.b, g.k, g.n, plan.strides[1], piece.operands[1],
                                     dtype, g.K, g.N);
  // The output: in place, or computed as [batch, M, N] and scattered.
  const std::vector<int64_t> &outStrides = plan.resultStrides;
  llvm::Value *result = piece.result;
  llvm::Value *c = result;
  bool scatter = !g.c.direct;
  if (scatter) {
    c = canonicalOperand(k, plan, g, g.c, g.m, g.n, outStrides, nullptr, dtype, g.M, g.N);
    if (piece.accumulate)
      copyCanonical(k, plan, concat(g.batch, g.m, g.n), outStrides, result, c, dtype,
                    /*toCanonical=*/true);
  }

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
  // The sizes BLAS is given come in as the kernel's arguments: GEMMs that
  // differ only in them (a stack of layers of their own widths) share one
  // kernel, compiled once.
  auto size = [&](int64_t value) { return b.CreateTrunc(k.sizeArgument(value), i32); };
  // With a progress call to make, K is cut into pieces (C += A[:, piece]
  // B[piece, :]), each a BLAS call followed by the progress call.
  int64_t pieces = 1;
  if (piece.progress && g.K > 0) {
    double flops = 2.0 * double(g.M) * double(g.N) * double(g.K);
    pieces = std::max<int64_t>(
        1, std::min<int64_t>(static_cast<int64_t>(flops / kFlopsPerPiece), g.K / kLeastPieceK));
  }
  const int64_t pieceK = (g.K + pieces - 1) / std::max<int64_t>(pieces, 1);
  llvm::Value *firstBeta = llvm::ConstantFP::get(element, piece.accumulate ? 1.0 : 0.0);
  k.emitLoopNest(sizesOf(plan, g.batch), [&](const std::vector<llvm::Value *> &index) {
    auto batchOffset = [&](const GemmPlan::Matrix &m) {
      llvm::Value *offset = k.i64(0);
      for (size_t i = 0; i < index.size(); ++i)
        if (m.batchStrides[i] != 0)
          offset = b.CreateAdd(offset, b.CreateMul(index[i], k.i64(m.batchStrides[i])));
      return offset;
    };
    // C += A[:, first : first + length] B[first : first + length, :]
    // (overwrites C when beta is 0). A is M x K (K its rows when transposed),
    // B is K x N.
    auto call = [&](llvm::Value *first, llvm::Value *length, llvm::Value *beta) {
      llvm::Value *aOffset = g.a.transposed ? b.CreateMul(first, k.i64(g.a.ld)) : first;
      llvm::Value *bOffset = g.b.transposed ? first : b.CreateMul(first, k.i64(g.b.ld));
      b.CreateCall(gemm,
                   {b.getInt32(101), trans(g.a.transposed), trans(g.b.transposed), size(g.M),
                    size(g.N), b.CreateTrunc(length, i32), llvm::ConstantFP::get(element, 1.0),
                    at(a, b.CreateAdd(batchOffset(g.a), aOffset)), size(g.a.ld),
                    at(bm, b.CreateAdd(batchOffset(g.b), bOffset)), size(g.b.ld), beta,
                    at(c, batchOffset(g.c)), size(g.c.ld)});
      if (piece.progress)
        piece.progress();
    };
    if (pieces == 1)
      return call(k.i64(0), k.sizeArgument(g.K), firstBeta);
    k.emitLoop(k.i64(pieces), [&](llvm::Value *p) {
      llvm::Value *first = b.CreateMul(p, k.i64(pieceK));
      llvm::Value *length = b.CreateSelect(b.CreateICmpSLT(k.i64(g.K - pieceK), first),
                                           b.CreateSub(k.i64(g.K), first), k.i64(pieceK));
      call(first, length,
           b.CreateSelect(b.CreateICmpEQ(p, k.i64(0)), firstBeta,
                          llvm::ConstantFP::get(element, 1.0)));
    });
  });
  if (scatter)
    copyCanonical(k, plan, concat(g.batch, g.m, g.n), outStrides, result, c, dtype,
                  /*toCanonical=*/false);
}

} // namespace

ContractionPlan contractionPlanOf(const Op &op) {
  std::string error;
  std::optional<ContractionPlan> planned = ContractionPlan::of(op, error);
  if (!planned)
    throw CodegenError(op.loc, error);
  return *planned;
}

void emitContractionPiece(KernelLowering &k, const Op &op, const ContractionPiece &piece) {
  const ContractionPlan &plan = piece.plan;
  const DType dtype = op.result()->type.dtype;
  const int64_t limit = int64_t(1) << 31;
  bool fitsInt32 = true;
  for (int64_t size : plan.sizes)
    fitsInt32 &= size < limit;
  if (isFloat(dtype) && fitsInt32)
    if (std::optional<GemmPlan> g = planGemm(plan);
        g && g->M < limit && g->N < limit && g->K < limit)
      return emitGemm(k, op, piece, *g);
  emitLoops(k, op, piece);
}

void emitContraction(KernelLowering &k, const Op &op) {
  ContractionPiece whole;
  whole.plan = contractionPlanOf(op);
  for (const Value *operand : op.operands)
    whole.operands.push_back(k.buffer(operand));
  whole.result = k.buffer(op.result());
  emitContractionPiece(k, op, whole);
}

} // namespace shardc::llvmgen
