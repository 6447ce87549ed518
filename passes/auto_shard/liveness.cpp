// Liveness for the memory rows of auto-sharding: the step of each value's
// last use as the runtime holds it, and the memory of the ops the solver
// leaves to propagation.
#include "passes/auto_shard/AutoShardInternal.h"

#include <algorithm>
#include <functional>
#include <set>

namespace shardc::autoshard {

std::map<const Value *, int> lastUses(const Block &body, int numSteps) {
  std::map<const Value *, int> lastUse;
  std::function<void(const Op &, int)> uses = [&](const Op &op, int step) {
    for (const Value *v : op.operands)
      lastUse[v] = step;
    for (Block *region : op.regions()) {
      for (const auto &inner : region->ops)
        uses(*inner, step);
      for (const Value *v : region->returned)
        lastUse[v] = step;
    }
  };
  for (size_t k = 0; k < body.ops.size(); ++k)
    uses(*body.ops[k], static_cast<int>(k) + 1);
  for (const Value *v : body.returned)
    lastUse[v] = numSteps - 1;
  // The runtime reads every parameter before the program runs and keeps it
  // to the end (--repeat runs again on it).
  for (const auto &param : body.args)
    lastUse[param.get()] = numSteps - 1;
  return lastUse;
}

// The ops left to propagation hold memory too, in layouts not known here:
// each result counts whole (no layout holds more per device, padding aside)
// over its live range, every value of its regions and a copy of each operand
// at its step, and a copy of such a result at each op of the graph reading
// it. applyPlan never sees these nodes (they come after the graph's own).
void addOpaqueMemory(StrategyGraph &graph, const std::vector<std::pair<const Op *, int>> &opaque,
                     const std::map<const Value *, int> &lastUse) {
  StrategyProblem &p = graph.problem;
  auto whole = [](const Value &v) { return shapeBytes(v.type.dtype, v.type.shape); };
  std::function<double(const Block &)> regionBytes = [&](const Block &block) {
    double bytes = 0;
    for (const auto &arg : block.args)
      bytes += whole(*arg);
    for (const auto &op : block.ops) {
      for (const auto &r : op->results)
        bytes += whole(*r);
      for (const Block *region : op->regions())
        bytes += regionBytes(*region);
    }
    return bytes;
  };
  std::set<const Value *> returned(graph.main->body.returned.begin(),
                                   graph.main->body.returned.end());
  for (auto [op, step] : opaque) {
    double inside = 0; // with a copy of each operand, resharded for it
    for (const Block *region : op->regions())
      inside += regionBytes(*region);
    for (const Value *operand : op->operands)
      inside += whole(*operand);
    if (inside > 0)
      p.nodes.push_back(ProblemNode{{0.0}, {}, step, step, -1, {inside}, step});
    for (const auto &r : op->results) {
      if (graph.nodeOf.count(r.get()))
        continue;
      auto it = lastUse.find(r.get());
      int end = std::max(step, it == lastUse.end() ? step : it->second);
      p.nodes.push_back(
          ProblemNode{{0.0}, {whole(*r)}, returned.count(r.get()) ? 0 : step, end, -1, {}, step});
    }
  }
  // An op of the graph reading such a result may reshard it: a copy.
  for (const GraphNode &consumer : graph.nodes) {
    double copies = 0;
    for (const Value *operand : consumer.op ? consumer.op->operands : std::vector<Value *>())
      if (!graph.nodeOf.count(operand))
        copies += whole(*operand);
    if (copies > 0)
      p.nodes.push_back(
          ProblemNode{{0.0}, {}, consumer.step, consumer.step, -1, {copies}, consumer.step});
  }
}

} // namespace shardc::autoshard
