// auto_axes / explicit_axes regions lowered to plain ops and raised back
// (AxesRegions.h): mixed_axes.cpp lowers them for propagation or the solver
// and raises them afterwards, so the printed program keeps them;
// lowerAxesRegions lowers them for good before partitioning.
#include "passes/explicit/AxesRegions.h"

#include "ir/AxisTypes.h"
#include "ir/Diagnostics.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

namespace shardc {

void AxesRegionLowering::lower(Module &module) {
  walkBlocks(module, [&](Block &b) { lowerBlock(b); });
}

void AxesRegionLowering::lowerBlock(Block &b) {
  std::vector<std::unique_ptr<Op>> ops;
  for (auto &op : b.ops) {
    if (!isAxesRegion(*op)) {
      ops.push_back(std::move(op));
      continue;
    }
    lowerBlock(*op->body);
    const bool autoAxes = op->kind == OpKind::AutoAxes;
    const Attribute *list = op->attr(autoAxes ? attrs::outShardings : attrs::inShardings);
    Block &body = *op->body;
    LoweredRegion record{&b, nullptr, {}, body.args.size(), op->results.size(), {}, {}};
    for (const auto &arg : body.args)
      record.argTypes.push_back(arg->writtenType);
    for (const auto &r : op->results)
      record.resultTypes.push_back(r->writtenType);
    const size_t first = ops.size();
    // Into the body: auto_axes changes the type only; explicit_axes
    // reshards each operand to its in_sharding.
    for (size_t i = 0; i < body.args.size(); ++i)
      ops.push_back(edge(*op, autoAxes ? nullptr : &list->shardings[i], op->operands[i],
                         std::move(body.args[i])));
    for (auto &inner : body.ops)
      ops.push_back(std::move(inner));
    // Out of it: auto_axes reshards each result to its out_sharding.
    for (size_t i = 0; i < op->results.size(); ++i)
      ops.push_back(edge(*op, autoAxes ? &list->shardings[i] : nullptr, body.returned[i],
                         std::move(op->results[i])));
    body.ops.clear();
    for (size_t k = first; k < ops.size(); ++k)
      record.ops.push_back(ops[k].get());
    record.region = std::move(op);
    lowered_.push_back(std::move(record));
  }
  b.ops = std::move(ops);
}

void AxesRegionLowering::raise() {
  for (auto it = lowered_.rbegin(); it != lowered_.rend(); ++it) {
    LoweredRegion &r = *it;
    std::vector<std::unique_ptr<Op>> &ops = r.parent->ops;
    std::vector<size_t> at = positions(r);
    Op &region = *r.region;
    Block &body = *region.body;
    std::vector<std::unique_ptr<Op>> before, raised;
    size_t bodyFrom = r.inEdges ? at[r.inEdges - 1] + 1 : at.front();
    const auto inEdgesEnd = r.ops.begin() + static_cast<std::ptrdiff_t>(r.inEdges);
    for (size_t k = at.front(); k < bodyFrom; ++k)
      if (std::find(r.ops.begin(), inEdgesEnd, ops[k].get()) == inEdgesEnd)
        before.push_back(std::move(ops[k]));
    for (size_t i = 0; i < r.inEdges; ++i) {
      Op &edgeOp = *ops[at[i]];
      region.operands[i] = edgeOp.operands[0];
      std::unique_ptr<Value> arg = std::move(edgeOp.results[0]);
      arg->definingOp = nullptr;
      arg->resultIndex = 0;
      arg->writtenType = r.argTypes[i];
      body.args[i] = std::move(arg);
    }
    const size_t firstOut = r.ops.size() - r.outEdges;
    for (size_t k = bodyFrom; k <= at.back(); ++k) {
      auto outEdges = r.ops.begin() + static_cast<std::ptrdiff_t>(firstOut);
      auto edge = std::find(outEdges, r.ops.end(), ops[k].get());
      if (edge == r.ops.end()) {
        body.ops.push_back(std::move(ops[k]));
        continue;
      }
      size_t i = static_cast<size_t>(edge - outEdges);
      Op &edgeOp = *ops[k];
      body.returned[i] = edgeOp.operands[0];
      std::unique_ptr<Value> result = std::move(edgeOp.results[0]);
      result->definingOp = &region;
      result->resultIndex = static_cast<int>(i);
      result->writtenType = r.resultTypes[i];
      region.results[i] = std::move(result);
    }
    for (auto &op : before)
      raised.push_back(std::move(op));
    raised.push_back(std::move(r.region));
    ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(at.front()),
              ops.begin() + static_cast<std::ptrdiff_t>(at.back() + 1));
    ops.insert(ops.begin() + static_cast<std::ptrdiff_t>(at.front()),
               std::make_move_iterator(raised.begin()), std::make_move_iterator(raised.end()));
  }
  lowered_.clear();
  reshardTargets_.clear();
}

std::string AxesRegionLowering::describeEdge(const Op &op) const {
  for (const LoweredRegion &r : lowered_) {
    auto at = std::find(r.ops.begin(), r.ops.end(), &op);
    if (at == r.ops.end())
      continue;
    const size_t k = static_cast<size_t>(at - r.ops.begin());
    const size_t firstOut = r.ops.size() - r.outEdges;
    if (k >= r.inEdges && k < firstOut)
      return ""; // a body op
    return fmt::format("%{} = {} {} of {} at line {}", op.result()->name,
                       k < r.inEdges ? "argument" : "result", k < r.inEdges ? k : k - firstOut,
                       r.region->name(), r.region->loc.line);
  }
  return "";
}

/// `%result = reshard %from target` (or `identity %from` without a target).
std::unique_ptr<Op> AxesRegionLowering::edge(const Op &region, const Sharding *target, Value *from,
                                             std::unique_ptr<Value> result) {
  auto op = std::make_unique<Op>();
  op->kind = target ? OpKind::Reshard : OpKind::Identity;
  op->loc = region.loc;
  op->operands.push_back(from);
  op->operandLocs.push_back(region.loc);
  if (target) {
    Attribute a;
    a.kind = Attribute::Kind::Sharding;
    a.loc = target->loc;
    a.shardings.push_back(*target);
    op->attrs.push_back({"sharding", a, target->loc});
    reshardTargets_.push_back(&op->attrs.back().value.shardings.front());
  }
  result->definingOp = op.get();
  result->resultIndex = 0;
  result->writtenType.reset();
  op->results.push_back(std::move(result));
  return op;
}

/// Where each of `r`'s ops is in its parent block, in order (ops may have
/// been inserted between them, never moved).
std::vector<size_t> AxesRegionLowering::positions(const LoweredRegion &r) {
  const std::vector<std::unique_ptr<Op>> &ops = r.parent->ops;
  std::vector<size_t> at;
  size_t k = 0;
  for (const Op *op : r.ops) {
    while (k < ops.size() && ops[k].get() != op)
      ++k;
    if (k == ops.size())
      throw InternalError(r.region->loc, "mixed axes - a lowered region's ops moved");
    at.push_back(k++);
  }
  return at;
}

} // namespace shardc
