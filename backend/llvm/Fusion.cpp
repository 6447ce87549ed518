// The fusion plan (Lowering.h): which values of a block live in memory.
// Every other value is computed inside the loop of its single consumer, so a
// chain of elementwise, shape and creation ops becomes one loop with no
// temporaries.
//
// Steps, in order:
//   1. Materialize what others must find in memory: block arguments,
//      returned values, operands and results of ops that are not elemental
//      (contractions, collectives other than all_slice, manual_computation,
//      sharding ops).
//      A value read inside a region of a control-flow op (for, while, if)
//      is materialized too: fused into a loop body it would be recomputed
//      every iteration, and the region's ops are planned as a block of
//      their own that reads it from memory.
//   2. Materialize values read by more than one use (they would otherwise be
//      computed once per use) and the results of reductions (each of their
//      elements is a loop). A value with no use is not computed at all.
//   3. Walking the ops in order, materialize an operand that its consumer
//      computes more than once per element (a broadcast, a smaller operand
//      of a numpy-broadcasting binary op, the operands of concat and pad:
//      readsRepeatedly) when recomputing it would repeat expensive work: a
//      transcendental function, a random value, a division, or a long
//      arithmetic chain. Reading a load or a few adds again is cheaper than
//      a round trip through memory, so those stay fused.
//   4. Row groups (RowFusion.cpp): a reduction over the last dim, and values
//      only the rows around it read, move back into the loop of the value
//      that reads them, computed once per row (softmax in one pass per row).
//
// Example: %s = reduce_sum %x {dims = [1]}; %e = exp %s;
//          %b = broadcast %e {dims = [0]}; %r = mul %a, %b
// %s is materialized (step 2); %b reads each element of %e 128 times, and %e
// computes an exp, so %e is materialized (step 3); %b and %r fuse into the
// loop that writes %r (returned, step 1).
#include "backend/llvm/Lowering.h"

#include <map>

namespace shardc::llvmgen {

namespace {

/// Ops whose element is costly enough that computing it more than once per
/// result element is worse than storing it.
bool isExpensiveOp(OpKind kind) {
  switch (kind) {
  case OpKind::Exp:
  case OpKind::Log:
  case OpKind::Tanh:
  case OpKind::Sigmoid:
  case OpKind::Sin:
  case OpKind::Cos:
  case OpKind::Erf:
  case OpKind::Pow:
  case OpKind::Sqrt:
  case OpKind::Rsqrt:
  case OpKind::Div:
  case OpKind::Reciprocal:
  case OpKind::RandomUniform:
  case OpKind::RandomNormal:
  case OpKind::ReduceSum:
  case OpKind::ReduceMax:
  case OpKind::ReduceMin:
  case OpKind::ReduceMean:
    return true;
  default:
    return false;
  }
}

/// A fused chain longer than this is recomputed only once per element.
constexpr int kCheapChainOps = 4;

/// True when `consumer` computes some element of `operand` more than once
/// per use: a broadcast, a binary op (or select) reading a smaller operand
/// at several positions, and concat and pad, which compute every candidate
/// operand at a clamped position and select (ElementalShape.cpp), so a
/// smaller operand is also computed for positions it does not supply.
bool readsRepeatedly(const Op &consumer, const Value &operand) {
  bool multiplies = consumer.kind == OpKind::Broadcast || consumer.kind == OpKind::Concat ||
                    consumer.kind == OpKind::Pad || opInfo(consumer.kind).group == OpGroup::Binary;
  return multiplies && operand.type.numElements() < consumer.result()->type.numElements();
}

class FusionPlanner {
public:
  explicit FusionPlanner(const Block &block) : block_(block) {}

  FusionPlan plan() {
    countUses();
    materializeRequired();
    materializeRecomputed();
    planRowGroups(block_, pinned_, plan_);
    return std::move(plan_);
  }

private:
  const Block &block_;
  FusionPlan plan_;
  std::map<const Value *, int> uses_;
  std::set<const Value *> defined_; // the block's arguments and op results
  std::set<const Value *> pinned_;  // step 1: in memory whatever their use

  void materialize(const Value *v) { plan_.materialized.insert(v); }
  void pin(const Value *v) {
    materialize(v);
    pinned_.insert(v);
  }

  /// Marks every value read inside `region` (its ops' operands and returned
  /// values, nested regions included) that this block defines.
  void materializeCaptured(const Block &region) {
    for (const auto &op : region.ops) {
      for (const Value *operand : op->operands)
        if (defined_.count(operand))
          pin(operand);
      for (const Block *nested : op->regions())
        materializeCaptured(*nested);
    }
    for (const Value *v : region.returned)
      if (defined_.count(v))
        pin(v);
  }

  void countUses() {
    for (const auto &arg : block_.args)
      defined_.insert(arg.get());
    for (const auto &op : block_.ops)
      for (const auto &result : op->results)
        defined_.insert(result.get());
    for (const auto &op : block_.ops)
      for (const Value *operand : op->operands)
        ++uses_[operand];
    for (const Value *v : block_.returned)
      ++uses_[v];
  }

  // Steps 1 and 2.
  void materializeRequired() {
    for (const auto &arg : block_.args)
      pin(arg.get());
    for (const Value *v : block_.returned)
      pin(v);
    for (const auto &op : block_.ops) {
      if (op->kind != OpKind::ManualComputation)
        for (const Block *region : op->regions())
          materializeCaptured(*region);
      bool elemental = isElementalOp(op->kind);
      for (const Value *operand : op->operands)
        if (!elemental || !defined_.count(operand) || !operand->definingOp ||
            !isElementalOp(operand->definingOp->kind))
          pin(operand); // (a value of an enclosing block is read from memory)
      for (const auto &result : op->results) {
        if (!elemental)
          pin(result.get());
        else if (opInfo(op->kind).group == OpGroup::Reduction || uses_[result.get()] > 1)
          materialize(result.get());
      }
    }
  }

  /// The work of computing one element of a fused `v`: the arithmetic ops
  /// of its tree down to the materialized leaves (shape ops only move
  /// indices); `expensive` when one of them is.
  int chainCost(const Value *v, bool &expensive) const {
    if (plan_.isMaterialized(v) || !v->definingOp)
      return 0;
    const Op &op = *v->definingOp;
    expensive = expensive || isExpensiveOp(op.kind);
    OpGroup group = opInfo(op.kind).group;
    int cost = group == OpGroup::Unary || group == OpGroup::Binary || group == OpGroup::Convert;
    for (const Value *operand : op.operands)
      cost += chainCost(operand, expensive);
    return cost;
  }

  // Step 3. Program order: when a consumer is looked at, the chains below
  // its operands are already final.
  void materializeRecomputed() {
    for (const auto &op : block_.ops) {
      if (!isElementalOp(op->kind))
        continue;
      for (const Value *operand : op->operands) {
        if (plan_.isMaterialized(operand) || !readsRepeatedly(*op, *operand))
          continue;
        bool expensive = false;
        int cost = chainCost(operand, expensive);
        if (expensive || cost > kCheapChainOps)
          materialize(operand);
      }
    }
  }
};

} // namespace

FusionPlan planFusion(const Block &block) {
  FusionPlan plan = FusionPlanner(block).plan();
  planGatherContractions(block, plan);
  return plan;
}

} // namespace shardc::llvmgen
