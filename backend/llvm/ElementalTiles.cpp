// Fused loops that read an operand transposed (`sub %s, transpose(%m)`, a
// transpose on its own): the plain loop nest runs along the output's last
// dim, which is a strided dim of such an operand, so every element is a load
// from a different cache line (a gather once vectorized). Instead the loop
// walks the output in blocks of square tiles of one vector register a side
// (a cache line with AVX-512, half of one with AVX2), in
// two passes per block: first each tile of the operand is read a contiguous
// line at a time and transposed in registers (shufflevector) into a stack
// buffer holding the block; then the block's rows are computed reading that
// buffer along the row, as contiguous as the output.
//
// Why blocks and two passes (bench `broadcast`, 16x512x512 f32 on 2 ranks):
// computing each 16 x 16 tile right after loading it left the operand's
// strided loads waiting behind the tile's arithmetic (the exp calls), and one
// line per operand row and tile gave the hardware prefetchers nothing to
// follow. A block reads kSegmentBytes of each operand row, line after line,
// in a loop of loads, shuffles and stores only; 1.51-1.59 ms became
// 1.09-1.17 ms per rank there (0.77-0.80x the STREAM triad), and an f64 or a
// 4096-column shape 4-5x faster (docs/backend-and-runtime.md).
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

/// Bytes of each operand row a block reads (the block's rows: 128 f32, 64
/// f64), and of all operands' block buffers together (its columns: 512 f32
/// for one operand). On the bench 256 or 1024 bytes a row measured about the
/// same, 64 or 128 bytes 1.1-2x slower; 128 KiB of buffers (half rows
/// there) 10% slower.
constexpr int64_t kSegmentBytes = 512;
constexpr int64_t kBufferBytes = 256 * 1024;
/// Each strided line read into a tile is followed by a prefetch (into L2)
/// of the line this many tile columns on, which the same loop reads two
/// tile columns later: 6-14% faster in four sets of alternating runs
/// (median of medians 3.81 -> 3.27 ms), the bench's transposed broadcast
/// 0.69 -> 0.86x the triad; one or three to four tiles ahead about the
/// same, into L1 or L3 no better.
constexpr int64_t kPrefetchTiles = 2;

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
  llvm::Value *buffer;                 // the block's elements, i8*
  std::vector<llvm::Value *> expected; // the operand index the tile holds
};
struct TileState {
  std::map<const Value *, Tile> tiles;
  llvm::Value *at = nullptr; // the element's offset in every buffer
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

/// for i in [0, count) (count > 0 at run time): body(i), a loop LLVM must
/// not unroll: unrolled whole before the vectorizer sees it, a tile loop
/// leaves the loop around it innermost, and that one reads the operand with
/// a stride again.
void emitRolledLoop(KernelLowering &k, llvm::Value *count,
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
  llvm::BranchInst *latch = b.CreateCondBr(b.CreateICmpSLT(next, count), header, exit);
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
  // A tile's side is one vector register, at most a cache line: the t loads
  // of a tile and their transposes then stay in registers. Tiles of a line
  // with AVX2 (two registers a row, 32 for a tile of f32) spilled, and ran
  // the bench's transposed broadcast 25-30% slower than tiles of half a line.
  const int64_t tileBytes = std::min<int64_t>(64, k.vectorBytes);

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
    if (rowDim == kUnknown && shape[from.back()] >= tileBytes / bytes &&
        shape[last] >= tileBytes / bytes)
      rowDim = from.back(); // the first along which a whole tile fits
    bool seen = false;
    for (const TiledOperand &t : tiled)
      seen = seen || t.value == leaf.value;
    if (from.back() != rowDim || seen)
      continue;
    tiled.push_back(leaf);
    widest = std::max(widest, bytes);
  }
  const int64_t t = widest == 0 ? 0 : tileBytes / widest;
  if (tiled.empty() || shape[rowDim] < t || shape[last] < t)
    return false;

  // Blocks of blockRows x blockColumns output elements, whole tiles only.
  // blockRows makes each operand row a block reads kSegmentBytes long (a
  // line or two per row leave the hardware prefetchers little to follow);
  // blockColumns fills kBufferBytes with the operands' transposed blocks,
  // whole rows up to 512 f32 columns: the block's part of the output and of
  // the straight operands is then one contiguous run (runs of half a row,
  // 1 KiB, were 10% slower on the bench).
  const int64_t rows = shape[rowDim], columns = shape[last];
  const int64_t fullRows = rows / t * t, fullColumns = columns / t * t;
  int64_t tiledBytes = 0;
  for (const TiledOperand &operand : tiled)
    tiledBytes += dtypeBytes(operand.value->type.dtype);
  const int64_t blockRows = std::min(fullRows, std::max(t, kSegmentBytes / widest / t * t));
  const int64_t blockColumns =
      std::min(fullColumns, std::max(t, kBufferBytes / (blockRows * tiledBytes) / t * t));
  // A buffer row is a tile wider than the block: a tile's t stores then land
  // in t cache sets, not in one or two (rows of 2 KiB or 4 KiB apart share a
  // set); 10% faster on the bench.
  const int64_t bufferStride = blockColumns + t;

