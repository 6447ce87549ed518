// A row group's passes (the max, then the exp and its sum, then the
// division, for softmax) software-pipelined over rows, as a hand-written
// kernel would have them (ElementalRows.cpp has the group's member lookups):
// the group's members are put in stages, a member after every reduction it
// reads (the reduction's pass must finish before its result is known), and
// super-iteration t runs stage s on row t - s, all stages in ONE loop along
// the row. Each pass alone is bound by one kind of unit: the max by the
// adders and the loads, the exp by the multiply-adders, the division by the
// stores; run one after another they add up (a softmax row of 512 f32: ~16
// cycles per 16 elements on the bench machine, Zen 4), interleaved they
// overlap (~11, the exp's own cost). The first stages - 1 and the last
// stages - 1 super-iterations fill and drain the pipeline on constant rows;
// the loop between runs every stage.
//
// A whole-row member (a value read more than once, such as softmax's exp)
// is kept in a stack buffer per row in flight, a ring the stage that writes
// it and the stages that read it index by row; a per-row member (a
// reduction, a value computed from them) in an array with an element per
// row in flight. Reductions accumulate in stack slots that LLVM turns into
// the loop's registers (RowAccumulator), with the numerics of
// emitReductionElement (f32 sums in f32 chunks of 256).
//
// Measured (bench `softmax`, 16x512x512 f32 on 2 ranks): 0.55-0.68 ms with
// the passes in sequence, 0.42-0.52 ms pipelined (0.77-0.82x the triad).
#include "backend/llvm/ElementalRowsInternal.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>

namespace shardc::llvmgen::elemental::rows {
namespace {

/// The members a value's computation reads: its fused tree, down to members
/// (a reduction member's tree is its operand's).
std::set<const Value *> membersRead(KernelLowering &k, const Value *v,
                                    const std::set<const Value *> &members) {
  std::set<const Value *> found, seen;
  std::function<void(const Op &)> visit = [&](const Op &op) {
    for (const Value *operand : op.operands) {
      if (!seen.insert(operand).second)
        continue;
      if (members.count(operand))
        found.insert(operand);
      else if (!k.fusion().isMaterialized(operand) && operand->definingOp)
        visit(*operand->definingOp);
    }
  };
  visit(*v->definingOp);
  return found;
}

bool isReduction(const Value *v) { return opInfo(v->definingOp->kind).group == OpGroup::Reduction; }

/// The row length a member's (or the root's) loop runs over: a whole-row
/// member's or the root's last dim, a reduction's operand's; 0 for a
/// per-row member computed once per row.
int64_t passLength(const Value *v, bool wholeRow) {
  if (isReduction(v))
    return v->definingOp->operands[0]->type.shape.back();
  return wholeRow ? v->type.shape.back() : 0;
}

/// The group with its passes software-pipelined over rows (the header
/// comment): super-iteration t runs stage s on row t - s, all stages in one
/// loop along the row.
class RowPipeline {
public:
  RowPipeline(KernelLowering &k, const Value *root,
              const std::vector<FusionPlan::RowMember> &members, int64_t length)
      : k_(k), b_(k.builder), root_(root), members_(members), length_(length),
        rows_(root->type.shape.begin(), root->type.shape.end() - 1) {
    rowCount_ = 1;
    for (int64_t d : rows_)
      rowCount_ *= d;
  }

  /// Assigns the stages; false when the group has one stage only (nothing
  /// to pipeline).
  bool schedule() {
    std::set<const Value *> all;
    for (const FusionPlan::RowMember &m : members_)
      all.insert(m.value);
    std::map<const Value *, int> lastReader; // the last stage reading each member
    auto stageOf = [&](const Value *v) {
      std::set<const Value *> reads = membersRead(k_, v, all);
      int stage = 0;
      for (const Value *read : reads)
        stage = std::max(stage, ready(read));
      for (const Value *read : reads)
        lastReader[read] = std::max(lastReader[read], stage);
      return stage;
    };
    for (const FusionPlan::RowMember &m : members_)
      stage_[m.value] = stageOf(m.value);
    stage_[root_] = stageOf(root_);
    stages_ = stage_[root_] + 1;
    // Rows in flight: from the stage that computes a member (a reduction:
    // the one after, when its pass has ended) to the last stage reading it.
    for (const FusionPlan::RowMember &m : members_) {
      depth_[m.value] = std::max(1, lastReader[m.value] - ready(m.value) + 1);
    }
    return stages_ > 1;
  }

