// Path relinking under a memory budget (relink.cpp) and the solver's gap
// tolerance: relinked plans fit, follow their leaders and never cost more
// than the plan they relink toward; on identical layers, where every layer
// flips at the same memory price, relinking finds the mix the budget allows;
// a plan proven within the gap tolerance is returned without CBC. The local
// search lowering a plan's peak (lowerPeak) never adds bytes over its target.
#include "passes/auto_shard/Presolve.h"

#include "StrategyProblemHelpers.h"

#include <catch2/catch.hpp>

#include <limits>

using namespace shardc::autoshard;
using namespace shardc::autoshard::testing;

namespace {

/// `layers` identical weights, each live over the whole program and read
/// by an op of its own: replicated (strategy 0) the op takes 1 us and the
/// weight holds 1000 bytes, sharded (1) the op takes 3 us and the weight
/// 500. A weight and its op agree on the index (a reshard between them
/// takes 10 us); consecutive ops cost nothing to connect.
StrategyProblem identicalLayers(int layers) {
  StrategyProblem p;
  p.numSteps = layers + 1;
  for (int l = 0; l < layers; ++l) {
    ProblemNode weight{{0, 0}, {1000, 500}, 0, layers, -1, {}, -1};
    ProblemNode op{{1e-6, 3e-6}, {8, 8}, l + 1, l + 1, -1, {}, -1};
    int w = static_cast<int>(p.nodes.size());
    p.nodes.push_back(weight);
    p.nodes.push_back(op);
    p.edges.push_back({w, w + 1, {0, 1e-5, 1e-5, 0}, {}, l + 1});
    if (l > 0)
      p.edges.push_back({w - 1, w + 1, {0, 0, 0, 0}, {}, l + 1});
  }
  return p;
}

} // namespace

TEST_CASE("auto-shard relinking: on identical layers the budget's mix is found", "[auto_shard]") {
  const int layers = 6;
  StrategyProblem p = identicalLayers(layers);
  StrategySolution free = solveStrategyProblem(p);
  REQUIRE(free.status == SolveStatus::Optimal);
  REQUIRE(free.objective == Approx(layers * 1e-6)); // all replicated
  // Room for two replicated weights: 2 * 1000 + 4 * 500 + one op's 8.
  const double budget = 2 * 1000 + (layers - 2) * 500 + 8;
  double smallest = 0;
  const double best = enumerate(p, budget, smallest);
  REQUIRE(best == Approx((2 * 1 + (layers - 2) * 3) * 1e-6));
  MemoryPricedResult r = memoryPricedPlan(p, free.choice, budget, 30);
  REQUIRE_FALSE(r.plan.empty());
  CHECK(r.relinked > 0); // the multipliers alone shard every layer
  CHECK(r.objective == Approx(best));
  CHECK(peakMemoryOf(p, r.plan) <= budget);
}

TEST_CASE("auto-shard relinking: relinked plans fit and cost no more", "[auto_shard]") {
  std::mt19937 rng(77);
  int relinked = 0, cheaper = 0;
  for (int round = 0; round < 80; ++round) {
    StrategyProblem p = randomProblem(rng);
    if (round % 2)
      addTransients(p, rng);
    std::optional<HalfwayBudget> h = halfwayBudget(p);
    if (!h)
      continue;
    const double budget = h->budget, best = h->best;
    const StrategySolution &free = h->free;
    // Toward the plan of least memory (each node's least bytes, leaders'
    // choices for followers) when it fits.
    std::vector<int> least(p.nodes.size());
    for (size_t n = 0; n < p.nodes.size(); ++n) {
      const std::vector<double> &m = p.nodes[n].memory;
      least[n] = p.nodes[n].follows >= 0
                     ? least[p.nodes[n].follows]
                     : static_cast<int>(std::min_element(m.begin(), m.end()) - m.begin());
    }
    if (peakMemoryOf(p, least) > budget)
      continue;
    INFO("round " << round << " budget " << budget);
    std::vector<int> plan = relinkPlans(p, free.choice, least, budget, 30);
    ++relinked;
    CHECK(followsLeaders(p, plan));
    CHECK(peakMemoryOf(p, plan) <= budget);
    CHECK(objectiveOf(p, plan) <= objectiveOf(p, least) + 1e-12);
    CHECK(objectiveOf(p, plan) >= best - 1e-12);
    cheaper += objectiveOf(p, plan) < objectiveOf(p, least) - 1e-12;
  }
  CHECK(relinked > 10);
  CHECK(cheaper > 0);
}

