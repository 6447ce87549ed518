// Plans within a memory budget found by Lagrangian relaxation: the budget
// rows M_t <= B at the steps over the budget are priced into the costs
// (multiplier lambda / |O| on each step t of O), and the problem without a
// budget, which the presolve mostly eliminates, is solved exactly. Every
// priced optimum minus lambda * B is a lower bound on the budgeted optimum;
// the smallest lambda whose plan fits is searched on a log scale, then by
// bisection. A fixed sequence of solves: deterministic unless time runs out.
#include "passes/auto_shard/Presolve.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace shardc::autoshard {
namespace {

/// Bytes live at each step under `choice` (peakMemoryOf's profile).
std::vector<double> liveProfile(const StrategyProblem &problem, const std::vector<int> &choice) {
  std::vector<double> live(std::max(problem.numSteps, 1), 0.0);
  for (size_t n = 0; n < problem.nodes.size(); ++n) {
    const ProblemNode &node = problem.nodes[n];
    if (node.memory.empty())
      continue;
    for (int t = std::max(node.liveStart, 0); t <= node.liveEnd && t < problem.numSteps; ++t)
      live[t] += node.memory[choice[n]];
  }
  return live;
}

} // namespace

MemoryPricedResult memoryPricedPlan(const StrategyProblem &problem,
                                    const std::vector<int> &unbudgeted, double budget,
                                    double seconds) {
  auto start = std::chrono::steady_clock::now();
  auto left = [&] {
    return seconds -
           std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  MemoryPricedResult out;
  const int steps = std::max(problem.numSteps, 1);
  // The steps priced: those over the budget in some plan seen so far.
  std::vector<bool> over(steps, false);
  int overCount = 0;
  auto addOver = [&](const std::vector<int> &choice) {
    std::vector<double> live = liveProfile(problem, choice);
    bool added = false;
    for (int t = 0; t < steps; ++t)
      if (live[t] > budget && !over[t]) {
        over[t] = true;
        ++overCount;
        added = true;
      }
    return added;
  };
  // Each node's share of the multiplier: the fraction of priced steps it is
  // live at (its memory enters those rows).
  std::vector<double> share(problem.nodes.size(), 0.0);
  auto computeShares = [&] {
    std::vector<int> prefix(steps + 1, 0);
    for (int t = 0; t < steps; ++t)
      prefix[t + 1] = prefix[t] + (over[t] ? 1 : 0);
    for (size_t n = 0; n < problem.nodes.size(); ++n) {
      const ProblemNode &node = problem.nodes[n];
      int from = std::clamp(node.liveStart, 0, steps), to = std::clamp(node.liveEnd + 1, 0, steps);
      share[n] = to > from ? double(prefix[to] - prefix[from]) / overCount : 0.0;
    }
  };
  // Solves the problem priced by `lambda`; records its bound and returns
  // whether its plan fits (then `plan` is it).
  std::vector<int> lastOver; // the plan of the last lambda that did not fit
  auto fits = [&](double lambda, std::vector<int> &plan) {
    StrategyProblem priced = problem;
    priced.memoryBudget.reset();
    for (size_t n = 0; n < priced.nodes.size(); ++n)
      for (size_t p = 0; p < priced.nodes[n].memory.size(); ++p)
        priced.nodes[n].cost[p] += lambda * share[n] * priced.nodes[n].memory[p];
    priced.timeLimitSeconds = std::max(0.01, left());
    StrategySolution s = solveStrategyProblem(priced);
    ++out.solves;
    if (s.status == SolveStatus::Optimal)
      out.bound = std::max(out.bound, s.objective - lambda * budget);
    if (s.choice.empty())
      return false;
    if (peakMemoryOf(problem, s.choice) > budget) {
      lastOver = std::move(s.choice);
      return false;
    }
    plan = std::move(s.choice);
    return true;
  };
  auto keep = [&](std::vector<int> &plan) {
    double objective = objectiveOf(problem, plan);
    if (out.plan.empty() || objective < out.objective) {
      out.objective = objective;
      out.plan = std::move(plan);
    }
  };
  addOver(unbudgeted);
  // A plan over the budget at steps not yet priced adds them (the shares
  // change, so the search starts again); a few rounds at most.
  for (int round = 0; round < 4 && overCount > 0 && left() > 0; ++round) {
    computeShares();
    // Costs are seconds and memory bytes: 1e-15 s per byte is a nanosecond
    // per megabyte (memory barely counts), 1e-3 s per byte makes it dominate.
    std::vector<int> plan;
    double low = 0, high = 0;
    lastOver.clear();
    for (double lambda = 1e-15; lambda <= 1e-3 && left() > 0; lambda *= 16) {
      if (fits(lambda, plan)) {
        high = lambda;
        break;
      }
      low = lambda;
    }
    if (high == 0) {
      if (lastOver.empty() || !addOver(lastOver))
        break; // pricing these steps more cannot help
      continue;
    }
    keep(plan);
    // Bisect (geometrically) between the last lambda over the budget and the
    // first within it: a smaller price keeps more of the time-optimal plan.
    for (int step = 0; step < 6 && low > 0 && left() > 0; ++step) {
      double mid = std::sqrt(low * high);
      if (fits(mid, plan)) {
        high = mid;
        keep(plan);
      } else {
        low = mid;
      }
    }
    break;
  }
  out.stoppedByTime = left() <= 0;
  return out;
}

} // namespace shardc::autoshard