  llvm::IRBuilder<> &b = k.builder;
  llvm::Function *fn = b.GetInsertBlock()->getParent();
  llvm::IRBuilder<> entry(&fn->getEntryBlock(), fn->getEntryBlock().getFirstInsertionPt());
  // The buffers live only during this loop nest (lifetime markers), so the
  // tiled loops of one function can share their stack.
  std::vector<llvm::Value *> buffers;
  std::vector<std::pair<llvm::Value *, int64_t>> lifetimes;
  for (const TiledOperand &operand : tiled) {
    DType dtype = operand.value->type.dtype;
    auto *array =
        llvm::ArrayType::get(k.memoryType(dtype), static_cast<uint64_t>(blockRows * bufferStride));
    llvm::AllocaInst *slot = entry.CreateAlloca(array, nullptr, operand.value->name + ".tile");
    slot->setAlignment(llvm::Align(64));
    buffers.push_back(b.CreateBitCast(slot, b.getInt8PtrTy()));
    lifetimes.push_back({slot, blockRows * bufferStride * dtypeBytes(dtype)});
  }
  for (auto [slot, bytes] : lifetimes)
    b.CreateLifetimeStart(slot, b.getInt64(static_cast<uint64_t>(bytes)));

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

  // The operands' tile at output rows [row0, row0 + t) and columns
  // [column0, column0 + t), transposed into their buffers at block row
  // `bufferRow` and block column `bufferColumn`.
  llvm::Function *prefetch = llvm::Intrinsic::getDeclaration(
      fn->getParent(), llvm::Intrinsic::prefetch, {b.getInt8PtrTy()});
  auto transposeTile = [&](llvm::Value *row0, llvm::Value *column0, llvm::Value *bufferRow,
                           llvm::Value *bufferColumn) {
    for (size_t i = 0; i < tiled.size(); ++i) {
      const TiledOperand &operand = tiled[i];
      DType dtype = operand.value->type.dtype;
      const int64_t bytes = dtypeBytes(dtype);
      auto *vectorType = llvm::FixedVectorType::get(k.memoryType(dtype), static_cast<unsigned>(t));
      // Line c of the tile: the operand's t contiguous elements at output
      // rows row0.. and output column column0 + c.
      std::vector<llvm::Value *> lines;
      index[rowDim] = row0;
      for (int64_t c = 0; c < t; ++c) {
        index[last] = b.CreateAdd(column0, k.i64(c));
        llvm::Value *linear = k.linearIndex(operand.value->type.shape, operandIndex(operand));
        llvm::Value *address = b.CreateBitCast(
            k.elementAddress(k.buffer(operand.value), dtype, linear), vectorType->getPointerTo());
        lines.push_back(b.CreateAlignedLoad(vectorType, address, llvm::Align(bytes)));
        // The line kPrefetchTiles tile columns on, into L2 (a plain GEP: at
        // the block's end it may lie past the operand, and a prefetch there
        // does nothing).
        index[last] = b.CreateAdd(column0, k.i64(c + kPrefetchTiles * t));
        llvm::Value *ahead = k.linearIndex(operand.value->type.shape, operandIndex(operand));
        llvm::Type *element = k.memoryType(dtype);
        llvm::Value *base = b.CreateBitCast(k.buffer(operand.value), element->getPointerTo());
        b.CreateCall(prefetch,
                     {b.CreateBitCast(b.CreateGEP(element, base, ahead), b.getInt8PtrTy()),
                      b.getInt32(0), b.getInt32(2), b.getInt32(1)});
      }
      std::vector<llvm::Value *> rowsOfTile = transposeInRegisters(b, std::move(lines));
      for (int64_t r = 0; r < t; ++r) {
        llvm::Value *at = b.CreateAdd(
            b.CreateMul(b.CreateAdd(bufferRow, k.i64(r)), k.i64(bufferStride)), bufferColumn);
        llvm::Value *address =
            b.CreateBitCast(k.elementAddress(buffers[i], dtype, at), vectorType->getPointerTo());
        b.CreateAlignedStore(rowsOfTile[r], address, llvm::Align(std::min<int64_t>(64, t * bytes)));
      }
    }
  };

