// Fused loops that read an operand transposed (`sub %s, transpose(%m)`, a
// transpose on its own): the plain loop nest runs along the output's last
// dim, which is a strided dim of such an operand, so every element is a load
// from a different cache line (a gather once vectorized). Instead the loop
// walks the output in square tiles of one cache line a side: per tile, the
// operand's part is read a contiguous line at a time, transposed in
// registers (shufflevector) into a stack buffer, and the tile's elements
// then read that buffer along its rows, as contiguous as the output.
//
// Which reads use the buffer is decided where they happen: a read of a
// tiled operand whose index is exactly the one the tile was filled for (the
// same index values, as a transpose or broadcast passes them on) loads from
// the buffer; any other read loads from memory as before. The walk below
// only picks the operands worth tiling, so a read it did not foresee is
// still correct. Tiles that do not fit at the end of either tiled dim are
// left to the plain loops.
#include "backend/llvm/ElementalInternal.h"

#include <llvm/IR/Intrinsics.h>

#include <algorithm>
#include <map>

namespace shardc::llvmgen::elemental {
namespace {

/// A dim's source in the output index: the output dim whose index it is
/// read at, kIndexZero (a size-1 dim read at 0) or kUnknown.
constexpr int kIndexZero = -1;
constexpr int kUnknown = -2;

/// A materialized operand read transposed: `from` per dim of `value`.
struct TiledOperand {
  const Value *value;
  std::vector<int> from;
};

/// Finds the materialized leaves of the tree computing `op`'s result, whose
/// dims map to output dims by `from`, following only ops that pass index
/// values on unchanged (elementwise ops, transpose, broadcast).
class LeafFinder {
public:
  explicit LeafFinder(const KernelLowering &k) : k_(k) {}

  std::vector<TiledOperand> leaves;

  void visitOp(const Op &op, const std::vector<int> &from) {
    const TensorType &result = op.result()->type;
    OpGroup group = opInfo(op.kind).group;
    if (group == OpGroup::Unary || group == OpGroup::Binary || group == OpGroup::Convert) {
      for (const Value *operand : op.operands) {
        // As broadcastOperand reads it: aligned from the right, size-1 dims
        // at 0, unless the shapes are equal.
        const std::vector<int64_t> &shape = operand->type.shape;
        if (shape == result.shape) {
          visitValue(operand, from);
          continue;
        }
        size_t offset = result.rank() - shape.size();
        std::vector<int> operandFrom(shape.size());
        for (size_t d = 0; d < shape.size(); ++d)
          operandFrom[d] = shape[d] == 1 ? kIndexZero : from[offset + d];
        visitValue(operand, operandFrom);
      }
      return;
    }
    if (op.kind == OpKind::Transpose) {
      std::optional<std::vector<int64_t>> perm = op.get(attrs::perm);
      if (!perm || perm->size() != from.size())
        return;
      std::vector<int> operandFrom(from.size(), kUnknown);
      for (size_t i = 0; i < perm->size(); ++i)
        if ((*perm)[i] >= 0 && static_cast<size_t>((*perm)[i]) < from.size())
          operandFrom[(*perm)[i]] = from[i];
      visitValue(op.operands[0], operandFrom);
      return;
    }
    if (op.kind == OpKind::Broadcast) {
      std::optional<std::vector<int64_t>> to = op.get(attrs::dims);
      const std::vector<int64_t> &shape = op.operands[0]->type.shape;
      if (!to || to->size() != shape.size())
        return;
      std::vector<int> operandFrom(shape.size());
      for (size_t i = 0; i < shape.size(); ++i)
        operandFrom[i] = shape[i] == 1 ? kIndexZero
                         : (*to)[i] >= 0 && static_cast<size_t>((*to)[i]) < from.size()
                             ? from[(*to)[i]]
                             : kUnknown;
      visitValue(op.operands[0], operandFrom);
    }
  }

private:
  const KernelLowering &k_;

