// Internals of the elemental lowering (Elemental*.cpp), shared by its per-op-
// group files. Not part of the backend's interface (Lowering.h).
//
// Every emitter computes ONE element of its op's result at a position given
// as an ElementIndex and returns it as a register value (Lowering.h's element
// types). Operands are read through elementOf, which loads a materialized
// value from its buffer and otherwise recurses into the operand's op: a fused
// chain becomes one expression tree inside the consumer's loop.
#pragma once

#include "backend/llvm/Lowering.h"

#include <optional>
#include <vector>

namespace shardc::llvmgen::elemental {

/// A position in a tensor of `shape`: the per-dim index, the row-major
/// linear index, or both. The missing form is computed on first use and
/// kept, so it must be asked for at a point that dominates every later use
/// (an emitter that opens a loop asks for what it needs before opening it).
class ElementIndex {
public:
  ElementIndex(const std::vector<int64_t> &shape, std::vector<llvm::Value *> dims)
      : shape_(shape), dims_(std::move(dims)) {}
  /// A position known by its linear index (a flat loop, a reshape).
  static ElementIndex fromLinear(const std::vector<int64_t> &shape, llvm::Value *linear);

  const std::vector<int64_t> &shape() const { return shape_; }
  /// The index along every dim (delinearized with constant divisions).
  const std::vector<llvm::Value *> &dims(KernelLowering &k);
  llvm::Value *dim(KernelLowering &k, size_t d) { return dims(k).at(d); }
  llvm::Value *linear(KernelLowering &k);
  /// The index along every dim when known, without computing it; else null.
  const std::vector<llvm::Value *> *knownDims() const { return dimsKnown() ? &dims_ : nullptr; }

private:
  std::vector<int64_t> shape_;
  std::vector<llvm::Value *> dims_; // empty until known (rank > 0)
  llvm::Value *linear_ = nullptr;
  bool dimsKnown() const { return dims_.size() == shape_.size(); }
};

/// Element `index` of `v`: a load when v is materialized, else v's op
/// computed at that position.
llvm::Value *elementOf(KernelLowering &k, const Value *v, ElementIndex &index);
/// Element `index` of the result of elemental op `op`, computed from its
/// operands (never from its own buffer).
llvm::Value *computeElement(KernelLowering &k, const Op &op, ElementIndex &index);

// ---- per op group -----------------------------------------------------------

/// Unary ops, convert, binary ops (numpy broadcasting) and select
/// (ElementalArithmetic.cpp).
llvm::Value *emitElementwise(KernelLowering &k, const Op &op, ElementIndex &index);
/// reshape, transpose, broadcast, concat, slice, pad (ElementalShape.cpp).
llvm::Value *emitShapeElement(KernelLowering &k, const Op &op, ElementIndex &index);
/// all_slice: the operand at this device's block offset along `dim`, zero
/// past its end (ElementalShape.cpp).
llvm::Value *emitAllSliceElement(KernelLowering &k, const Op &op, ElementIndex &index);
/// constant, iota, random_uniform, random_normal (ElementalCreation.cpp).
llvm::Value *emitCreationElement(KernelLowering &k, const Op &op, ElementIndex &index);
/// reduce_sum/max/min/mean: a loop over the reduced dims
/// (ElementalReduction.cpp).
llvm::Value *emitReductionElement(KernelLowering &k, const Op &op, ElementIndex &index);
/// Fills the buffer of materialized reduction `v` by walking its operand in
/// row-major order into per-position accumulators, when the operand's
/// innermost dim is kept (so the element loop would read it with a stride).
/// False, emitting nothing, when that does not apply.
bool emitReductionByRows(KernelLowering &k, const Value *v);

/// A reduce_* over the last dim of a row, fed one element at a time by a loop
/// that does other work too (ElementalRows.cpp's fused row loops), with the
/// numerics of emitReductionElement. Its state lives in stack slots, which
/// LLVM turns into registers (the loop's phis), so the loop may be emitted
/// in several copies (chunks, versions) that all add to the same state.
class RowAccumulator {
public:
  /// `op`: a reduce_* whose operand's last dim, of `count` elements, it
  /// reduces. The slots are allocated in the function's entry block.
  RowAccumulator(KernelLowering &k, const Op &op, int64_t count);
  /// An f32 sum, which adds chunks of chunkLength() elements in f32 and
  /// their sums in double: the loop feeding it runs chunk by chunk and calls
  /// endChunk after each chunk.
  bool chunked() const { return chunked_; }
  static int64_t chunkLength();
  void reset();             // before the row's first element
  void add(llvm::Value *x); // one element of the row, in order
  void endChunk();          // after a chunk (chunked only)
  llvm::Value *result();    // the result element, after the row

private:
  KernelLowering &k_;
  OpKind kind_;
  DType dtype_;
  llvm::Type *accType_;
  int64_t count_;
  bool chunked_;
  std::vector<llvm::AllocaInst *> slots_; // the state: accumulator (and NaN flag)
  llvm::AllocaInst *partial_ = nullptr;   // a chunked sum's f32 chunk sum

