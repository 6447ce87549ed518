// The loop of a row group's root (FusionPlan::rowGroups, RowFusion.cpp): for
// each row (every dim of the root but the last), its members in program
// order, then the row's elements. A per-row member is one register (a
// reduction is its loop over the row), a whole-row member a loop filling a
// stack buffer one row long. Each pass runs along a contiguous row and
// vectorizes; the row it reads again is still in cache, so memory sees one
// read of the input and one write of the output.
//
// While the loop is emitted, elementOf finds the members here: a read at
// this row gets the register or the buffer; a read elsewhere (never planned,
// but possible through an index the walk did not follow) computes the
// member again from its op, which is slower but the same value.
#include "backend/llvm/ElementalInternal.h"

#include <map>

namespace shardc::llvmgen::elemental {
namespace {

/// The row being emitted: the index of each row dim and what its members
/// hold for it.
struct RowState {
  std::vector<llvm::Value *> row;
  std::map<const Value *, llvm::Value *> perRow;   // member -> its element
  std::map<const Value *, llvm::Value *> wholeRow; // member -> its row buffer (i8*)
};

/// The row group being emitted by this thread (code generation of one
/// function is single-threaded; functions may be emitted in parallel).
thread_local RowState *activeRow = nullptr;

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
  llvm::IRBuilder<> &b = k.builder;
  const Op &op = *root->definingOp;
  const std::vector<int64_t> &shape = root->type.shape;
  const std::vector<int64_t> rows(shape.begin(), shape.end() - 1);
  llvm::Value *out = k.buffer(root);

  // The row buffers, allocated once in the entry block and live only
  // during this loop (so successive groups' buffers can share the stack).
  llvm::Function *fn = b.GetInsertBlock()->getParent();
  llvm::IRBuilder<> entry(&fn->getEntryBlock(), fn->getEntryBlock().getFirstInsertionPt());
  std::map<const Value *, llvm::Value *> buffers;
  std::vector<std::pair<llvm::Value *, int64_t>> lifetimes;
  for (const FusionPlan::RowMember &m : members) {
    if (!m.wholeRow)
      continue;
    int64_t length = std::max<int64_t>(m.value->type.shape.back(), 1);
    llvm::Type *element = k.memoryType(m.value->type.dtype);
    auto *array = llvm::ArrayType::get(element, static_cast<uint64_t>(length));
    llvm::Value *slot = entry.CreateAlloca(array, nullptr, m.value->name + ".row");
    buffers[m.value] = b.CreateBitCast(slot, b.getInt8PtrTy());
    lifetimes.emplace_back(
        slot, static_cast<int64_t>(fn->getParent()->getDataLayout().getTypeAllocSize(array)));
  }
  for (const auto &[slot, bytes] : lifetimes)
    b.CreateLifetimeStart(slot, b.getInt64(static_cast<uint64_t>(bytes)));

  RowState state;
  RowState *outer = activeRow;
  activeRow = &state;
  try {
    k.emitLoopNest(rows, [&](const std::vector<llvm::Value *> &row) {
      state = RowState{row, {}, {}};
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
        k.emitLoop(k.i64(memberShape.back()), [&](llvm::Value *j) {
          std::vector<llvm::Value *> position = at;
          position.push_back(j);
          ElementIndex index(memberShape, position);
          k.store(buffer, m.value->type.dtype, j, computeElement(k, memberOp, index));
        });
        state.wholeRow[m.value] = buffer;
      }
      k.emitLoop(k.i64(shape.back()), [&](llvm::Value *j) {
        std::vector<llvm::Value *> position = row;
        position.push_back(j);
        ElementIndex index(shape, position);
        llvm::Value *element = computeElement(k, op, index);
        k.store(out, root->type.dtype, index.linear(k), element);
      });
    });
  } catch (...) {
    activeRow = outer;
    throw;
  }
  activeRow = outer;
  for (const auto &[slot, bytes] : lifetimes)
    b.CreateLifetimeEnd(slot, b.getInt64(static_cast<uint64_t>(bytes)));
}

} // namespace shardc::llvmgen::elemental
