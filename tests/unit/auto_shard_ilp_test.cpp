// The strategy ILP against exhaustive enumeration: on random small problems
// (up to 10 nodes, 1-3 strategies each, random edges, followers, memory) the
// solver's objective equals the best over every choice, with and without a
// memory budget; an infeasible budget reports the smallest possible peak.
#include "passes/auto_shard/StrategyProblem.h"

#include <catch2/catch.hpp>

#include <functional>
#include <limits>
#include <random>

using namespace shardc::autoshard;

namespace {

StrategyProblem randomProblem(std::mt19937 &rng) {
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
        ProblemEdge e{u, v, {}};
        e.cost.resize(p.nodes[u].cost.size() * p.nodes[v].cost.size());
        for (double &c : e.cost)
          c = coin(rng) == 0 ? 0.0 : cost(rng);
        p.edges.push_back(e);
      }
  return p;
}

/// The best objective over every choice that follows its leaders and fits
/// `budget` (infinity when none fits); `peak` gets the smallest peak.
double enumerate(const StrategyProblem &p, double budget, double &smallestPeak) {
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
    for (size_t s = 0; s < p.nodes[i].cost.size(); ++s) {
      choice[i] = static_cast<int>(s);
      visit(i + 1);
    }
  };
  visit(0);
  return best;
}

} // namespace

TEST_CASE("auto-shard ILP: equals exhaustive enumeration without a budget", "[auto_shard]") {
  std::mt19937 rng(20);
  for (int round = 0; round < 60; ++round) {
    StrategyProblem p = randomProblem(rng);
    double peak = 0;
    double best = enumerate(p, std::numeric_limits<double>::infinity(), peak);
    StrategySolution s = solveStrategyProblem(p);
    INFO("round " << round);
    REQUIRE(s.status == SolveStatus::Optimal);
    REQUIRE(followsLeaders(p, s.choice));
    CHECK(s.objective == Approx(best).margin(1e-9));
    CHECK(objectiveOf(p, s.choice) == Approx(best).margin(1e-9));
  }
}

TEST_CASE("auto-shard ILP: equals exhaustive enumeration under a memory budget", "[auto_shard]") {
  std::mt19937 rng(7);
  int constrained = 0;
  for (int round = 0; round < 60; ++round) {
    StrategyProblem p = randomProblem(rng);
    double smallest = 0;
    double unconstrained = enumerate(p, std::numeric_limits<double>::infinity(), smallest);
    // A budget between the smallest peak and the peak of the free optimum.
    StrategySolution free = solveStrategyProblem(p);
    double freePeak = peakMemoryOf(p, free.choice);
    p.memoryBudget = std::floor((smallest + freePeak) / 2);
    double best = enumerate(p, *p.memoryBudget, smallest);
    StrategySolution s = solveStrategyProblem(p);
    INFO("round " << round << " budget " << *p.memoryBudget << " smallest " << smallest);
    if (best == std::numeric_limits<double>::infinity()) {
      REQUIRE(s.status == SolveStatus::Infeasible);
      CHECK(s.smallestPeak == Approx(smallest));
      continue;
    }
    REQUIRE(s.status == SolveStatus::Optimal);
    CHECK(peakMemoryOf(p, s.choice) <= *p.memoryBudget);
    CHECK(s.objective == Approx(best).margin(1e-9));
    if (best > unconstrained + 1e-12)
      ++constrained;
  }
  CHECK(constrained > 5); // the budget changed the answer in many rounds
}

TEST_CASE("auto-shard ILP: an infeasible budget gives the smallest peak", "[auto_shard]") {
  // Two values live together; each is 100 bytes replicated or 50 sharded.
  StrategyProblem p;
  p.numSteps = 2;
  p.nodes.push_back(ProblemNode{{0.0, 1.0}, {100, 50}, 0, 1, -1});
  p.nodes.push_back(ProblemNode{{0.0, 1.0}, {100, 50}, 1, 1, -1});
  p.memoryBudget = 99;
  StrategySolution s = solveStrategyProblem(p);
  REQUIRE(s.status == SolveStatus::Infeasible);
  CHECK(s.smallestPeak == Approx(100));
  p.memoryBudget = 150;
  s = solveStrategyProblem(p);
  REQUIRE(s.status == SolveStatus::Optimal);
  CHECK(s.objective == Approx(1.0));
  CHECK(s.variables > 0);
  CHECK(s.constraints > 0);
}

TEST_CASE("auto-shard ILP: followers share their leader's strategy", "[auto_shard]") {
  // The follower alone would prefer strategy 1; the leader's 0 wins overall.
  StrategyProblem p;
  p.numSteps = 2;
  p.nodes.push_back(ProblemNode{{0.0, 5.0}, {}, 0, 0, -1});
  p.nodes.push_back(ProblemNode{{1.0, 0.0}, {}, 1, 1, 0});
  StrategySolution s = solveStrategyProblem(p);
  REQUIRE(s.status == SolveStatus::Optimal);
  CHECK(s.choice == std::vector<int>{0, 0});
  CHECK(s.objective == Approx(1.0));
  CHECK(s.variables == 2); // one group of two strategies
}

TEST_CASE("auto-shard ILP: malformed problems are rejected", "[auto_shard]") {
  StrategyProblem p;
  p.nodes.push_back(ProblemNode{{0.0, 1.0}, {}, 0, 0, -1});
  p.nodes.push_back(ProblemNode{{0.0}, {}, 0, 0, 0}); // follower with another count
  CHECK_THROWS_AS(solveStrategyProblem(p), std::invalid_argument);
}
