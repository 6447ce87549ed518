// Row groups, the last step of the fusion plan (Fusion.cpp): softmax, layer
// norm and the like in one pass over memory per row, as XLA and Triton fuse
// them. Without them softmax's reductions and its twice-read exp are
// materialized, and the tensor makes four trips through memory.
//
// A group has a root: a materialized elemental value of rank >= 1, whose
// loop then runs over its rows (every dim but the last). Walking the root's
// fused tree from the root, a value is reached at one of two roles:
//   whole row  its shape is (the root's row dims..., n) and it is read at
//              (row, j) for every j of its own last dim n;
//   per row    its shape is the row dims (or those and a 1) and it is read
//              at (row) alone.
// The walk passes through elementwise ops (an operand of the result's shape
// keeps the role; a whole-row op's operand of shape (row dims..., 1) is read
// per row), broadcasts that add the last dim to the row dims (per row
// below), and per-row reductions over exactly the last dim of a whole-row
// operand (whole row below). Any other operand is a leaf, read as usual.
//
// Every value the walk reaches that earlier steps materialized (a
// reduction, a value read twice, an expensive value read repeatedly), and
// whose uses are all edges of the walk, becomes a member: computed once per
// row, before the row's elements (ElementalRows.cpp), and no longer stored.
// A value with a use outside the walk stays in memory, and the walk is
// redone with it as a leaf. A group needs at least one reduction, and a
// whole-row member or reduced row of at most kMaxRowElements, so that the
// row is still in cache when the next pass over it reads it again.
#include "backend/llvm/Lowering.h"

#include <map>

namespace shardc::llvmgen {
namespace {

/// The longest row a group reads more than once: 8192 elements (32 KiB of
/// f32, 64 KiB of f64) stay in the first or second level cache.
constexpr int64_t kMaxRowElements = 8192;

enum class Role { WholeRow, PerRow };

class RowGroupPlanner {
public:
  RowGroupPlanner(const Block &block, const std::set<const Value *> &pinned, FusionPlan &plan)
      : block_(block), pinned_(pinned), plan_(plan) {
    for (const auto &op : block.ops)
      for (const Value *operand : op->operands)
        ++uses_[operand];
    for (const Value *v : block.returned)
      ++uses_[v];
  }

  void plan() {
    // Consumers first: a group takes in materialized values before they
    // could become roots of groups of their own.
    for (auto op = block_.ops.rbegin(); op != block_.ops.rend(); ++op) {
      if (!isElementalOp((*op)->kind) || opInfo((*op)->kind).group == OpGroup::Reduction)
        continue;
      for (const auto &result : (*op)->results)
        if (plan_.isMaterialized(result.get()) && result->type.rank() >= 1)
          formGroup(*result);
    }
  }

private:
  const Block &block_;
  const std::set<const Value *> &pinned_;
  FusionPlan &plan_;
  std::map<const Value *, int> uses_;

  // The state of one walk from a root.
  std::vector<int64_t> rowDims_;
  std::set<const Value *> leaves_; // candidates found to have uses elsewhere
  std::map<const Value *, Role> roles_;
  std::map<const Value *, int> reached_; // use edges of the walk, per value
  bool valid_ = true;
  bool reduces_ = false;

  bool isCandidate(const Value *v) const {
    return plan_.isMaterialized(v) && !pinned_.count(v) && v->definingOp &&
           isElementalOp(v->definingOp->kind) && !leaves_.count(v);
  }

  bool hasRole(const TensorType &type, Role role) const {
    const std::vector<int64_t> &shape = type.shape;
    size_t rows = rowDims_.size();
    if (shape.size() < rows || !std::equal(rowDims_.begin(), rowDims_.end(), shape.begin()))
      return false;
    if (role == Role::WholeRow)
      return shape.size() == rows + 1;
    return shape.size() == rows || (shape.size() == rows + 1 && shape[rows] == 1);
  }

