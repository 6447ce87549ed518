// A matmul or einsum whose operand is the result of an all_gather that
// nothing else reads, as one kernel that overlaps the exchange with the
// compute (a collective matmul, XLA's windowed einsum). The gathered dim is
// one label of the contraction, and member k's block of the gathered operand
// covers that label's range [k*s, (k+1)*s): a summed label (C = A B with B
// gathered along K) makes each block a term of the sum, C = sum_k A[:, K_k] B_k;
// an output label (A gathered along M) makes it a block of the result,
// C[M_k, :] = A_k B. So the kernel posts the exchange, computes with its own
// block while the others travel, then with each other block as it arrives,
// with a progress call between BLAS pieces (MPI moves large messages only
// inside MPI calls). Member m takes the blocks in the order m, m+1, ..., m-1:
// the same order on every replica of m's result, so replicas agree bitwise.
#include "backend/llvm/Codegen.h"
#include "backend/llvm/KernelEmitter.h"

#include <algorithm>
#include <map>

namespace shardc::llvmgen {
namespace {

bool isContraction(const Op &op) { return op.kind == OpKind::Matmul || op.kind == OpKind::Einsum; }

/// How often each value is read in `block`: by its ops, inside their
/// regions, and as the block's (and its regions') returned values.
void countReads(const Block &block, std::map<const Value *, int> &reads) {
  for (const auto &op : block.ops) {
    for (const Value *operand : op->operands)
      ++reads[operand];
    for (const Block *region : op->regions())
      countReads(*region, reads);
  }
  for (const Value *v : block.returned)
    ++reads[v];
}

/// The label of the gathered dim of operand `index`, when its block is a
/// range of that label (the label names no other dim of that operand).
std::optional<size_t> gatheredLabel(const Op &op, size_t index, const Op &gather) {
  std::string error;
  std::optional<ContractionPlan> plan = ContractionPlan::of(op, error);
  std::optional<int64_t> dim = gather.get(attrs::dim);
  if (!plan || !dim || index >= plan->operandLabels.size())
    return std::nullopt;
  const std::vector<size_t> &labels = plan->operandLabels[index];
  if (*dim < 0 || static_cast<size_t>(*dim) >= labels.size() ||
      labels[static_cast<size_t>(*dim)] == ContractionPlan::kNoLabel)
    return std::nullopt;
  size_t label = labels[static_cast<size_t>(*dim)];
  if (std::count(labels.begin(), labels.end(), label) != 1)
    return std::nullopt;
  return label;
}

/// The members of the all_gather: its result's dim over its operand's.
int64_t gatherMembers(const Op &gather) {
  std::optional<int64_t> dim = gather.get(attrs::dim);
  const std::vector<int64_t> &in = gather.operands.at(0)->type.shape;
  const std::vector<int64_t> &out = gather.result()->type.shape;
  if (!dim || *dim < 0 || static_cast<size_t>(*dim) >= in.size() || in.size() != out.size() ||
      in[static_cast<size_t>(*dim)] <= 0 ||
      out[static_cast<size_t>(*dim)] % in[static_cast<size_t>(*dim)] != 0)
    return 1;
  return out[static_cast<size_t>(*dim)] / in[static_cast<size_t>(*dim)];
}

/// Whether computing block by block costs more than the overlap can save.
/// Along a summed label it costs nothing (OpenBLAS updates C once per block
/// of 256-384 of K in any case), nor along a label every operand carries (a
/// batch label: separate products already). Along a label of this operand
/// and the result only (A's M, B's N), each block's product reads and packs
/// the other operands whole again: worth it only when what arrives from each
/// member is at least that big. (A transformer's MLP with its activations
/// gathered over the batch, 128 KiB blocks against a 2 MiB weight, ran its
/// product 29% slower in two halves.)
bool splitCostsMore(const Op &op, size_t index, size_t label, const Op &gather) {
  std::string error;
  std::optional<ContractionPlan> plan = ContractionPlan::of(op, error);
  if (!plan || label >= plan->outputRank)
    return false;
  int64_t others = 0;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    if (i == index)
      continue;
    const std::vector<size_t> &labels = plan->operandLabels[i];
    if (std::find(labels.begin(), labels.end(), label) != labels.end())
      return false; // a batch label
    others += op.operands[i]->type.bytes();
  }
  return gather.operands.at(0)->type.bytes() < others;
}

} // namespace

void planGatherContractions(const Block &block, FusionPlan &plan) {
  std::map<const Value *, int> reads;
  countReads(block, reads);
  std::set<const Op *> ops;
  for (const auto &op : block.ops)
    ops.insert(op.get());
  for (const auto &opPtr : block.ops) {
    const Op &op = *opPtr;
    if (!isContraction(op))
      continue;
    for (size_t i = 0; i < op.operands.size(); ++i) {
      const Op *gather = op.operands[i]->definingOp;
      if (!gather || gather->kind != OpKind::AllGather || !ops.count(gather) ||
          reads[op.operands[i]] != 1 || gatherMembers(*gather) < 2 ||
          gather->operands.at(0)->type.dtype != op.operands[i]->type.dtype)
        continue;
      std::optional<size_t> label = gatheredLabel(op, i, *gather);
      if (!label || splitCostsMore(op, i, *label, *gather))
        continue;
      plan.gatheredOperands[&op] = {gather, i};
      plan.deferredGathers.insert(gather);
      break; // one overlapped exchange per contraction
    }
  }
}