  void emit() {
    if (rowCount_ == 0)
      return;
    StackSlots stack(k_);
    for (const FusionPlan::RowMember &m : members_) {
      int depth = depth_.at(m.value);
      if (m.wholeRow) {
        for (int slot = 0; slot < depth; ++slot)
          rings_[m.value].push_back(stack.array(m.value->type.dtype, length_,
                                                m.value->name + ".row" + std::to_string(slot)));
      } else {
        rings_[m.value].push_back(stack.array(m.value->type.dtype, depth, m.value->name + ".rows"));
        if (isReduction(m.value))
          accumulators_.emplace(
              m.value, std::make_unique<RowAccumulator>(k_, *m.value->definingOp, length_));
      }
    }
    stack.start();
    prefetches_.emplace(k_, root_, members_, rows_);

    // Rows 0 .. stages - 2 fill the pipeline and the last stages - 1 drain
    // it, with constant rows; the loop between runs every stage.
    const int64_t last = rowCount_ + stages_ - 1; // super-iterations
    const int64_t steadyBegin = stages_ - 1, steadyEnd = rowCount_;
    auto constantIteration = [&](int64_t t) {
      superIteration(k_.i64(t), std::max<int64_t>(0, t - rowCount_ + 1),
                     std::min<int64_t>(stages_ - 1, t));
    };
    if (steadyEnd > steadyBegin) {
      for (int64_t t = 0; t < steadyBegin; ++t)
        constantIteration(t);
      k_.emitLoop(k_.i64(steadyEnd - steadyBegin), [&](llvm::Value *i) {
        superIteration(b_.CreateAdd(i, k_.i64(steadyBegin), "t", true, true), 0, stages_ - 1);
      });
      for (int64_t t = steadyEnd; t < last; ++t)
        constantIteration(t);
    } else {
      for (int64_t t = 0; t < last; ++t)
        constantIteration(t);
    }
    stack.end();
  }

private:
  KernelLowering &k_;
  llvm::IRBuilder<> &b_;
  const Value *root_;
  const std::vector<FusionPlan::RowMember> &members_;
  int64_t length_;
  std::vector<int64_t> rows_;
  int64_t rowCount_;
  int stages_ = 1;
  std::map<const Value *, int> stage_;
  std::map<const Value *, int> depth_; // rows in flight
  /// Whole-row members: one row buffer per row in flight; per-row members:
  /// one array with an element per row in flight. Row r uses slot r % depth.
  std::map<const Value *, std::vector<llvm::Value *>> rings_;
  std::map<const Value *, std::unique_ptr<RowAccumulator>> accumulators_;
  std::optional<RowPrefetches> prefetches_; // made in emit()

  /// The ring slot of row `t - stage` among `depth`. A depth of 2 picks by
  /// the parity of t for every stage, so that the buffer one stage writes
  /// and the one a later stage reads are a select on the same condition
  /// with the arms swapped, which alias analysis sees as distinct (the loop
  /// then vectorizes without run-time overlap checks).
  llvm::Value *ringSlot(const std::vector<llvm::Value *> &ring, llvm::Value *t, int64_t stage) {
    int64_t depth = static_cast<int64_t>(ring.size());
    if (depth == 1)
      return ring[0];
    llvm::Value *row = b_.CreateSub(t, k_.i64(stage));
    if (depth == 2) {
      llvm::Value *odd = b_.CreateTrunc(t, b_.getInt1Ty());
      return stage % 2 == 0 ? b_.CreateSelect(odd, ring[1], ring[0])
                            : b_.CreateSelect(odd, ring[0], ring[1]);
    }
    llvm::Value *slot = b_.CreateURem(row, k_.i64(depth));
    llvm::Value *chosen = ring[0];
    for (int64_t i = 1; i < depth; ++i)
      chosen = b_.CreateSelect(b_.CreateICmpEQ(slot, k_.i64(i)), ring[i], chosen);
    return chosen;
  }

  /// The first stage that can read member `v` of a row: its own, or for a
  /// reduction the one after (when its pass over the row has ended).
  int ready(const Value *v) const { return stage_.at(v) + (isReduction(v) ? 1 : 0); }

  /// The index of row `t - stage`'s element in per-row member `m`'s array.
  llvm::Value *perRowSlot(const Value *m, llvm::Value *t, int64_t stage) {
    int64_t depth = depth_.at(m);
    return depth == 1 ? k_.i64(0) : b_.CreateURem(b_.CreateSub(t, k_.i64(stage)), k_.i64(depth));
  }

