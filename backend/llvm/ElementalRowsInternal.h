// Internals shared by the two files of the row group lowering:
// ElementalRows.cpp (member lookups, helpers, the passes of a row one after
// another) and ElementalRowPipeline.cpp (the passes pipelined over rows).
#pragma once

#include "backend/llvm/ElementalInternal.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace shardc::llvmgen::elemental::rows {

/// How far ahead of the row being computed its operands are prefetched, and
/// at most how much of a row: 4 KiB, 64 cache lines, is more than memory's
/// latency times the rate a row is computed at, and fewer lines than the
/// core can have in flight.
constexpr int64_t kPrefetchBytes = 4096;
constexpr int64_t kCacheLine = 64;

/// The row being emitted: the index of each row dim and what its members
/// hold for it.
struct RowState {
  std::vector<llvm::Value *> row;
  std::map<const Value *, llvm::Value *> perRow;   // member -> its element
  std::map<const Value *, llvm::Value *> wholeRow; // member -> its row buffer (i8*)
};

/// The row group being emitted by this thread (code generation of one
/// function is single-threaded; functions may be emitted in parallel).
extern thread_local RowState *activeRow;

/// Sets the active row for the emission of one row's work, restoring the
/// outer one (a group inside a group's operand tree) when done.
class ActiveRow {
public:
  explicit ActiveRow(RowState *state) : outer_(activeRow) { activeRow = state; }
  ~ActiveRow() { activeRow = outer_; }
  void set(RowState *state) { activeRow = state; }

private:
  RowState *outer_;
};

/// A row buffer or a ring of them, allocated in the entry block with its
/// lifetime marked around the group's loops.
class StackSlots {
public:
  explicit StackSlots(KernelLowering &k);

  /// A cache-line aligned array of `length` elements of `dtype` (i8*).
  llvm::Value *array(DType dtype, int64_t length, const std::string &name);
  void start(); // marks every array's lifetime begun, at the builder
  void end();   // and ended

private:
  KernelLowering &k_;
  llvm::BasicBlock *entry_;
  std::vector<std::pair<llvm::Value *, int64_t>> lifetimes_;
};

/// What a group's row loop prefetches, kPrefetchBytes ahead of the row being
/// computed: the values in memory it reads whole rows of (operands of shape
/// (row dims..., n) reached through the fused trees of the root and its
/// members), and the root's row it writes. Only rows of at least a cache
/// line count (shorter ones, such as the (row dims..., 1) a value read per
/// row has, are too short to matter). The written row is prefetched for
/// writing: every line a store misses is first read for ownership, and a
/// row's stores, with no prefetch, would wait for memory line after line
/// (softmax of 16x512x512 f32 on 2 ranks: 4.2-5.5 ms -> 2.6-2.9 ms).
class RowPrefetches {
public:
  /// Nothing to prefetch when the group has one row only.
  RowPrefetches(KernelLowering &k, const Value *root,
                const std::vector<FusionPlan::RowMember> &members,
                const std::vector<int64_t> &rows);

  /// Prefetches every row of them that is kPrefetchBytes past row
  /// `rowIndex` (a row-major index over the row dims).
  void emit(KernelLowering &k, llvm::Value *rowIndex) const;
  bool empty() const { return read_.empty() && !written_; }

private:
  std::vector<const Value *> read_;
  const Value *written_ = nullptr;
};

/// Emits the group with its passes pipelined over rows
/// (ElementalRowPipeline.cpp); false, emitting nothing, when they run over
/// rows of different lengths (or there is one stage only, never planned).
bool emitRowPipeline(KernelLowering &k, const Value *root,
                     const std::vector<FusionPlan::RowMember> &members);

} // namespace shardc::llvmgen::elemental::rows