void emitGatherContraction(KernelLowering &k, ProgramDescription &d, const Op &op,
                           const FusionPlan::GatheredOperand &gathered) {
  const Op &gather = *gathered.gather;
  const size_t index = gathered.operand;
  const Value *blockValue = gather.operands.at(0);
  const TensorType &blockType = blockValue->type;
  const ContractionPlan whole = contractionPlanOf(op);
  const size_t label = *gatheredLabel(op, index, gather);
  const int64_t members = gatherMembers(gather);
  const int64_t extent = blockType.shape.at(static_cast<size_t>(*gather.get(attrs::dim)));
  const int64_t count = blockType.numElements();
  const bool summed = label >= whole.outputRank;

  const Attribute *axes = gather.attr(attrs::axes);
  if (!axes || axes->kind != Attribute::Kind::AxisSet || !k.currentMesh())
    throw CodegenError(gather.loc, "all_gather needs `axes` of the manual_computation's mesh");
  llvm::IRBuilder<> &b = k.builder;
  auto *i8p = b.getInt8PtrTy();
  auto *i64 = b.getInt64Ty();
  llvm::Value *in = k.buffer(blockValue), *out = k.buffer(gather.result());
  llvm::Value *me = b.CreateCall(
      k.runtimeFunction("shardrt_gather_start",
                        llvm::FunctionType::get(i64, {i8p, i64, i8p, i64, i64, i8p, i8p}, false)),
      {k.runtimeContext, k.opIdValue(gather),
       k.externalPointer(d.group(*k.currentMesh(), axes->axes)),
       k.i64(static_cast<int64_t>(blockType.dtype)), k.i64(count), in, out},
      "member");
  llvm::FunctionCallee progress = k.runtimeFunction(
      "shardrt_gather_progress", llvm::FunctionType::get(b.getVoidTy(), {i8p}, false));
  llvm::FunctionCallee wait = k.runtimeFunction(
      "shardrt_gather_wait", llvm::FunctionType::get(b.getVoidTy(), {i8p, i64}, false));

  // The piece for member `member`'s block, read at `blockBuffer`.
  ContractionPiece piece;
  piece.plan = whole;
  piece.plan.sizes[label] = extent;
  std::vector<int64_t> own = rowMajorStrides(blockType.shape);
  std::vector<int64_t> &blockStrides = piece.plan.strides[index];
  std::fill(blockStrides.begin(), blockStrides.end(), 0);
  for (size_t dim = 0; dim < own.size(); ++dim)
    if (size_t l = whole.operandLabels[index][dim]; l != ContractionPlan::kNoLabel)
      blockStrides[l] += own[dim];
  piece.progress = [&] { b.CreateCall(progress, {k.runtimeContext}); };
  auto emitPiece = [&](llvm::Value *member, llvm::Value *blockBuffer, bool accumulate) {
    llvm::Value *first = b.CreateMul(member, k.i64(extent));
    auto at = [&](llvm::Value *buffer, DType dtype, int64_t stride) {
      return stride == 0 ? buffer
                         : k.elementAddress(buffer, dtype, b.CreateMul(first, k.i64(stride)));
    };
    piece.operands.clear();
    for (size_t i = 0; i < op.operands.size(); ++i)
      piece.operands.push_back(
          i == index ? blockBuffer
                     : b.CreatePointerCast(at(k.buffer(op.operands[i]), op.operands[i]->type.dtype,
                                              whole.strides[i][label]),
                                           i8p));
    DType dtype = op.result()->type.dtype;
    piece.result =
        b.CreatePointerCast(at(k.buffer(op.result()), dtype, whole.resultStrides[label]), i8p);
    piece.accumulate = accumulate;
    emitContractionPiece(k, op, piece);
    k.freeScratch(); // per piece: a scratch buffer made in a loop is freed there
  };
  emitPiece(me, in, /*accumulate=*/false);
  k.emitLoop(k.i64(members - 1), [&](llvm::Value *step) {
    llvm::Value *member =
        b.CreateURem(b.CreateAdd(me, b.CreateAdd(step, k.i64(1))), k.i64(members));
    b.CreateCall(wait, {k.runtimeContext, member});
    llvm::Value *blockBuffer =
        k.elementAddress(out, blockType.dtype, b.CreateMul(member, k.i64(count)));
    emitPiece(member, b.CreatePointerCast(blockBuffer, i8p), summed);
  });
  b.CreateCall(k.runtimeFunction("shardrt_gather_finish",
                                 llvm::FunctionType::get(b.getVoidTy(), {i8p}, false)),
               {k.runtimeContext});
}

} // namespace shardc::llvmgen
