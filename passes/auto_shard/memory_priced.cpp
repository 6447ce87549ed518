// Plans within a memory budget found by Lagrangian relaxation: the budget
// rows M_t <= B are priced into the costs with multipliers mu_t >= 0 (a
// value pays the multipliers of the steps it is live at, per byte; a
// transient or an edge's copy those of its step), and the
// problem without a budget, which the presolve mostly eliminates, is solved
// exactly. Every priced optimum minus B * sum(mu) is a lower bound on the
// budgeted optimum. First one multiplier spread over the steps over the
// budget, the smallest that fits searched on a log scale and by bisection;
// then subgradient steps on each step's multiplier tighten the bound and
// try more plans; last, every plan seen over the budget is relinked toward
// the best that fits (relink.cpp). A fixed sequence of solves:
// deterministic unless time runs out.
#include "passes/auto_shard/Presolve.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace shardc::autoshard {
namespace {

constexpr int kSubgradientSteps = 20;

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
  // Solves the problem with multipliers `mu` (per step); records its bound
  // (in `dual` too) and keeps its plan when it fits; returns its live bytes
  // per step (empty without a plan).
  double dual = 0;
  std::vector<std::vector<int>> over{unbudgeted}; // plans seen over the budget
  auto solve = [&](const std::vector<double> &mu) {
    std::vector<double> prefix(steps + 1, 0.0);
    for (int t = 0; t < steps; ++t)
      prefix[t + 1] = prefix[t] + mu[t];
    StrategyProblem priced = problem;
    priced.memoryBudget.reset();
    for (ProblemNode &node : priced.nodes) {
      int from = std::clamp(node.liveStart, 0, steps), to = std::clamp(node.liveEnd + 1, 0, steps);
      double price = to > from ? prefix[to] - prefix[from] : 0.0;
      for (size_t p = 0; p < node.memory.size(); ++p)
        node.cost[p] += price * node.memory[p];
      int at = std::clamp(transientStep(node), 0, steps - 1);
      for (size_t p = 0; p < node.transient.size(); ++p)
        node.cost[p] += mu[at] * node.transient[p];
    }
    for (ProblemEdge &edge : priced.edges) {
      int at = std::clamp(edge.step, 0, steps - 1);
      for (size_t i = 0; i < edge.memory.size(); ++i)
        edge.cost[i] += mu[at] * edge.memory[i];
    }
    priced.timeLimitSeconds = std::max(0.01, left());
    priced.relativeGap = 0; // its bound needs the priced optimum
    StrategySolution s = solveStrategyProblem(priced);
    ++out.solves;
    dual = s.status == SolveStatus::Optimal ? s.objective - budget * prefix[steps]
                                            : -std::numeric_limits<double>::infinity();
    out.bound = std::max(out.bound, dual);
    if (s.choice.empty())
      return std::vector<double>();
    std::vector<double> live = liveBytesOf(problem, s.choice);
    if (*std::max_element(live.begin(), live.end()) <= budget) {
      double objective = objectiveOf(problem, s.choice);
      if (out.plan.empty() || objective < out.objective) {
        out.objective = objective;
        out.plan = std::move(s.choice);
      }
    } else if (std::find(over.begin(), over.end(), s.choice) == over.end()) {
      over.push_back(std::move(s.choice));
    }
    return live;
  };

  // The steps priced: those over the budget in some plan seen so far; one
  // multiplier lambda spread evenly over them.
  std::vector<bool> priced(steps, false);
  int overCount = 0;
  auto addOver = [&](const std::vector<double> &live) {
    bool added = false;
    for (int t = 0; t < steps; ++t)
      if (live[t] > budget && !priced[t]) {
        priced[t] = true;
        ++overCount;
        added = true;
      }
    return added;
  };
  auto spread = [&](double lambda) {
    std::vector<double> mu(steps, 0.0);
    for (int t = 0; t < steps; ++t)
      if (priced[t])
        mu[t] = lambda / overCount;
    return mu;
  };
  auto fits = [&](const std::vector<double> &live) {
    return !live.empty() && *std::max_element(live.begin(), live.end()) <= budget;
  };
  addOver(liveBytesOf(problem, unbudgeted));
  double found = 0; // the smallest lambda found to fit
  // A plan over the budget at steps not yet priced adds them (the spread
  // changes, so the search starts again); a few rounds at most.
  for (int round = 0; round < 4 && overCount > 0 && left() > 0; ++round) {
    // Costs are seconds and memory bytes: 1e-15 s per byte is a nanosecond
    // per megabyte (memory barely counts), 1e-3 s per byte makes it dominate.
    double low = 0, high = 0;
    std::vector<double> lastOver;
    for (double lambda = 1e-15; lambda <= 1e-3 && left() > 0; lambda *= 16) {
      std::vector<double> live = solve(spread(lambda));
      if (fits(live)) {
        high = lambda;
        break;
      }
      low = lambda;
      lastOver = std::move(live);
    }
    if (high == 0) {
      if (lastOver.empty() || !addOver(lastOver))
        break; // pricing these steps more cannot help
      continue;
    }
    // Bisect (geometrically) between the last lambda over the budget and the
    // first within it: a smaller price keeps more of the time-optimal plan.
    for (int step = 0; step < 6 && low > 0 && left() > 0; ++step) {
      double mid = std::sqrt(low * high);
      (fits(solve(spread(mid))) ? high : low) = mid;
    }
    found = high;
    break;
  }

  // Subgradient ascent on the multipliers from the bisection's, with
  // Polyak's step toward the best plan's objective: each step raises the
  // multipliers of the steps over the budget and lowers the others.
  if (found > 0) {
    std::vector<double> mu = spread(found);
    double theta = 1, best = out.bound;
    int stale = 0;
    for (int k = 0; k < kSubgradientSteps && left() > 0; ++k) {
      std::vector<double> live = solve(mu);
      if (live.empty() || !std::isfinite(dual) ||
          out.objective - out.bound <= 1e-9 * std::abs(out.objective))
        break;
      double norm = 0;
      for (int t = 0; t < steps; ++t)
        if (mu[t] > 0 || live[t] > budget)
          norm += (live[t] - budget) * (live[t] - budget);
      if (norm == 0)
        break; // no multiplier can move
      double step = theta * (out.objective - dual) / norm;
      for (int t = 0; t < steps; ++t)
        mu[t] = std::max(0.0, mu[t] + step * (live[t] - budget));
      if (out.bound > best) {
        best = out.bound;
        stale = 0;
      } else if (++stale >= 3) {
        theta /= 2;
        stale = 0;
      }
    }
  }
  // Spend what the multipliers left of the budget: relink each plan seen
  // over it toward the best that fits.
  for (const std::vector<int> &cheap : over) {
    if (out.plan.empty() || left() <= 0)
      break;
    std::vector<int> relinked = relinkPlans(problem, cheap, out.plan, budget, left());
    double objective = objectiveOf(problem, relinked);
    if (objective < out.objective && peakMemoryOf(problem, relinked) <= budget) {
      out.objective = objective;
      out.plan = std::move(relinked);
      ++out.relinked;
    }
  }
  out.stoppedByTime = left() <= 0;
  return out;
}

} // namespace shardc::autoshard