  std::vector<llvm::Value *> loadState(); // the slots' values, at the builder
  void storeState(const std::vector<llvm::Value *> &state);
};

// ---- row groups (ElementalRows.cpp) ------------------------------------------

/// Fills the buffer of `root` row by row, computing the group's members once
/// per row first (FusionPlan::rowGroups).
void emitRowGroup(KernelLowering &k, const Value *root,
                  const std::vector<FusionPlan::RowMember> &members);
/// Element `index` of `v` when `v` is a member of the row group being
/// emitted and `index` is on the current row: its register, or a load from
/// its row buffer. Null otherwise.
llvm::Value *rowMemberElement(KernelLowering &k, const Value *v, ElementIndex &index);

// ---- tiles for transposed operands (ElementalTiles.cpp) -----------------------

/// Fills the buffer of `v` in square tiles when its tree reads a materialized
/// operand transposed (its contiguous dim along an outer dim of `v`), each
/// tile of that operand transposed in registers into a stack buffer. False,
/// emitting nothing, when no operand is read that way or `v` is too small.
bool emitTiledLoops(KernelLowering &k, const Value *v);
/// Element `index` of `v` from the tile being emitted when `v` is tiled and
/// `index` is the position the tile holds; null otherwise.
llvm::Value *tiledElement(KernelLowering &k, const Value *v, ElementIndex &index);

// ---- math (ElementalMath.cpp) -------------------------------------------------

/// A call of the overloaded intrinsic `id` on `args` (their type selects it).
llvm::Value *callIntrinsic(KernelLowering &k, llvm::Intrinsic::ID id,
                           const std::vector<llvm::Value *> &args);
/// e^x: f32 and f64 inline (a polynomial after range reduction, within
/// about 1 ulp, +inf past overflow, 0 past underflow, NaN kept).
llvm::Value *emitExp(KernelLowering &k, llvm::Value *x);
/// tanh from exp: an odd polynomial near 0, (1 - e^-2|x|) / (1 + e^-2|x|)
/// elsewhere, the sign copied back; branch-free so loops vectorize.
llvm::Value *emitTanh(KernelLowering &k, llvm::Value *x);
/// 1 / (1 + exp(-x)).
llvm::Value *emitSigmoid(KernelLowering &k, llvm::Value *x);
/// erf through libm (erf / erff).
llvm::Value *emitErf(KernelLowering &k, llvm::Value *x);
/// a / c for floats: for an f32 divisor that is loop-invariant
/// (KernelLowering::isLoopInvariant, constants too), a multiplication by
/// its reciprocal (computed once), within 2 ulp of the division.
llvm::Value *emitFloatDiv(KernelLowering &k, llvm::Value *a, llvm::Value *c);
/// max / min that return NaN when either operand is NaN (numpy maximum).
llvm::Value *emitFloatMax(KernelLowering &k, llvm::Value *a, llvm::Value *b, bool isMax);
/// Integer power by squaring, wrapping; a negative exponent gives 0.
llvm::Value *emitIntPow(KernelLowering &k, llvm::Value *base, llvm::Value *exponent);

// ---- attributes ---------------------------------------------------------------

/// The integer list attribute `key` of `op`; throws when missing.
std::vector<int64_t> intListAttr(const Op &op, AttrKey<std::vector<int64_t>> key);
/// The integer attribute `key`; throws when missing.
int64_t intAttr(const Op &op, AttrKey<int64_t> key);
/// The lowering cannot handle `op` as written (a checked program never gets
/// here): an internal error naming the op.
[[noreturn]] void unsupported(const Op &op, const std::string &why);

/// A constant of register type `type` (float or integer) with value `v`.
llvm::Value *constantOf(llvm::Type *type, double v);

} // namespace shardc::llvmgen::elemental
