// Helpers for the strategy-problem tests: random small problems, the best
// objective by enumerating every choice, and the solver checked against it.
#pragma once

#include "passes/auto_shard/StrategyProblem.h"

#include "TestHelpers.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <random>

namespace shardc::autoshard::testing {

/// How many random problems a test that solves each against enumeration
/// takes: all of them in the optimized build, a quarter under the
/// sanitizers. There CBC, which is not instrumented, still allocates through
/// AddressSanitizer's allocator, and its zero-half cut separation makes a
/// large calloc and free per call: 80% of such a test's time (13 s for 60
/// problems, against 0.8 s in the optimized build), all of it outside
/// shardc's code, which a quarter of the problems covers as well.
inline int sampledRounds(int rounds) {
  return shardc::testing::kSampleSweeps ? rounds / 4 : rounds;
}

inline StrategyProblem randomProblem(std::mt19937 &rng) {
  std::uniform_int_distribution<int> count(2, 10), strategies(1, 3), coin(0, 3);
  std::uniform_real_distribution<double> cost(0.0, 1e-3), bytes(1.0, 64.0);
  StrategyProblem p;
  int n = count(rng);
  p.numSteps = n;
  for (int i = 0; i < n; ++i) {
    ProblemNode node;
    if (i > 0 && coin(rng) == 0) { // a follower of an earlier node
      node.follows = std::uniform_int_distribution<int>(0, i - 1)(rng);
      node.cost.resize(p.nodes[node.follows].cost.size());
    } else {
      node.cost.resize(strategies(rng));
    }
    for (double &c : node.cost)
      c = cost(rng);
    for (size_t s = 0; s < node.cost.size(); ++s)
      node.memory.push_back(std::floor(bytes(rng)) * 1024);
    node.liveStart = i;
    node.liveEnd = std::uniform_int_distribution<int>(i, n - 1)(rng);
    p.nodes.push_back(node);
  }
  for (int v = 1; v < n; ++v)
    for (int u = 0; u < v; ++u)
      if (coin(rng) == 0 || u == v - 1) {
        ProblemEdge e{u, v, {}, {}, v};
        e.cost.resize(p.nodes[u].cost.size() * p.nodes[v].cost.size());
        for (double &c : e.cost)
          c = coin(rng) == 0 ? 0.0 : cost(rng);
        p.edges.push_back(e);
      }
  return p;
}

/// Gives about half the nodes transient bytes (at a step of their live
/// range) and about half the edges a copy at the consumer's first step, none
/// where the two strategies have the same index (as equal layouts need no
/// reshard).
inline void addTransients(StrategyProblem &p, std::mt19937 &rng) {
  std::uniform_real_distribution<double> bytes(1.0, 64.0);
  for (ProblemNode &node : p.nodes) {
    if (rng() % 2)
      continue;
    node.step = std::uniform_int_distribution<int>(node.liveStart, node.liveEnd)(rng);
    for (size_t s = 0; s < node.cost.size(); ++s)
      node.transient.push_back(std::floor(bytes(rng)) * 1024);
  }
  for (ProblemEdge &e : p.edges) {
    if (rng() % 2)
      continue;
    size_t kv = p.nodes[e.to].cost.size();
    e.step = p.nodes[e.to].liveStart;
    e.memory.assign(e.cost.size(), 0.0);
    for (size_t i = 0; i < e.memory.size(); ++i)
      if (i / kv != i % kv)
        e.memory[i] = std::floor(bytes(rng)) * 1024;
  }
}

/// The best objective over every choice that follows its leaders and fits
/// `budget` (infinity when none fits); `peak` gets the smallest peak.
inline double enumerate(const StrategyProblem &p, double budget, double &smallestPeak) {
  double best = std::numeric_limits<double>::infinity();
  smallestPeak = std::numeric_limits<double>::infinity();
  std::vector<int> choice(p.nodes.size(), 0);
  std::function<void(size_t)> visit = [&](size_t i) {
    if (i == p.nodes.size()) {
      if (!followsLeaders(p, choice))
        return;
      double peak = peakMemoryOf(p, choice);
      smallestPeak = std::min(smallestPeak, peak);
      if (peak <= budget)
        best = std::min(best, objectiveOf(p, choice));
      return;
    }
    const int leader = p.nodes[i].follows;
    if (leader >= 0 && static_cast<size_t>(leader) < i) { // it takes its leader's choice
      choice[i] = choice[leader];
      visit(i + 1);
      return;
    }
    for (size_t s = 0; s < p.nodes[i].cost.size(); ++s) {
      choice[i] = static_cast<int>(s);
      visit(i + 1);
    }
  };
  visit(0);
  return best;
}

/// A budget that binds `p`: halfway between the smallest peak any plan has
/// and the peak of the unbudgeted optimum (`free`), with the best objective
/// under it (enumerated).
struct HalfwayBudget {
  double budget = 0, smallest = 0, best = 0;
  StrategySolution free;
};

/// The halfway budget of `p`, or nullopt when the unbudgeted optimum already
/// fits it (the budget would not bind).
inline std::optional<HalfwayBudget> halfwayBudget(const StrategyProblem &p) {
  HalfwayBudget h;
  enumerate(p, std::numeric_limits<double>::infinity(), h.smallest);
  h.free = solveStrategyProblem(p);
  h.budget = std::floor((h.smallest + peakMemoryOf(p, h.free.choice)) / 2);
  if (peakMemoryOf(p, h.free.choice) <= h.budget)
    return std::nullopt;
  h.best = enumerate(p, h.budget, h.smallest);
  return h;
}

/// What checkAgainstEnumeration saw.
struct EnumerationCheck {
  PresolveStats presolve;
  /// The budget changed the best objective.
  bool constrained = false;
};

/// Solves `p` and checks the answer against enumeration (under a budget
/// when `budgeted`: halfway between the smallest and the free optimum's
/// peak): the status, the objective, leaders followed, the peak within the
/// budget, or the smallest peak when nothing fits.
inline EnumerationCheck checkAgainstEnumeration(StrategyProblem p, bool budgeted) {
  double smallest = 0;
  double unconstrained = enumerate(p, std::numeric_limits<double>::infinity(), smallest);
  double best = unconstrained;
  if (budgeted) {
    StrategySolution free = solveStrategyProblem(p);
    p.memoryBudget = std::floor((smallest + peakMemoryOf(p, free.choice)) / 2);
    best = enumerate(p, *p.memoryBudget, smallest);
  }
  StrategySolution s = solveStrategyProblem(p);
  INFO("budget " << p.memoryBudget.value_or(-1) << " smallest " << smallest);
  if (best == std::numeric_limits<double>::infinity()) {
    REQUIRE(s.status == SolveStatus::Infeasible);
    CHECK(s.smallestPeak == Approx(smallest));
    return {s.presolve, false};
  }
  REQUIRE(s.status == SolveStatus::Optimal);
  REQUIRE(followsLeaders(p, s.choice));
  if (budgeted)
    CHECK(peakMemoryOf(p, s.choice) <= *p.memoryBudget);
  CHECK(s.objective == Approx(best).margin(1e-9));
  CHECK(objectiveOf(p, s.choice) == Approx(best).margin(1e-9));
  return {s.presolve, best > unconstrained + 1e-12};
}

} // namespace shardc::autoshard::testing
