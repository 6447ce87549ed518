// The strategy ILP against exhaustive enumeration: on random small problems
// (up to 10 nodes, 1-3 strategies each, random edges, followers, memory) the
// solver's objective equals the best over every choice, with and without a
// memory budget, with transients and edge copies; an infeasible budget
// reports the smallest possible peak.
#include "passes/auto_shard/StrategyProblem.h"

#include "StrategyProblemHelpers.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

using namespace shardc::autoshard;
using namespace shardc::autoshard::testing;

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
  const int rounds = sampledRounds(60);
  int constrained = 0;
  for (int round = 0; round < rounds; ++round) {
    INFO("round " << round);
    constrained += checkAgainstEnumeration(randomProblem(rng), true).constrained;
  }
  CHECK(constrained > rounds / 12); // the budget changed the answer in many rounds
}

TEST_CASE("auto-shard ILP: the plain formulation under a budget equals enumeration",
          "[auto_shard]") {
  // Without presolve every value keeps its columns, so every running-sum row
  // of the memory chain (values entering and leaving) is exercised.
  std::mt19937 rng(11);
  for (int round = 0; round < 40; ++round) {
    StrategyProblem p = randomProblem(rng);
    p.presolve = false;
    INFO("round " << round);
    checkAgainstEnumeration(p, true);
  }
}

TEST_CASE("auto-shard ILP: transients and edge copies count against the budget", "[auto_shard]") {
  // Bytes live only at one step: an op's unreduced result (on its node) and
  // a consumer's resharded copy (on the edge, so on the pair's e columns or,
  // once one side has a single strategy, on the other's s columns).
  std::mt19937 rng(31);
  const int rounds = sampledRounds(80);
  int constrained = 0;
  for (int round = 0; round < rounds; ++round) {
    StrategyProblem p = randomProblem(rng);
    addTransients(p, rng);
    p.presolve = round % 4 != 3;
    INFO("round " << round);
    constrained += checkAgainstEnumeration(p, true).constrained;
  }
  CHECK(constrained > rounds / 16);
}

TEST_CASE("auto-shard ILP: a budget the free optimum meets keeps the full presolve",
          "[auto_shard]") {
  // A chain: the best plan without a budget fits a budget at its own peak,
  // so it is the answer, found by the unbudgeted model whose presolve
  // eliminates the chain's groups (a budget alone would forbid that).
  std::mt19937 rng(3);
  int eliminated = 0;
  for (int round = 0; round < 20; ++round) {
    StrategyProblem p = randomProblem(rng);
    StrategySolution free = solveStrategyProblem(p);
    p.memoryBudget = peakMemoryOf(p, free.choice);
    StrategySolution s = solveStrategyProblem(p);
    REQUIRE(s.status == SolveStatus::Optimal);
    CHECK(s.objective == Approx(free.objective).margin(1e-12));
    CHECK(s.presolve.eliminatedGroups == free.presolve.eliminatedGroups);
    eliminated += s.presolve.eliminatedGroups;
  }
  CHECK(eliminated > 0);
}

TEST_CASE("auto-shard ILP: an infeasible budget gives the smallest peak", "[auto_shard]") {
  // Two values live together; each is 100 bytes replicated or 50 sharded.
  StrategyProblem p;
  p.numSteps = 2;
  p.nodes.push_back(ProblemNode{{0.0, 1.0}, {100, 50}, 0, 1, -1, {}, -1});
  p.nodes.push_back(ProblemNode{{0.0, 1.0}, {100, 50}, 1, 1, -1, {}, -1});
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

TEST_CASE("auto-shard ILP: the smallest peak an infeasible budget states is met as a budget",
          "[auto_shard]") {
  // The error's number is what a user tries next: a plan peaks there (or
  // it is the smallest possible, proven), and solving with it finds one.
  std::mt19937 rng(91);
  int stated = 0;
  for (int round = 0; round < 40; ++round) {
    StrategyProblem p = randomProblem(rng);
    addTransients(p, rng);
    double smallest = 0;
    enumerate(p, std::numeric_limits<double>::infinity(), smallest);
    p.memoryBudget = smallest - 1;
    StrategySolution s = solveStrategyProblem(p);
    INFO("round " << round << " smallest " << smallest);
    REQUIRE(s.status == SolveStatus::Infeasible);
    REQUIRE(!s.smallestPeakIsBound);
    CHECK(s.smallestPeak == Approx(smallest)); // small models: proven
    CHECK(s.smallestPeakBound <= s.smallestPeak + 1e-9);
    p.memoryBudget = s.smallestPeak;
    StrategySolution again = solveStrategyProblem(p);
    REQUIRE(!again.choice.empty());
    CHECK(peakMemoryOf(p, again.choice) <= s.smallestPeak + 1e-9);
    ++stated;
  }
  CHECK(stated == 40);
}

TEST_CASE("auto-shard ILP: followers share their leader's strategy", "[auto_shard]") {
  // The follower alone would prefer strategy 1; the leader's 0 wins overall.
  StrategyProblem p;
  p.numSteps = 2;
  p.nodes.push_back(ProblemNode{{0.0, 5.0}, {}, 0, 0, -1, {}, -1});
  p.nodes.push_back(ProblemNode{{1.0, 0.0}, {}, 1, 1, 0, {}, -1});
  p.presolve = false; // the plain formulation (presolve would fold the group away)
  StrategySolution s = solveStrategyProblem(p);
  REQUIRE(s.status == SolveStatus::Optimal);
  CHECK(s.choice == std::vector<int>{0, 0});
  CHECK(s.objective == Approx(1.0));
  CHECK(s.variables == 2); // one group of two strategies
}

TEST_CASE("auto-shard ILP: malformed problems are rejected", "[auto_shard]") {
  StrategyProblem p;
  p.nodes.push_back(ProblemNode{{0.0, 1.0}, {}, 0, 0, -1, {}, -1});
  p.nodes.push_back(ProblemNode{{0.0}, {}, 0, 0, 0, {}, -1}); // follower with another count
  CHECK_THROWS_AS(solveStrategyProblem(p), std::invalid_argument);
}

TEST_CASE("auto-shard ILP: without CBC the infeasible budget's peak is bracketed", "[auto_shard]") {
  // A time limit too short for CBC leaves the bound on the smallest peak
  // (each value at its least bytes); transients and copies under those
  // choices need not be their least, so they stay out of it: the bound
  // never exceeds the smallest peak any plan reaches. The plan without a
  // budget, solved first, is a plan: its peak is at least the smallest.
  std::mt19937 rng(53);
  int bounded = 0;
  for (int round = 0; round < 60; ++round) {
    StrategyProblem p = randomProblem(rng);
    addTransients(p, rng);
    double smallest = 0;
    enumerate(p, std::numeric_limits<double>::infinity(), smallest);
    p.memoryBudget = std::floor(smallest / 2);
    p.timeLimitSeconds = 1e-9;
    StrategySolution s = solveStrategyProblem(p);
    INFO("round " << round << " smallest " << smallest);
    REQUIRE((s.status == SolveStatus::Infeasible || s.status == SolveStatus::NoSolution));
    if (s.status == SolveStatus::Infeasible) {
      CHECK(s.smallestPeakBound <= smallest + 1e-9);
      CHECK(s.smallestPeakBound <= s.smallestPeak);
      if (!s.smallestPeakIsBound)
        CHECK(s.smallestPeak >= smallest - 1e-9);
      ++bounded;
    }
  }
  CHECK(bounded > 10);
}