  // One block: `height` rows from row0 and `width` columns from column0,
  // both multiples of t. First every tile of the operands is transposed into
  // the buffers, a column of tiles at a time, so the t operand rows of a tile
  // column are read line after line (the hardware prefetchers follow that;
  // row by row, reading one line of each row, they did not: 10-20% slower),
  // in a loop of loads, shuffles and stores only, which keeps many of the
  // strided lines in flight. Then the block's rows are computed along the
  // row, reading the buffers as contiguously as the output and the straight
  // operands.
  auto emitBlock = [&](llvm::Value *row0, int64_t height, llvm::Value *column0, int64_t width) {
    emitRolledLoop(k, k.i64(width / t), [&](llvm::Value *tileColumn) {
      llvm::Value *bufferColumn = b.CreateMul(tileColumn, k.i64(t));
      llvm::Value *tileColumn0 = b.CreateAdd(column0, bufferColumn);
      emitRolledLoop(k, k.i64(height / t), [&](llvm::Value *tileRow) {
        llvm::Value *bufferRow = b.CreateMul(tileRow, k.i64(t));
        transposeTile(b.CreateAdd(row0, bufferRow), tileColumn0, bufferRow, bufferColumn);
      });
    });
    TileState state;
    TileState *outer = activeTiles;
    activeTiles = &state;
    try {
      k.emitLoop(k.i64(height), [&](llvm::Value *r) {
        llvm::Value *row = b.CreateAdd(row0, r);
        llvm::Value *bufferRow = b.CreateMul(r, k.i64(bufferStride));
        k.emitLoop(k.i64(width), [&](llvm::Value *c) {
          llvm::Value *column = b.CreateAdd(column0, c);
          index[rowDim] = row;
          index[last] = column;
          state.tiles.clear();
          for (size_t i = 0; i < tiled.size(); ++i)
            state.tiles[tiled[i].value] = Tile{buffers[i], operandIndex(tiled[i])};
          state.at = b.CreateAdd(bufferRow, c);
          emitElementAt(row, column);
        });
      });
    } catch (...) {
      activeTiles = outer;
      throw;
    }
    activeTiles = outer;
  };

  // Whole blocks, then one shorter block of the whole tiles left along each
  // dim: every block's size is a constant, so its loops have fixed trips.
  auto blockRuns = [](int64_t full, int64_t block) {
    std::vector<std::pair<int64_t, int64_t>> runs; // {count, size}
    if (full / block > 0)
      runs.push_back({full / block, block});
    if (full % block > 0)
      runs.push_back({1, full % block});
    return runs;
  };
  k.emitLoopNest(outerShape, [&](const std::vector<llvm::Value *> &outerIndex) {
    for (size_t j = 0; j < outerDims.size(); ++j)
      index[outerDims[j]] = outerIndex[j];
    int64_t rowStart = 0;
    for (const auto &rowRun : blockRuns(fullRows, blockRows)) {
      // Plain variables: lambdas may not capture structured bindings (C++17).
      const int64_t rowCount = rowRun.first, height = rowRun.second;
      k.emitLoop(k.i64(rowCount), [&](llvm::Value *rowBlock) {
        llvm::Value *row0 = b.CreateAdd(k.i64(rowStart), b.CreateMul(rowBlock, k.i64(height)));
        int64_t columnStart = 0;
        for (const auto &columnRun : blockRuns(fullColumns, blockColumns)) {
          const int64_t columnCount = columnRun.first, width = columnRun.second;
          k.emitLoop(k.i64(columnCount), [&](llvm::Value *columnBlock) {
            llvm::Value *column0 =
                b.CreateAdd(k.i64(columnStart), b.CreateMul(columnBlock, k.i64(width)));
            emitBlock(row0, height, column0, width);
          });
          columnStart += columnCount * width;
        }
        if (fullColumns < columns) // the columns past the last whole tile
          k.emitLoop(k.i64(height), [&](llvm::Value *r) {
            llvm::Value *row = b.CreateAdd(row0, r);
            k.emitLoop(k.i64(columns - fullColumns), [&](llvm::Value *c) {
              emitElementAt(row, b.CreateAdd(k.i64(fullColumns), c));
            });
          });
      });
      rowStart += rowCount * height;
    }
    if (fullRows < rows) // the rows past the last whole tile
      k.emitLoop(k.i64(rows - fullRows), [&](llvm::Value *r) {
        llvm::Value *row = b.CreateAdd(k.i64(fullRows), r);
        k.emitLoop(k.i64(columns), [&](llvm::Value *c) { emitElementAt(row, c); });
      });
  });
  for (auto [slot, bytes] : lifetimes)
    b.CreateLifetimeEnd(slot, b.getInt64(static_cast<uint64_t>(bytes)));
  return true;
}

} // namespace shardc::llvmgen::elemental
