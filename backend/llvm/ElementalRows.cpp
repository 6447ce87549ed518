// The loop of a row group's root (FusionPlan::rowGroups, RowFusion.cpp):
// softmax, layer norm and the like, reading each row from memory once. A
// per-row member (a reduction over the row, a value computed from them) is
// one register per row; a whole-row member (a value read more than once,
// such as softmax's exp) a stack buffer one row long. The passes over a row
// run pipelined over rows (ElementalRowPipeline.cpp); a group whose passes
// run over rows of different lengths (a sum over rows of 16 dividing rows
// of 5) cannot share one loop, and its passes run one after another for
// each row instead (emitRowByRow, here).
//
// Every row starts by prefetching, of every operand the group reads whole
// rows of from memory, the row kPrefetchBytes ahead (the first
// kPrefetchBytes of it when rows are longer): the passes after a row's
// first compute from cache, during which the hardware prefetchers, seeing
// no misses, stop fetching, and the next row's first pass would wait for
// memory. For the same reason the root's row that far ahead is prefetched
// for writing (RowPrefetches).
//
// While the loop is emitted, elementOf finds the members here: a read at
// the row being emitted gets the register or the buffer; a read elsewhere
// (never planned, but possible through an index the walk did not follow)
// computes the member again from its op, which is slower but the same
// value.
#include "backend/llvm/ElementalRowsInternal.h"

#include <llvm/IR/Intrinsics.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace shardc::llvmgen::elemental {
namespace rows {

thread_local RowState *activeRow = nullptr;

namespace {

/// True when `index` (into `v`) is on the active row: every row dim equal,
/// except dims of size 1, where any index is 0.
bool onActiveRow(KernelLowering &k, const Value *v, ElementIndex &index) {
  const std::vector<int64_t> &shape = v->type.shape;
  if (shape.size() < activeRow->row.size())
    return false;
  const std::vector<llvm::Value *> &dims = index.dims(k);
  for (size_t d = 0; d < activeRow->row.size(); ++d)
    if (shape[d] != 1 && dims[d] != activeRow->row[d])
      return false;
  return true;
}

/// Whether `v` has whole rows over `rows` (shape (row dims..., n)) of at
/// least a cache line.
bool hasLongRows(const Value *v, const std::vector<int64_t> &rows) {
  const std::vector<int64_t> &shape = v->type.shape;
  int64_t rowBytes = shape.empty() ? 0 : shape.back() * int64_t(dtypeBytes(v->type.dtype));
  return shape.size() == rows.size() + 1 && std::equal(rows.begin(), rows.end(), shape.begin()) &&
         rowBytes >= kCacheLine;
}

/// Prefetches (into every cache level, for reading or for writing) the row
/// of `v` that is kPrefetchBytes past row `rowIndex`. Past the last row the
/// addresses leave the buffer, which a prefetch ignores (it never faults),
/// and the arithmetic is not inbounds.
void prefetchAhead(KernelLowering &k, const Value *v, llvm::Value *rowIndex, bool forWrite) {
  llvm::IRBuilder<> &b = k.builder;
  int64_t rowBytes = v->type.shape.back() * static_cast<int64_t>(dtypeBytes(v->type.dtype));
  int64_t rowsAhead = std::max<int64_t>(1, (kPrefetchBytes + rowBytes - 1) / rowBytes);
  int64_t bytes = std::min(rowBytes, kPrefetchBytes);
  llvm::Function *prefetch =
      llvm::Intrinsic::getDeclaration(&k.module, llvm::Intrinsic::prefetch, {b.getInt8PtrTy()});
  llvm::Value *base = b.CreateBitCast(k.buffer(v), b.getInt8PtrTy());
  llvm::Value *start = b.CreateMul(b.CreateAdd(rowIndex, k.i64(rowsAhead)), k.i64(rowBytes));
  for (int64_t offset = 0; offset < bytes; offset += kCacheLine) {
    llvm::Value *address = b.CreateGEP(b.getInt8Ty(), base, b.CreateAdd(start, k.i64(offset)));
    // (address, 0: read or 1: write, locality 3: keep in all levels, data cache)
    b.CreateCall(prefetch, {address, b.getInt32(forWrite ? 1 : 0), b.getInt32(3), b.getInt32(1)});
  }
}

} // namespace

RowPrefetches::RowPrefetches(KernelLowering &k, const Value *root,
                             const std::vector<FusionPlan::RowMember> &members,
                             const std::vector<int64_t> &rows) {
  int64_t rowCount = 1;
  for (int64_t d : rows)
    rowCount *= d;
  if (rowCount <= 1)
    return;
  std::set<const Value *> memberValues, seen;
  for (const FusionPlan::RowMember &m : members)
    memberValues.insert(m.value);
  std::function<void(const Op &)> visit = [&](const Op &op) {
    for (const Value *operand : op.operands) {
      if (!seen.insert(operand).second || memberValues.count(operand))
        continue; // a member's own tree is visited from it
      if (!k.fusion().isMaterialized(operand) && operand->definingOp) {
        visit(*operand->definingOp);
        continue;
      }
      if (hasLongRows(operand, rows))
        read_.push_back(operand);
    }
  };
  visit(*root->definingOp);
  for (const FusionPlan::RowMember &m : members)
    visit(*m.value->definingOp);
  if (hasLongRows(root, rows))
    written_ = root;
}

void RowPrefetches::emit(KernelLowering &k, llvm::Value *rowIndex) const {
  for (const Value *v : read_)
    prefetchAhead(k, v, rowIndex, false);
  if (written_)
    prefetchAhead(k, written_, rowIndex, true);
}

StackSlots::StackSlots(KernelLowering &k) : k_(k) {
  llvm::Function *fn = k.builder.GetInsertBlock()->getParent();
  entry_ = &fn->getEntryBlock();
}

llvm::Value *StackSlots::array(DType dtype, int64_t length, const std::string &name) {
  llvm::IRBuilder<> entry(entry_, entry_->getFirstInsertionPt());
  auto *type = llvm::ArrayType::get(k_.memoryType(dtype),
                                    static_cast<uint64_t>(std::max<int64_t>(length, 1)));
  llvm::AllocaInst *slot = entry.CreateAlloca(type, nullptr, name);
  // Cache-line aligned: every vector of a pass then stays within a line.
  // At the stack's own alignment (16 bytes) each 64-byte access of the
  // passes that store and reload the row split across two lines, and
  // softmax took 0.85 or 1.1-1.5 ms depending on where the stack began.
  slot->setAlignment(llvm::Align(kCacheLine));
  llvm::TypeSize bytes = entry_->getModule()->getDataLayout().getTypeAllocSize(type);
  lifetimes_.emplace_back(slot, static_cast<int64_t>(bytes.getFixedSize()));
  return k_.builder.CreateBitCast(slot, k_.builder.getInt8PtrTy());
}

void StackSlots::start() {
  for (const auto &[slot, bytes] : lifetimes_)
    k_.builder.CreateLifetimeStart(slot, k_.builder.getInt64(static_cast<uint64_t>(bytes)));
}

void StackSlots::end() {
  for (const auto &[slot, bytes] : lifetimes_)
    k_.builder.CreateLifetimeEnd(slot, k_.builder.getInt64(static_cast<uint64_t>(bytes)));
}

} // namespace rows

