// A first plan within a memory budget, found fast: memory is priced into the
// costs (lambda seconds per byte on every value's bytes, a Lagrangian
// relaxation of the budget rows with one multiplier), and the problem without
// a budget is solved, which the presolve mostly eliminates. The smallest
// lambda whose plan fits is searched on a log scale. The ILP under the budget
// then starts from this plan and keeps it when it finds nothing better in its
// time limit, so a large program still gets a plan that fits.
#include "passes/auto_shard/Presolve.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace shardc::autoshard {
namespace {

StrategyProblem priced(const StrategyProblem &problem, double lambda) {
  StrategyProblem out = problem;
  out.memoryBudget.reset();
  for (ProblemNode &node : out.nodes)
    for (size_t p = 0; p < node.memory.size(); ++p)
      node.cost[p] += lambda * node.memory[p];
  return out;
}

} // namespace

std::vector<int> memoryPricedPlan(const StrategyProblem &problem, double budget, double seconds) {
  auto start = std::chrono::steady_clock::now();
  auto left = [&] {
    return seconds -
           std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  // Returns the plan of lambda when it fits the budget.
  auto fits = [&](double lambda, std::vector<int> &plan) {
    StrategyProblem p = priced(problem, lambda);
    p.timeLimitSeconds = std::max(0.01, left());
    StrategySolution s = solveStrategyProblem(p);
    if (s.choice.empty() || peakMemoryOf(problem, s.choice) > budget)
      return false;
    plan = std::move(s.choice);
    return true;
  };
  // Costs are seconds and memory bytes: 1e-15 s per byte is a nanosecond per
  // megabyte (memory barely counts), 1e-3 s per byte makes it dominate.
  std::vector<int> best;
  double low = 0, high = 0;
  for (double lambda = 1e-15; lambda <= 1e-3 && left() > 0; lambda *= 16) {
    if (fits(lambda, best)) {
      high = lambda;
      break;
    }
    low = lambda;
  }
  if (best.empty())
    return best;
  // Bisect (geometrically) between the last lambda over the budget and the
  // first within it: a smaller price keeps more of the time-optimal plan.
  for (int step = 0; step < 6 && low > 0 && left() > 0; ++step) {
    double mid = std::sqrt(low * high);
    std::vector<int> plan;
    if (fits(mid, plan)) {
      high = mid;
      if (objectiveOf(problem, plan) <= objectiveOf(problem, best))
        best = std::move(plan);
    } else {
      low = mid;
    }
  }
  return best;
}

} // namespace shardc::autoshard
