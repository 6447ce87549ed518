// Evaluating a choice of strategies against a StrategyProblem: its objective
// and its memory peak, as the ILP rows define them (used by the report and
// by the tests that enumerate every choice).
#include "passes/auto_shard/StrategyProblem.h"

#include <algorithm>

namespace shardc::autoshard {

double objectiveOf(const StrategyProblem &problem, const std::vector<int> &choice) {
  double total = 0;
  for (size_t n = 0; n < problem.nodes.size(); ++n)
    total += problem.nodes[n].cost[choice[n]];
  for (const ProblemEdge &edge : problem.edges) {
    size_t k = problem.nodes[edge.to].cost.size();
    total += edge.cost[choice[edge.from] * k + choice[edge.to]];
  }
  return total;
}

double peakMemoryOf(const StrategyProblem &problem, const std::vector<int> &choice) {
  std::vector<double> live = liveBytesOf(problem, choice);
  return *std::max_element(live.begin(), live.end());
}

int transientStep(const ProblemNode &node) { return node.step >= 0 ? node.step : node.liveStart; }

std::vector<double> liveBytesOf(const StrategyProblem &problem, const std::vector<int> &choice) {
  // A difference array: a weight lives across most of a deep stack, so
  // adding it at every step would cost the program's length per value.
  // Bytes are whole numbers, exact in doubles, so the sums are exact.
  const int steps = std::max(problem.numSteps, 1);
  std::vector<double> delta(steps + 1, 0.0);
  auto add = [&](int first, int last, double bytes) {
    first = std::max(first, 0);
    int end = std::min(last + 1, problem.numSteps);
    if (first < end) {
      delta[first] += bytes;
      delta[end] -= bytes;
    }
  };
  for (size_t n = 0; n < problem.nodes.size(); ++n) {
    const ProblemNode &node = problem.nodes[n];
    if (!node.memory.empty())
      add(node.liveStart, node.liveEnd, node.memory[choice[n]]);
    if (!node.transient.empty())
      add(transientStep(node), transientStep(node), node.transient[choice[n]]);
  }
  for (const ProblemEdge &edge : problem.edges)
    if (!edge.memory.empty()) {
      size_t k = problem.nodes[edge.to].cost.size();
      add(edge.step, edge.step, edge.memory[choice[edge.from] * k + choice[edge.to]]);
    }
  std::vector<double> live(steps, 0.0);
  double running = 0;
  for (int t = 0; t < steps; ++t)
    live[t] = running += delta[t];
  return live;
}

bool followsLeaders(const StrategyProblem &problem, const std::vector<int> &choice) {
  for (size_t n = 0; n < problem.nodes.size(); ++n)
    if (problem.nodes[n].follows >= 0 && choice[n] != choice[problem.nodes[n].follows])
      return false;
  return true;
}

} // namespace shardc::autoshard