namespace {

using namespace rows;

/// The group with each row's passes in sequence: used when the passes run
/// over rows of different lengths, which one loop cannot interleave.
void emitRowByRow(KernelLowering &k, const Value *root,
                  const std::vector<FusionPlan::RowMember> &members) {
  const Op &op = *root->definingOp;
  const std::vector<int64_t> &shape = root->type.shape;
  const std::vector<int64_t> rows(shape.begin(), shape.end() - 1);
  llvm::Value *out = k.buffer(root);

  StackSlots stack(k);
  std::map<const Value *, llvm::Value *> buffers;
  for (const FusionPlan::RowMember &m : members)
    if (m.wholeRow)
      buffers[m.value] =
          stack.array(m.value->type.dtype, m.value->type.shape.back(), m.value->name + ".row");
  stack.start();

  const RowPrefetches prefetches(k, root, members, rows);
  RowState state;
  ActiveRow active(&state);
  k.emitLoopNest(rows, [&](const std::vector<llvm::Value *> &row) {
    state = RowState{row, {}, {}};
    if (!prefetches.empty())
      prefetches.emit(k, k.linearIndex(rows, row));
    for (const FusionPlan::RowMember &m : members) {
      const std::vector<int64_t> &memberShape = m.value->type.shape;
      const Op &memberOp = *m.value->definingOp;
      std::vector<llvm::Value *> at = row;
      if (!m.wholeRow) {
        if (memberShape.size() > row.size())
          at.push_back(k.i64(0)); // (row dims..., 1)
        ElementIndex index(memberShape, at);
        state.perRow[m.value] = computeElement(k, memberOp, index);
        continue;
      }
      llvm::Value *buffer = buffers.at(m.value);
      k.emitLoop(
          k.i64(memberShape.back()),
          [&](llvm::Value *j) {
            std::vector<llvm::Value *> position = at;
            position.push_back(j);
            ElementIndex index(memberShape, position);
            k.store(buffer, m.value->type.dtype, j, computeElement(k, memberOp, index));
          },
          /*versionable=*/true);
      state.wholeRow[m.value] = buffer;
    }
    k.emitLoop(
        k.i64(shape.back()),
        [&](llvm::Value *j) {
          std::vector<llvm::Value *> position = row;
          position.push_back(j);
          ElementIndex index(shape, position);
          llvm::Value *element = computeElement(k, op, index);
          k.store(out, root->type.dtype, index.linear(k), element);
        },
        /*versionable=*/true);
  });
  stack.end();
}

} // namespace

llvm::Value *rowMemberElement(KernelLowering &k, const Value *v, ElementIndex &index) {
  if (!activeRow)
    return nullptr;
  auto perRow = activeRow->perRow.find(v);
  if (perRow != activeRow->perRow.end())
    return onActiveRow(k, v, index) ? perRow->second : nullptr;
  auto wholeRow = activeRow->wholeRow.find(v);
  if (wholeRow != activeRow->wholeRow.end() && onActiveRow(k, v, index))
    return k.load(wholeRow->second, v->type.dtype, index.dims(k).back());
  return nullptr;
}

void emitRowGroup(KernelLowering &k, const Value *root,
                  const std::vector<FusionPlan::RowMember> &members) {
  if (!emitRowPipeline(k, root, members))
    emitRowByRow(k, root, members);
}

} // namespace shardc::llvmgen::elemental