TEST_CASE("auto-shard lowerPeak: moves lower the bytes over the target, never raise them",
          "[auto_shard]") {
  std::mt19937 rng(4242);
  auto over = [](const StrategyProblem &p, const std::vector<int> &plan, double target) {
    double total = 0;
    for (double bytes : liveBytesOf(p, plan))
      total += std::max(0.0, bytes - target);
    return total;
  };
  int lowered = 0, reached = 0, tried = 0;
  for (int round = 0; round < sampledRounds(80); ++round) {
    StrategyProblem p = randomProblem(rng);
    if (round % 2)
      addTransients(p, rng);
    StrategySolution free = solveStrategyProblem(p);
    REQUIRE(free.status == SolveStatus::Optimal);
    double smallest = 0;
    enumerate(p, std::numeric_limits<double>::infinity(), smallest);
    const double peak = peakMemoryOf(p, free.choice);
    // Targets from the smallest peak possible to the start's own peak.
    for (double target : {smallest, (smallest + peak) / 2, peak}) {
      INFO("round " << round << " target " << target);
      std::vector<int> plan = lowerPeak(p, free.choice, target, 30);
      ++tried;
      CHECK(followsLeaders(p, plan));
      CHECK(over(p, plan, target) <= over(p, free.choice, target));
      if (peak <= target)
        CHECK(plan == free.choice); // nothing to mend
      lowered += over(p, plan, target) < over(p, free.choice, target);
      reached += peak > target && peakMemoryOf(p, plan) <= target;
    }
  }
  CHECK(tried > 0);
  CHECK(lowered > 5);
  CHECK(reached > 5);
}

TEST_CASE("auto-shard lowerPeak: one group's move mends a peak the budget misses by a little",
          "[auto_shard]") {
  // Two weights live throughout, each read by an op: replicated (0) a
  // weight holds 1000 bytes, sharded (1) 500 (a reshard to its op's layout
  // costs 10 us). Both replicated peak at 2000 + 8; a budget of 1600 needs
  // one of them sharded, and one move does it.
  StrategyProblem p;
  p.numSteps = 3;
  for (int l = 0; l < 2; ++l) {
    int w = static_cast<int>(p.nodes.size());
    p.nodes.push_back({{0, 0}, {1000, 500}, 0, 2, -1, {}, -1});
    p.nodes.push_back({{1e-6, (l + 3) * 1e-6}, {8, 8}, l + 1, l + 1, -1, {}, -1});
    p.edges.push_back({w, w + 1, {0, 1e-5, 1e-5, 0}, {}, l + 1});
  }
  std::vector<int> start{0, 0, 0, 0};
  REQUIRE(peakMemoryOf(p, start) == 2008);
  std::vector<int> plan = lowerPeak(p, start, 1600, 30);
  CHECK(peakMemoryOf(p, plan) <= 1600);
  CHECK(plan[0] + plan[2] == 1); // one weight sharded
}

TEST_CASE("auto-shard ILP: a plan proven within the gap tolerance is kept without CBC",
          "[auto_shard]") {
  const int layers = 6;
  StrategyProblem p = identicalLayers(layers);
  // Room for two and a half replicated weights: the best plan replicates
  // two (14 us); the Lagrangian bound is the fractional 13 us.
  p.memoryBudget = 2 * 1000 + (layers - 2) * 500 + 250 + 8;
  StrategySolution exact = solveStrategyProblem(p);
  REQUIRE(exact.status == SolveStatus::Optimal);
  CHECK(exact.objective == Approx(14e-6));
  p.relativeGap = 0.1;
  StrategySolution loose = solveStrategyProblem(p);
  REQUIRE(loose.status == SolveStatus::WithinGap);
  CHECK(loose.how.find("path relinking") != std::string::npos);
  CHECK(loose.how.find("within the gap tolerance by its bound") != std::string::npos);
  CHECK(loose.objective == Approx(14e-6));
  CHECK(loose.gap > 0);
  CHECK(loose.gap <= 0.1);
  CHECK(loose.bound <= exact.objective + 1e-12);
  CHECK(peakMemoryOf(p, loose.choice) <= *p.memoryBudget);
  // A tolerance below the search's gap: CBC closes it.
  p.relativeGap = loose.gap / 2;
  StrategySolution tight = solveStrategyProblem(p);
  CHECK(tight.status == SolveStatus::Optimal);
  CHECK(tight.objective == Approx(14e-6));
  CHECK(std::string(solveStatusName(SolveStatus::WithinGap)) == "within the gap tolerance");
}
