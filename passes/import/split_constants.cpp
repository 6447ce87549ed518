// The import stage's constant splitting (Import.h), as Shardy's
// sdy-constant-or-scalar-splitter does it: a pre-order walk of each function
// keeps the set of ops that compute constant expressions (and of broadcasts
// of rank-0 values); an op outside that set, or a block's return, gets for
// each such operand a fresh copy of the expression computing it. Shardy's
// own tests, translated, are tests/lit/propagation/shardy_constant_splitter.shd:
//
//   %c = constant dense<1.5> : tensor<8x8xf32>       %c = constant ...
//   %p = add %a, %c                            ->    %c.1 = constant ...
//   %q = add %b, %c                                  %p = add %a, %c
//                                                    %q = add %b, %c.1
//
// Copies go right before the op they copy, so the block stays in definition
// order; they are inserted when the walk is done, and the copied originals
// that no longer have a use are retired (Module::retiredOps) in reverse
// order, each one's operands losing a use as it goes. (Shardy also drops a
// constant nothing reads; shardc keeps what is written and never read, such
// as a top-level snippet's values.)
#include "passes/import/Import.h"

#include "ir/Clone.h"
#include "ir/Ops.h"

#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace shardc {
namespace {

/// An op whose result is a constant expression when all its operands are.
bool preservesConstants(OpKind kind) {
  if (kind == OpKind::Broadcast || kind == OpKind::Reshape || kind == OpKind::Slice)
    return true;
  OpGroup group = opInfo(kind).group;
  return group == OpGroup::Unary || group == OpGroup::Binary || group == OpGroup::Convert;
}

class Splitter {
public:
  Splitter(Module &module, Function &function) : module_(module), function_(function) {}

  void run() {
    visitBlock(function_.body);
    if (copiesBefore_.empty())
      return; // no constant expression with more than one reader
    countUses(function_.body);
    retireUnused();
    rebuild(function_.body);
    nameCopies();
  }

private:
  Module &module_;
  Function &function_;
  std::unordered_set<const Op *> expressions_, expansions_;
  std::vector<Op *> expressionOrder_, expansionOrder_;
  /// The copies to insert before each original, in the order made.
  std::unordered_map<const Op *, std::vector<std::unique_ptr<Op>>> copiesBefore_;
  std::vector<Value *> copies_; // every copied result, in the order made
  std::unordered_map<const Value *, int> uses_;
  std::unordered_set<const Op *> retired_;

  bool isExpression(const Op &op) const {
    if (op.kind == OpKind::Constant || op.kind == OpKind::Iota)
      return true;
    if (!preservesConstants(op.kind) || op.operands.empty())
      return false;
    for (const Value *operand : op.operands)
      if (!operand->definingOp || !expressions_.count(operand->definingOp))
        return false;
    return true;
  }

  static bool isScalarExpansion(const Op &op) {
    return op.kind == OpKind::Broadcast && op.operands.size() == 1 &&
           op.operands[0]->type.rank() == 0;
  }

  bool isSplit(const Value *v) const {
    return v->definingOp && (expressions_.count(v->definingOp) || expansions_.count(v->definingOp));
  }

  void visitBlock(Block &block) {
    for (auto &op : block.ops) {
      visitOp(*op);
      for (Block *region : op->regions())
        visitBlock(*region);
    }
    for (Value *&v : block.returned)
      if (isSplit(v))
        v = copy(v);
  }

  void visitOp(Op &op) {
    if (isExpression(op)) {
      expressions_.insert(&op);
      expressionOrder_.push_back(&op);
      return;
    }
    if (isScalarExpansion(op)) {
      expansions_.insert(&op);
      expansionOrder_.push_back(&op);
      return;
    }
    for (Value *&operand : op.operands)
      if (isSplit(operand))
        operand = copy(operand);
  }

  /// A copy of the expression computing `v`, for one use.
  Value *copy(Value *v) {
    if (v->type.rank() == 0)
      return v;
    ValueMap map;
    copyInto(v, map);
    return map.at(v);
  }

  void copyInto(Value *v, ValueMap &map) {
    if (v->type.rank() == 0 || map.count(v))
      return;
    const Op &op = *v->definingOp;
    for (Value *operand : op.operands)
      if (operand->definingOp)
        copyInto(operand, map);
    std::unique_ptr<Op> clone = cloneOp(op, map);
    for (auto &r : clone->results)
      copies_.push_back(r.get());
    copiesBefore_[&op].push_back(std::move(clone));
  }

  void countUses(const Block &block) {
    auto countOp = [&](const Op &op) {
      for (const Value *operand : op.operands)
        ++uses_[operand];
    };
    for (const auto &op : block.ops) {
      auto copies = copiesBefore_.find(op.get());
      if (copies != copiesBefore_.end())
        for (const auto &copy : copies->second)
          countOp(*copy);
      countOp(*op);
      for (const Block *region : op->regions())
        countUses(*region);
    }
    for (const Value *v : block.returned)
      ++uses_[v];
  }

  /// Scalar expansions, then constant expressions last to first, so that an
  /// expression's operands are looked at after the expressions reading them.
  void retireUnused() {
    std::vector<Op *> order = expansionOrder_;
    order.insert(order.end(), expressionOrder_.rbegin(), expressionOrder_.rend());
    for (Op *op : order) {
      if (!copiesBefore_.count(op))
        continue; // never copied: what was written stays, unused or not
      bool used = false;
      for (const auto &r : op->results)
        used = used || uses_[r.get()] > 0;
      if (used)
        continue;
      retired_.insert(op);
      for (const Value *operand : op->operands)
        --uses_[operand];
    }
  }

  void rebuild(Block &block) {
    std::vector<std::unique_ptr<Op>> ops;
    ops.reserve(block.ops.size());
    for (auto &op : block.ops) {
      auto copies = copiesBefore_.find(op.get());
      if (copies != copiesBefore_.end())
        for (auto &copy : copies->second)
          ops.push_back(std::move(copy));
      for (Block *region : op->regions())
        rebuild(*region);
      if (retired_.count(op.get()))
        module_.retiredOps.push_back(std::move(op));
      else
        ops.push_back(std::move(op));
    }
    block.ops = std::move(ops);
  }

  /// The first copy of a name keeps it when its original is gone; the others
  /// take the first free `<name>.<k>`.
  void nameCopies() {
    std::set<const Value *> copied(copies_.begin(), copies_.end());
    std::set<std::string> taken;
    std::vector<Value *> inOrder;
    collectNames(function_.body, copied, taken, inOrder);
    for (Value *v : inOrder) {
      std::string name = v->name;
      for (int k = 1; taken.count(name); ++k)
        name = v->name + "." + std::to_string(k);
      v->name = name;
      taken.insert(name);
    }
  }

  static void collectNames(const Block &block, const std::set<const Value *> &copied,
                           std::set<std::string> &taken, std::vector<Value *> &inOrder) {
    for (const auto &arg : block.args)
      taken.insert(arg->name);
    for (const auto &op : block.ops) {
      for (const auto &r : op->results)
        if (copied.count(r.get()))
          inOrder.push_back(r.get());
        else
          taken.insert(r->name);
      for (const Block *region : op->regions())
        collectNames(*region, copied, taken, inOrder);
    }
  }
};

} // namespace

void splitConstants(Module &module) {
  Splitter(module, module.snippet).run();
  for (auto &f : module.functions)
    Splitter(module, *f).run();
}

} // namespace shardc
