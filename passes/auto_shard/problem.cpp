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
  std::vector<double> live(std::max(problem.numSteps, 1), 0.0);
  for (size_t n = 0; n < problem.nodes.size(); ++n) {
    const ProblemNode &node = problem.nodes[n];
    if (node.memory.empty())
      continue;
    for (int t = std::max(node.liveStart, 0); t <= node.liveEnd && t < problem.numSteps; ++t)
      live[t] += node.memory[choice[n]];
  }
  return *std::max_element(live.begin(), live.end());
}

bool followsLeaders(const StrategyProblem &problem, const std::vector<int> &choice) {
  for (size_t n = 0; n < problem.nodes.size(); ++n)
    if (problem.nodes[n].follows >= 0 && choice[n] != choice[problem.nodes[n].follows])
      return false;
  return true;
}

} // namespace shardc::autoshard