  /// One super-iteration: stages lo..hi, on rows t - lo .. t - hi.
  void superIteration(llvm::Value *t, int64_t lo, int64_t hi) {
    std::vector<RowState> states(static_cast<size_t>(stages_));
    for (int64_t s = lo; s <= hi; ++s) {
      llvm::Value *row = b_.CreateSub(t, k_.i64(s));
      states[s].row = ElementIndex::fromLinear(rows_, row).dims(k_);
    }
    if (lo == 0)
      prefetches_->emit(k_, t);
    ActiveRow active(nullptr);
    // What each stage's row reads from earlier super-iterations.
    for (int64_t s = lo; s <= hi; ++s)
      for (const FusionPlan::RowMember &m : members_) {
        if (m.wholeRow && stage_.at(m.value) <= s)
          states[s].wholeRow[m.value] = ringSlot(rings_.at(m.value), t, s);
        else if (!m.wholeRow && ready(m.value) <= s)
          states[s].perRow[m.value] =
              k_.load(rings_.at(m.value)[0], m.value->type.dtype, perRowSlot(m.value, t, s));
      }
    // Per-row members computed from those, before the loop.
    for (int64_t s = lo; s <= hi; ++s) {
      active.set(&states[s]);
      for (const FusionPlan::RowMember &m : members_) {
        if (m.wholeRow || isReduction(m.value) || stage_.at(m.value) != s)
          continue;
        std::vector<llvm::Value *> at = states[s].row;
        if (m.value->type.shape.size() > at.size())
          at.push_back(k_.i64(0)); // (row dims..., 1)
        ElementIndex index(m.value->type.shape, at);
        llvm::Value *element = computeElement(k_, *m.value->definingOp, index);
        states[s].perRow[m.value] = element;
        k_.store(rings_.at(m.value)[0], m.value->type.dtype, perRowSlot(m.value, t, s), element);
      }
    }
    // The reductions of these stages, in program order (emitted IR is the
    // same from run to run).
    std::vector<std::pair<const Value *, RowAccumulator *>> accumulating;
    for (const FusionPlan::RowMember &m : members_) {
      auto found = accumulators_.find(m.value);
      int s = stage_.at(m.value);
      if (found != accumulators_.end() && s >= lo && s <= hi)
        accumulating.emplace_back(m.value, found->second.get());
    }
    bool chunked = false;
    for (auto &[m, accumulator] : accumulating) {
      accumulator->reset();
      chunked = chunked || accumulator->chunked();
    }

    auto body = [&](llvm::Value *j) {
      for (int64_t s = lo; s <= hi; ++s) {
        active.set(&states[s]);
        for (const FusionPlan::RowMember &m : members_) {
          if (stage_.at(m.value) != s || !(m.wholeRow || isReduction(m.value)))
            continue;
          const Value *source = m.wholeRow ? m.value : m.value->definingOp->operands[0];
          std::vector<llvm::Value *> position = states[s].row;
          position.push_back(j);
          ElementIndex index(source->type.shape, position);
          if (!m.wholeRow) {
            accumulators_.at(m.value)->add(elementOf(k_, source, index));
            continue;
          }
          k_.store(states[s].wholeRow.at(m.value), m.value->type.dtype, j,
                   computeElement(k_, *m.value->definingOp, index));
        }
        if (s == stages_ - 1) {
          std::vector<llvm::Value *> position = states[s].row;
          position.push_back(j);
          ElementIndex index(root_->type.shape, position);
          llvm::Value *element = computeElement(k_, *root_->definingOp, index);
          k_.store(k_.buffer(root_), root_->type.dtype, index.linear(k_), element);
        }
      }
    };
    auto endChunk = [&] {
      for (auto &[m, accumulator] : accumulating)
        accumulator->endChunk();
    };
    if (!chunked) {
      k_.emitLoop(k_.i64(length_), body, /*versionable=*/true);
    } else {
      const int64_t chunk = RowAccumulator::chunkLength();
      const int64_t whole = length_ / chunk, rest = length_ % chunk;
      if (whole > 0)
        k_.emitLoop(k_.i64(whole), [&](llvm::Value *c) {
          llvm::Value *base = b_.CreateMul(c, k_.i64(chunk), "", true, true);
          k_.emitLoop(
              k_.i64(chunk), [&](llvm::Value *i) { body(b_.CreateAdd(base, i, "", true, true)); },
              /*versionable=*/true);
          endChunk();
        });
      if (rest > 0) {
        k_.emitLoop(
            k_.i64(rest),
            [&](llvm::Value *i) { body(b_.CreateAdd(k_.i64(whole * chunk), i, "", true, true)); },
            /*versionable=*/true);
        endChunk();
      }
    }
    // The rows' reductions, for the stages after.
    for (auto &[m, accumulator] : accumulating)
      k_.store(rings_.at(m)[0], m->type.dtype, perRowSlot(m, t, stage_.at(m)),
               accumulator->result());
  }
};

} // namespace

bool emitRowPipeline(KernelLowering &k, const Value *root,
                     const std::vector<FusionPlan::RowMember> &members) {
  // One loop along the row runs every pass when they all have the root's
  // row length.
  int64_t length = root->type.shape.back();
  if (length <= 0)
    return false;
  for (const FusionPlan::RowMember &m : members) {
    int64_t pass = passLength(m.value, m.wholeRow);
    if (pass != 0 && pass != length)
      return false;
  }
  RowPipeline pipeline(k, root, members, length);
  if (!pipeline.schedule())
    return false;
  pipeline.emit();
  return true;
}

} // namespace shardc::llvmgen::elemental::rows
