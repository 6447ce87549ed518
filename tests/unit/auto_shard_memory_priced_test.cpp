// The memory-priced search (memory_priced.cpp) and the solver's time limit
// under a budget: on random small problems its plans fit and its Lagrangian
// bound never exceeds the best objective found by enumeration; a budgeted
// problem too large for CBC in the time limit gets the search's plan (or a
// proven infeasible budget) within the limit, the same plan on every run.
#include "passes/auto_shard/Presolve.h"

#include "StrategyProblemHelpers.h"
#include "TestHelpers.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>

using namespace shardc::autoshard;
using namespace shardc::autoshard::testing;

namespace {

/// A chain of `n` values with 8 layouts each (layout s holds 64 KiB / (s+1)
/// and computes slower as s grows); every tenth value lives to the end (a
/// weight), the others for three steps. Without a budget the presolve
/// eliminates it; under one its model has about 72 columns per value.
StrategyProblem longChain(int n) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> cost(0.0, 1e-4);
  StrategyProblem p;
  p.numSteps = n;
  for (int i = 0; i < n; ++i) {
    ProblemNode node;
    for (int s = 0; s < 8; ++s) {
      node.cost.push_back(cost(rng) + s * 1e-5);
      node.memory.push_back(65536 / (s + 1));
    }
    node.liveStart = i;
    node.liveEnd = i % 10 == 0 ? n - 1 : std::min(n - 1, i + 3);
    p.nodes.push_back(node);
    if (i > 0) {
      ProblemEdge e{i - 1, i, std::vector<double>(64), {}, i};
      for (double &c : e.cost)
        c = cost(rng);
      p.edges.push_back(e);
    }
  }
  return p;
}

/// The peak when every value takes its smallest layout (no followers here,
/// so it is the smallest peak any plan reaches).
double smallestPeakOf(const StrategyProblem &p) {
  std::vector<int> least(p.nodes.size());
  for (size_t n = 0; n < p.nodes.size(); ++n)
    least[n] =
        static_cast<int>(std::min_element(p.nodes[n].memory.begin(), p.nodes[n].memory.end()) -
                         p.nodes[n].memory.begin());
  return peakMemoryOf(p, least);
}

} // namespace

TEST_CASE("auto-shard memory-priced search: plans fit and the bound is a lower bound",
          "[auto_shard]") {
  std::mt19937 rng(41);
  const int problems = 60, rounds = sampledRounds(problems);
  int plans = 0, bounds = 0, proven = 0;
  for (int round = 0; round < rounds; ++round) {
    StrategyProblem p = randomProblem(rng);
    std::optional<HalfwayBudget> h = halfwayBudget(p);
    if (!h)
      continue;
    const double budget = h->budget, best = h->best;
    const StrategySolution &free = h->free;
    MemoryPricedResult r = memoryPricedPlan(p, free.choice, budget, 30);
    INFO("round " << round << " budget " << budget);
    CHECK_FALSE(r.stoppedByTime);
    CHECK(r.bound <= best + 1e-12);
    if (r.bound > -std::numeric_limits<double>::infinity())
      ++bounds;
    if (r.plan.empty())
      continue;
    ++plans;
    CHECK(peakMemoryOf(p, r.plan) <= budget);
    CHECK(followsLeaders(p, r.plan));
    CHECK(r.objective == Approx(objectiveOf(p, r.plan)).margin(1e-12));
    CHECK(r.objective >= best - 1e-12);
    // Deterministic: the same search finds the same plan.
    CHECK(memoryPricedPlan(p, free.choice, budget, 30).plan == r.plan);
    // When the bound meets the plan, the solver answers without CBC.
    if (r.bound >= r.objective - 1e-9 * r.objective) {
      ++proven;
      p.memoryBudget = budget;
      StrategySolution s = solveStrategyProblem(p);
      CHECK(s.status == SolveStatus::Optimal);
      CHECK(s.how.find("proven optimal by its bound") != std::string::npos);
      CHECK(s.objective == Approx(best).margin(1e-9));
    }
  }
  CHECK(plans > rounds / 6);
  CHECK(bounds > rounds / 6);
  // One problem of the 60 has a bound that meets its plan; the sanitizer
  // build's quarter has none, and reaches the solver's shortcut elsewhere.
  if (rounds == problems)
    CHECK(proven > 0);
}

TEST_CASE("auto-shard ILP: a budgeted model too large for the time limit gets the "
          "memory-priced plan within the limit",
          "[auto_shard]") {
  StrategyProblem p = longChain(4000); // about 290,000 columns under a budget
  StrategySolution free = solveStrategyProblem(p);
  REQUIRE(free.status == SolveStatus::Optimal);
  p.memoryBudget = std::floor((smallestPeakOf(p) + peakMemoryOf(p, free.choice)) / 2);
  // CBC's root is estimated at 8.8 s, over half of 6 s (15 s in the
  // sanitizer build): the search alone must answer within the limit.
  p.timeLimitSeconds = 6 * shardc::testing::kSanitizerSlowdown;
  StrategySolution s = solveStrategyProblem(p);
  REQUIRE(s.status == SolveStatus::NotProven);
  CHECK(s.seconds < p.timeLimitSeconds + 1); // CBC's root alone takes longer
  CHECK(s.how.find("CBC skipped") != std::string::npos);
  CHECK(s.how.find("cut by the time limit") == std::string::npos);
  CHECK(peakMemoryOf(p, s.choice) <= *p.memoryBudget);
  CHECK(s.objective == Approx(objectiveOf(p, s.choice)).margin(1e-12));
  REQUIRE(s.boundKnown);
  CHECK(s.bound <= s.objective);
  CHECK(s.gap < 0.005);             // the subgradient steps tighten the bound (1.2% without)
  CHECK(s.bound >= free.objective); // at least the unbudgeted optimum
  CHECK(s.gap == Approx((s.objective - s.bound) / s.objective));
  CHECK(s.variables > 200000); // the model's size is still reported
  // Same input, same plan: the decision to skip CBC depends on the model.
  CHECK(solveStrategyProblem(p).choice == s.choice);
}

TEST_CASE("auto-shard ILP: a budget below every plan's peak is an error within the limit "
          "when the model is too large for CBC",
          "[auto_shard]") {
  StrategyProblem p = longChain(4000);
  double smallest = smallestPeakOf(p);
  p.memoryBudget = smallest - 1;
  p.timeLimitSeconds = 6 * shardc::testing::kSanitizerSlowdown;
  StrategySolution s = solveStrategyProblem(p);
  REQUIRE(s.status == SolveStatus::Infeasible);
  CHECK(s.seconds < p.timeLimitSeconds + 1);
  // The bound is exact without followers, and the searches for a small
  // plan without CBC (least bytes over the steps, then memory-priced
  // bisection) reach it: the smallest peak, proven.
  CHECK(s.smallestPeakBound == Approx(smallest));
  CHECK(!s.smallestPeakIsBound);
  CHECK(s.smallestPeak == Approx(smallest));
}
