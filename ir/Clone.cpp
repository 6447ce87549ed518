// Deep copies of ops and blocks (ir/Clone.h).
#include "ir/Clone.h"

namespace shardc {
namespace {

std::unique_ptr<Value> cloneValue(const Value &v, Op *definingOp) {
  auto copy = std::make_unique<Value>();
  copy->name = v.name;
  copy->type = v.type;
  copy->typeKnown = v.typeKnown;
  copy->sharding = v.sharding;
  copy->loc = v.loc;
  copy->definingOp = definingOp;
  copy->resultIndex = v.resultIndex;
  copy->writtenType = v.writtenType;
  copy->writtenTypeLoc = v.writtenTypeLoc;
  return copy;
}

Value *remap(Value *v, const ValueMap &map) {
  auto it = map.find(v);
  return it == map.end() ? v : it->second;
}

} // namespace

void cloneBlockInto(const Block &from, Block &to, ValueMap &map) {
  for (const auto &arg : from.args) {
    to.args.push_back(cloneValue(*arg, nullptr));
    map[arg.get()] = to.args.back().get();
  }
  for (const auto &op : from.ops)
    to.ops.push_back(cloneOp(*op, map));
  for (Value *v : from.returned)
    to.returned.push_back(remap(v, map));
  to.returnedLocs = from.returnedLocs;
  to.returnTypes = from.returnTypes;
  to.returnTypesInvalid = from.returnTypesInvalid;
  to.returnLoc = from.returnLoc;
  to.hasReturn = from.hasReturn;
  to.loc = from.loc;
  to.endLoc = from.endLoc;
}

std::unique_ptr<Op> cloneOp(const Op &op, ValueMap &map) {
  auto copy = std::make_unique<Op>();
  copy->kind = op.kind;
  copy->loc = op.loc;
  for (Value *v : op.operands)
    copy->operands.push_back(remap(v, map));
  copy->operandLocs = op.operandLocs;
  copy->attrs = op.attrs;
  copy->writtenOperandTypes = op.writtenOperandTypes;
  copy->writtenOperandTypesLoc = op.writtenOperandTypesLoc;
  copy->typeSpecInvalid = op.typeSpecInvalid;
  auto region = [&](const std::unique_ptr<Block> &from, std::unique_ptr<Block> &to) {
    if (!from)
      return;
    to = std::make_unique<Block>();
    cloneBlockInto(*from, *to, map);
  };
  region(op.cond, copy->cond);
  region(op.body, copy->body);
  region(op.elseBody, copy->elseBody);
  for (const auto &r : op.results) {
    copy->results.push_back(cloneValue(*r, copy.get()));
    map[r.get()] = copy->results.back().get();
  }
  return copy;
}

void replaceAllUses(Block &block, const Value *from, Value *to) {
  for (auto &op : block.ops) {
    for (Value *&operand : op->operands)
      if (operand == from)
        operand = to;
    for (Block *region : op->regions())
      replaceAllUses(*region, from, to);
  }
  for (Value *&v : block.returned)
    if (v == from)
      v = to;
}

} // namespace shardc