  /// True for a reduce_* over exactly the last dim of a row-shaped operand
  /// short enough to be read twice from cache.
  bool reducesRow(const Op &op) const {
    if (opInfo(op.kind).group != OpGroup::Reduction)
      return false;
    const TensorType &x = op.operands[0]->type;
    std::optional<std::vector<int64_t>> dims = op.get(attrs::dims);
    return dims && x.rank() == rowDims_.size() + 1 &&
           *dims == std::vector<int64_t>{static_cast<int64_t>(x.rank()) - 1} &&
           hasRole(x, Role::WholeRow) && x.shape.back() <= kMaxRowElements;
  }

  void visitValue(const Value *v, Role role) {
    if (!v->definingOp || (plan_.isMaterialized(v) && !isCandidate(v)))
      return; // read from memory
    const Op &op = *v->definingOp;
    bool reduction = opInfo(op.kind).group == OpGroup::Reduction;
    if (plan_.isMaterialized(v)) {
      // A candidate: it becomes a member only if the group can compute it.
      if (reduction ? role != Role::PerRow || !reducesRow(op)
                    : role == Role::WholeRow && v->type.shape.back() > kMaxRowElements)
        return;
    }
    ++reached_[v];
    auto known = roles_.find(v);
    if (known != roles_.end()) {
      valid_ = valid_ && known->second == role;
      return; // its tree is walked once: the group computes it once
    }
    roles_[v] = role;
    if (!hasRole(v->type, role)) {
      valid_ = false;
      return;
    }
    if (reduction) {
      if (role == Role::PerRow && reducesRow(op)) {
        reduces_ = true;
        visitValue(op.operands[0], Role::WholeRow);
      }
      return; // a fused reduction is never reached: step 2 materializes them
    }
    visitOperands(op, role);
  }

  void visitOperands(const Op &op, Role role) {
    const TensorType &result = op.result()->type;
    OpGroup group = opInfo(op.kind).group;
    if (group == OpGroup::Unary || group == OpGroup::Binary || group == OpGroup::Convert) {
      for (const Value *operand : op.operands) {
        // (A row of length 1 is read per row: its one element is the row's.)
        if (role == Role::WholeRow && operand->type.rank() == result.rank() &&
            hasRole(operand->type, Role::PerRow))
          visitValue(operand, Role::PerRow);
        else if (operand->type.shape == result.shape)
          visitValue(operand, role);
      }
      return;
    }
    if (op.kind == OpKind::Broadcast && role == Role::WholeRow) {
      const Value *x = op.operands[0];
      std::optional<std::vector<int64_t>> dims = op.get(attrs::dims);
      std::vector<int64_t> identity(x->type.rank());
      for (size_t d = 0; d < identity.size(); ++d)
        identity[d] = static_cast<int64_t>(d);
      if (dims && *dims == identity && hasRole(x->type, Role::PerRow))
        visitValue(x, Role::PerRow);
    }
  }

  /// One walk from `root`; true when it found a group.
  bool walk(const Value &root) {
    roles_.clear();
    reached_.clear();
    valid_ = true;
    reduces_ = false;
    visitOperands(*root.definingOp, Role::WholeRow);
    return valid_ && reduces_;
  }

  void formGroup(const Value &root) {
    rowDims_.assign(root.type.shape.begin(), root.type.shape.end() - 1);
    leaves_.clear();
    for (;;) {
      if (!walk(root))
        return;
      bool changed = false;
      for (const auto &[v, count] : reached_)
        if (plan_.isMaterialized(v) && count != uses_[v] && leaves_.insert(v).second)
          changed = true;
      if (!changed)
        break;
    }
    std::vector<FusionPlan::RowMember> members;
    for (const auto &op : block_.ops)
      for (const auto &result : op->results)
        if (plan_.isMaterialized(result.get()) && roles_.count(result.get()))
          members.push_back({result.get(), roles_.at(result.get()) == Role::WholeRow});
    for (const FusionPlan::RowMember &m : members)
      plan_.materialized.erase(m.value);
    plan_.rowGroups[&root] = std::move(members);
  }
};

} // namespace

void planRowGroups(const Block &block, const std::set<const Value *> &pinned, FusionPlan &plan) {
  RowGroupPlanner(block, pinned, plan).plan();
}

} // namespace shardc::llvmgen