  void visitValue(const Value *v, const std::vector<int> &from) {
    if (k_.fusion().isMaterialized(v) || !v->definingOp) {
      leaves.push_back({v, from});
      return;
    }
    visitOp(*v->definingOp, from);
  }
};

/// The tiles being filled and read by this thread's loop (code generation of
/// one function is single-threaded; functions may be emitted in parallel).
struct Tile {
  llvm::Value *buffer;                 // T x T elements, i8*
  std::vector<llvm::Value *> expected; // the operand index the tile holds
};
struct TileState {
  std::map<const Value *, Tile> tiles;
  llvm::Value *at = nullptr; // the element's offset in every tile
};
thread_local TileState *activeTiles = nullptr;

/// `vectors[i]` = row i of a T x T matrix; returns its columns. Stage h
/// swaps bit h of the row number with bit h of the lane number, so after
/// every bit of T - 1 each element (i, l) is at (l, i).
std::vector<llvm::Value *> transposeInRegisters(llvm::IRBuilder<> &b,
                                                std::vector<llvm::Value *> vectors) {
  const int t = static_cast<int>(vectors.size());
  for (int h = 1; h < t; h *= 2) {
    std::vector<int> low(t), high(t);
    for (int c = 0; c < t; ++c) {
      low[c] = (c & h) ? t + c - h : c;  // row i: its lane c or row i+h's lane c-h
      high[c] = (c & h) ? t + c : c + h; // row i+h: row i's lane c+h or its lane c
    }
    for (int i = 0; i < t; ++i) {
      if (i & h)
        continue;
      llvm::Value *a = vectors[i], *c = vectors[i + h];
      vectors[i] = b.CreateShuffleVector(a, c, low);
      vectors[i + h] = b.CreateShuffleVector(a, c, high);
    }
  }
  return vectors;
}

/// for i in [0, count) (count > 0): body(i), a loop LLVM must not unroll:
/// unrolled whole before the vectorizer sees it, a tile's row loop leaves
/// the loop around it innermost, and that one reads the tile with a stride.
void emitRolledLoop(KernelLowering &k, int64_t count,
                    const std::function<void(llvm::Value *)> &body) {
  llvm::IRBuilder<> &b = k.builder;
  llvm::Function *fn = b.GetInsertBlock()->getParent();
  llvm::BasicBlock *pre = b.GetInsertBlock();
  llvm::BasicBlock *header = llvm::BasicBlock::Create(k.context, "tile.loop", fn);
  llvm::BasicBlock *exit = llvm::BasicBlock::Create(k.context, "tile.loop.end", fn);
  b.CreateBr(header);
  b.SetInsertPoint(header);
  llvm::PHINode *i = b.CreatePHI(b.getInt64Ty(), 2, "i");
  i->addIncoming(k.i64(0), pre);
  body(i);
  llvm::Value *next = b.CreateAdd(i, k.i64(1), "", true, true);
  i->addIncoming(next, b.GetInsertBlock());
  llvm::BranchInst *latch = b.CreateCondBr(b.CreateICmpSLT(next, k.i64(count)), header, exit);
  llvm::MDNode *noUnroll =
      llvm::MDNode::get(k.context, llvm::MDString::get(k.context, "llvm.loop.unroll.disable"));
  llvm::MDNode *loopId = llvm::MDNode::getDistinct(k.context, {nullptr, noUnroll});
  loopId->replaceOperandWith(0, loopId);
  latch->setMetadata(llvm::LLVMContext::MD_loop, loopId);
  b.SetInsertPoint(exit);
}

} // namespace

llvm::Value *tiledElement(KernelLowering &k, const Value *v, ElementIndex &index) {
  if (!activeTiles)
    return nullptr;
  auto tile = activeTiles->tiles.find(v);
  if (tile == activeTiles->tiles.end() || !index.knownDims())
    return nullptr;
  if (*index.knownDims() != tile->second.expected)
    return nullptr;
  return k.load(tile->second.buffer, v->type.dtype, activeTiles->at);
}

bool emitTiledLoops(KernelLowering &k, const Value *v) {
  const Op &op = *v->definingOp;
  const std::vector<int64_t> &shape = v->type.shape;
  const int rank = static_cast<int>(shape.size());
  if (rank < 2)
    return false;
  const int last = rank - 1;
  std::vector<int> identity(rank);
  for (int d = 0; d < rank; ++d)
    identity[d] = d;
  LeafFinder finder(k);
  finder.visitOp(op, identity);

  // The operands read with their contiguous last dim along output dim `rowDim`
  // (the first such dim found) and one of their dims along the output's last.
  int rowDim = kUnknown;
  std::vector<TiledOperand> tiled;
  int64_t widest = 0;
  for (const TiledOperand &leaf : finder.leaves) {
    const std::vector<int> &from = leaf.from;
    if (from.size() < 2 || from.back() < 0 || from.back() == last)
      continue;
    int64_t bytes = dtypeBytes(leaf.value->type.dtype);
    bool alongLast = false, onceAlongRow = true;
    for (size_t d = 0; d + 1 < from.size(); ++d) {
      alongLast = alongLast || from[d] == last;
      onceAlongRow = onceAlongRow && from[d] != from.back() && from[d] != kUnknown;
    }
    if (!alongLast || !onceAlongRow || (bytes != 4 && bytes != 8))
      continue;
    if (rowDim == kUnknown && shape[from.back()] >= 64 / bytes && shape[last] >= 64 / bytes)
      rowDim = from.back(); // the first along which a whole tile fits
    bool seen = false;
    for (const TiledOperand &t : tiled)
      seen = seen || t.value == leaf.value;
    if (from.back() != rowDim || seen)
      continue;
    tiled.push_back(leaf);
    widest = std::max(widest, bytes);
  }
  const int64_t t = widest == 0 ? 0 : 64 / widest; // one cache line a side
  if (tiled.empty() || shape[rowDim] < t || shape[last] < t)
    return false;

  // The operands read at the output's own index: a tile reads t lines of
  // each, a row apart, and with the tiled operand's and the output's lines
  // that is more streams than the hardware prefetchers follow.
  std::vector<const Value *> straight;
  for (const TiledOperand &leaf : finder.leaves)
    if (leaf.from == identity &&
        std::find(straight.begin(), straight.end(), leaf.value) == straight.end())
      straight.push_back(leaf.value);

  llvm::IRBuilder<> &b = k.builder;
  llvm::Function *fn = b.GetInsertBlock()->getParent();
  llvm::IRBuilder<> entry(&fn->getEntryBlock(), fn->getEntryBlock().getFirstInsertionPt());
  std::vector<llvm::Value *> buffers;
  for (const TiledOperand &operand : tiled) {
    auto *array =
        llvm::ArrayType::get(k.memoryType(operand.value->type.dtype), static_cast<uint64_t>(t * t));
    llvm::AllocaInst *slot = entry.CreateAlloca(array, nullptr, operand.value->name + ".tile");
    slot->setAlignment(llvm::Align(64));
    buffers.push_back(b.CreateBitCast(slot, b.getInt8PtrTy()));
  }

  std::vector<int64_t> outerShape;
  std::vector<int> outerDims;
  for (int d = 0; d < rank; ++d)
    if (d != rowDim && d != last) {
      outerDims.push_back(d);
      outerShape.push_back(shape[d]);
    }
  llvm::Value *out = k.buffer(v);
  std::vector<llvm::Value *> index(rank);
  auto emitElementAt = [&](llvm::Value *row, llvm::Value *column) {
    index[rowDim] = row;
    index[last] = column;
    ElementIndex at(shape, index);
    llvm::Value *element = computeElement(k, op, at);
    k.store(out, v->type.dtype, at.linear(k), element);
  };
  // The operand's index for output position `index`.
  auto operandIndex = [&](const TiledOperand &operand) {
    std::vector<llvm::Value *> dims;
    for (int from : operand.from)
      dims.push_back(from == kIndexZero ? k.i64(0) : index[from]);
    return dims;
  };

  // A hint only, so `linear` may be past the buffer's end (no inbounds).
  auto prefetch = [&](llvm::Value *buffer, DType dtype, llvm::Value *linear) {
    llvm::Type *element = k.memoryType(dtype);
    llvm::Value *at =
        b.CreateGEP(element, b.CreateBitCast(buffer, element->getPointerTo()), linear);
    callIntrinsic(
        k, llvm::Intrinsic::prefetch,
        {b.CreateBitCast(at, b.getInt8PtrTy()), b.getInt32(0), b.getInt32(3), b.getInt32(1)});
  };

  // One tile: rows [row0, row0 + t) of rowDim, columns [column0, column0 + t)
  // of the last dim.
  auto emitTile = [&](llvm::Value *row0, llvm::Value *column0) {
    for (size_t i = 0; i < tiled.size(); ++i) {
      const TiledOperand &operand = tiled[i];
      DType dtype = operand.value->type.dtype;
      auto *vectorType = llvm::FixedVectorType::get(k.memoryType(dtype), static_cast<unsigned>(t));
      llvm::Align align(static_cast<uint64_t>(dtypeBytes(dtype)));
      // Line c of the tile: the operand's t contiguous elements at output
      // rows row0.. and output column column0 + c.
      std::vector<llvm::Value *> lines;
      index[rowDim] = row0;
      for (int64_t c = 0; c < t; ++c) {
        index[last] = b.CreateAdd(column0, k.i64(c));
        llvm::Value *linear = k.linearIndex(operand.value->type.shape, operandIndex(operand));
        llvm::Value *address = b.CreateBitCast(
            k.elementAddress(k.buffer(operand.value), dtype, linear), vectorType->getPointerTo());
        lines.push_back(b.CreateAlignedLoad(vectorType, address, align));
        // The same line of the next tile along the row: the operand is read
        // with a stride of a whole row here, which the hardware prefetchers
        // follow late (10-15% of the loop's time).
        index[last] = b.CreateAdd(column0, k.i64(c + t));
        prefetch(k.buffer(operand.value), dtype,
                 k.linearIndex(operand.value->type.shape, operandIndex(operand)));
      }
      std::vector<llvm::Value *> rows = transposeInRegisters(b, std::move(lines));
      for (int64_t r = 0; r < t; ++r) {
        llvm::Value *address = b.CreateBitCast(k.elementAddress(buffers[i], dtype, k.i64(r * t)),
                                               vectorType->getPointerTo());
        b.CreateAlignedStore(rows[r], address, align);
      }
    }
    for (const Value *operand : straight)
      for (int64_t r = 0; r < t; ++r) {
        index[rowDim] = b.CreateAdd(row0, k.i64(r));
        index[last] = b.CreateAdd(column0, k.i64(t));
        prefetch(k.buffer(operand), operand->type.dtype, k.linearIndex(shape, index));
      }
    TileState state;
    TileState *outer = activeTiles;
    activeTiles = &state;
    try {
      emitRolledLoop(k, t, [&](llvm::Value *r) {
        llvm::Value *row = b.CreateAdd(row0, r);
        emitRolledLoop(k, t, [&](llvm::Value *c) {
          llvm::Value *column = b.CreateAdd(column0, c);
          index[rowDim] = row;
          index[last] = column;
          state.tiles.clear();
          for (size_t i = 0; i < tiled.size(); ++i)
            state.tiles[tiled[i].value] = Tile{buffers[i], operandIndex(tiled[i])};
          state.at = b.CreateAdd(b.CreateMul(r, k.i64(t)), c);
          emitElementAt(row, column);
        });
      });
    } catch (...) {
      activeTiles = outer;
      throw;
    }
    activeTiles = outer;
  };

  const int64_t rows = shape[rowDim], columns = shape[last];
  const int64_t fullRows = rows / t * t, fullColumns = columns / t * t;
  k.emitLoopNest(outerShape, [&](const std::vector<llvm::Value *> &outerIndex) {
    for (size_t j = 0; j < outerDims.size(); ++j)
      index[outerDims[j]] = outerIndex[j];
    k.emitLoop(k.i64(rows / t), [&](llvm::Value *rowTile) {
      llvm::Value *row0 = b.CreateMul(rowTile, k.i64(t));
      k.emitLoop(k.i64(columns / t), [&](llvm::Value *columnTile) {
        emitTile(row0, b.CreateMul(columnTile, k.i64(t)));
      });
      if (fullColumns < columns) // the columns past the last whole tile
        k.emitLoop(k.i64(t), [&](llvm::Value *r) {
          llvm::Value *row = b.CreateAdd(row0, r);
          k.emitLoop(k.i64(columns - fullColumns), [&](llvm::Value *c) {
            emitElementAt(row, b.CreateAdd(k.i64(fullColumns), c));
          });
        });
    });
    if (fullRows < rows) // the rows past the last whole tile
      k.emitLoop(k.i64(rows - fullRows), [&](llvm::Value *r) {
        llvm::Value *row = b.CreateAdd(k.i64(fullRows), r);
        k.emitLoop(k.i64(columns), [&](llvm::Value *c) { emitElementAt(row, c); });
      });
  });
  return true;
}

} // namespace shardc::llvmgen::elemental
