// The problem the solver sees for a strategy graph: per node its strategies'
// costs (run `weight` times) and memory with the value's live range
// (parameters from step 0, op k at step k+1, a loop's region values at the
// loop's step, each value to the step of its last user, returned values to
// the end), the ops left to propagation as fixed memory, and every edge priced
// by the reshard planner (a loop's back edges too).
#include "passes/auto_shard/AutoShardInternal.h"

#include <algorithm>
#include <set>

namespace shardc::autoshard {

void makeProblem(StrategyGraph &graph, Pricer &pricer, const AutoShardOptions &options,
                 const std::map<const Value *, double> &writtenResults,
                 const std::vector<std::pair<const Op *, int>> &opaqueAt,
                 const std::vector<BackEdge> &backEdges) {
  Block &body = graph.main->body;
  StrategyProblem &p = graph.problem;
  p.numSteps = static_cast<int>(body.ops.size()) + 1;
  p.memoryBudget = options.memoryBudget
                       ? std::optional<double>(static_cast<double>(*options.memoryBudget))
                       : std::nullopt;
  p.timeLimitSeconds = options.timeLimitSeconds;
  p.relativeGap = options.relativeGap;
  std::map<const Value *, int> lastUse = lastUses(body, p.numSteps);
  // An identity's result is its operand's buffer (partition_ops.cpp), so
  // the operand lives as long as the result (chains from their ends).
  for (auto op = body.ops.rbegin(); op != body.ops.rend(); ++op)
    if ((*op)->kind == OpKind::Identity) {
      int &operandEnd = lastUse[(*op)->operands[0]];
      operandEnd = std::max(operandEnd, lastUse[(*op)->result()]);
    }
  std::set<const Value *> returned(body.returned.begin(), body.returned.end());
  std::set<const Value *> params;
  for (const auto &param : body.args)
    params.insert(param.get());
  for (const GraphNode &node : graph.nodes) {
    ProblemNode pn;
    bool transient = false;
    bool inArena = !params.count(node.value) && !returned.count(node.value);
    auto written = writtenResults.find(node.value);
    for (const Strategy &s : node.strategies) {
      pn.cost.push_back((s.compute + s.communication + s.toWrittenResult) * node.weight);
      double bytes = inArena ? arenaBytes(s.memory) : s.memory;
      if (inArena && node.op && node.op->kind == OpKind::Identity)
        bytes = 0; // its operand's buffer, kept live as long
      // A result computed in another layout than its written one is held
      // in the arena, then resharded into its output buffer.
      if (written != writtenResults.end() && s.toWrittenResult > 0)
        bytes = arenaBytes(s.memory) + written->second;
      pn.memory.push_back(bytes);
      pn.transient.push_back(s.transient);
      transient = transient || s.transient > 0;
    }
    if (!transient)
      pn.transient.clear();
    pn.step = node.step;
    pn.liveStart = returned.count(node.value) ? 0 : node.step;
    auto it = lastUse.find(node.value);
    pn.liveEnd = std::max(node.step, it == lastUse.end() ? node.step : it->second);
    pn.follows = node.follows;
    p.nodes.push_back(std::move(pn));
  }
  addOpaqueMemory(graph, opaqueAt, lastUse);
  for (size_t v = 0; v < graph.nodes.size(); ++v) {
    const GraphNode &consumer = graph.nodes[v];
    if (!consumer.op)
      continue;
    for (size_t i = 0; i < consumer.op->operands.size(); ++i) {
      auto it = graph.nodeOf.find(consumer.op->operands[i]);
      if (it == graph.nodeOf.end())
        continue;
      const GraphNode &producer = graph.nodes[it->second];
      // A reshard of a value from outside a loop is hoisted: it runs as
      // often as the producer, not the consumer.
      double weight = std::min(producer.weight, consumer.weight);
      ProblemEdge edge{it->second, static_cast<int>(v), {}, {}, consumer.step};
      const TensorType &type = producer.value->type;
      // Per pair of strategies: the reshard's time, and the consumer's copy,
      // live while it runs.
      const auto priced = pricePairs(
          producer.strategies, resultLayout, consumer.strategies,
          [i](const Strategy &s) -> const Sharding & { return s.operands[i]; },
          [&](const Sharding &from, const Sharding &to) {
            const ReshardPlan &plan = pricer.plan(type, from, {}, "sum", to);
            return std::make_pair(weight * pricer.time(plan, type.dtype),
                                  pricer.workingBytes(plan, type, from, true));
          });
      bool copies = false;
      for (const auto &[cost, memory] : priced) {
        edge.cost.push_back(cost);
        edge.memory.push_back(memory);
        copies = copies || memory > 0;
      }
      if (!copies)
        edge.memory.clear();
      graph.edges.push_back(GraphEdge{it->second, static_cast<int>(v), i});
      p.edges.push_back(std::move(edge));
    }
  }
  for (const BackEdge &back : backEdges) {
    const GraphNode &producer = graph.nodes[back.from];
    const GraphNode &carried = graph.nodes[back.to];
    ProblemEdge edge{back.from, back.to, {}, {}, 0};
    const TensorType &type = producer.value->type;
    edge.cost = pricePairs(producer.strategies, resultLayout, carried.strategies, resultLayout,
                           [&](const Sharding &from, const Sharding &to) {
                             return back.weight *
                                    pricer.time(pricer.plan(type, from, {}, "sum", to), type.dtype);
                           });
    p.edges.push_back(std::move(edge));
  }
}

} // namespace shardc::autoshard
