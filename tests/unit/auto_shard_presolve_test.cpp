// The reductions before the strategy ILP (presolve.cpp) against exhaustive
// enumeration, one property test per reduction on random problems built so
// that the reduction applies (separable matrices, dominated strategies,
// groups of at most two neighbours), with and without a memory budget; and
// a long chain solved by elimination alone equals the plain ILP.
#include "passes/auto_shard/Presolve.h"

#include "StrategyProblemHelpers.h"

#include <catch2/catch.hpp>

using namespace shardc::autoshard;
using namespace shardc::autoshard::testing;

namespace {

/// Makes about half of the edges' matrices a[p] + b[q] (or one-sided).
void makeSeparable(StrategyProblem &p, std::mt19937 &rng) {
  std::uniform_real_distribution<double> cost(0.0, 1e-3);
  for (ProblemEdge &e : p.edges) {
    if (rng() % 2)
      continue;
    size_t kv = p.nodes[e.to].cost.size();
    std::vector<double> a(p.nodes[e.from].cost.size()), b(kv);
    int oneSided = static_cast<int>(rng() % 3); // 0: both, 1: only a, 2: only b
    for (double &x : a)
      x = oneSided == 2 ? 0.0 : cost(rng);
    for (double &x : b)
      x = oneSided == 1 ? 0.0 : cost(rng);
    for (size_t i = 0; i < a.size(); ++i)
      for (size_t j = 0; j < kv; ++j)
        e.cost[i * kv + j] = a[i] + b[j];
  }
}

/// Makes the last strategy of some leaders a copy of their first, no better
/// anywhere: cost, memory and every incident matrix entry at least as high.
void addDominated(StrategyProblem &p, std::mt19937 &rng) {
  std::uniform_real_distribution<double> extra(0.0, 1e-4);
  for (size_t n = 0; n < p.nodes.size(); ++n) {
    ProblemNode &node = p.nodes[n];
    bool ledByOthers = false;
    for (const ProblemNode &other : p.nodes)
      ledByOthers = ledByOthers || other.follows == static_cast<int>(n);
    size_t k = node.cost.size();
    if (k < 2 || node.follows >= 0 || ledByOthers || rng() % 2)
      continue;
    node.cost[k - 1] = node.cost[0] + (rng() % 2 ? extra(rng) : 0.0);
    node.memory[k - 1] = node.memory[0] + 1024.0 * (rng() % 2);
    for (ProblemEdge &e : p.edges) {
      size_t kv = p.nodes[e.to].cost.size();
      if (e.from == static_cast<int>(n))
        for (size_t q = 0; q < kv; ++q)
          e.cost[(k - 1) * kv + q] = e.cost[q] + extra(rng) * (rng() % 2);
      if (e.to == static_cast<int>(n))
        for (size_t r = 0; r < p.nodes[e.from].cost.size(); ++r)
          e.cost[r * k + k - 1] = e.cost[r * k] + extra(rng) * (rng() % 2);
    }
  }
}

/// Keeps only a chain's edges and a few skips: most groups have at most
/// two neighbours.
void sparsen(StrategyProblem &p, std::mt19937 &rng) {
  std::vector<ProblemEdge> kept;
  for (ProblemEdge &e : p.edges)
    if (e.from + 1 == e.to || rng() % 6 == 0)
      kept.push_back(std::move(e));
  p.edges = std::move(kept);
}

/// A chain of `n` nodes of `k` strategies, each node meeting the ones
/// `back` steps before it, with every cost drawn from `rng` (the nodes'
/// first, then the edges' in order).
StrategyProblem randomChain(std::mt19937 &rng, int n, int k, std::initializer_list<int> back) {
  std::uniform_real_distribution<double> cost(0.0, 1e-3);
  StrategyProblem p;
  p.numSteps = n;
  for (int i = 0; i < n; ++i) {
    ProblemNode node;
    for (int s = 0; s < k; ++s)
      node.cost.push_back(cost(rng));
    node.liveStart = node.liveEnd = i;
    p.nodes.push_back(node);
  }
  for (int v = 1; v < n; ++v)
    for (int d : back)
      if (v - d >= 0) {
        ProblemEdge e{v - d, v, {}, {}, v};
        for (int s = 0; s < k * k; ++s)
          e.cost.push_back(cost(rng));
        p.edges.push_back(e);
      }
  return p;
}

} // namespace

TEST_CASE("auto-shard presolve: separable edge matrices fold into node costs", "[auto_shard]") {
  std::mt19937 rng(101);
  const int rounds = sampledRounds(60);
  int folded = 0;
  for (int round = 0; round < rounds; ++round) {
    StrategyProblem p = randomProblem(rng);
    makeSeparable(p, rng);
    INFO("round " << round);
    // With a budget nothing is eliminated, so the folds are seen alone.
    folded += checkAgainstEnumeration(p, true).presolve.separableEdges;
    checkAgainstEnumeration(p, false);
  }
  CHECK(folded > rounds / 3);
}

TEST_CASE("auto-shard presolve: dominated strategies are dropped", "[auto_shard]") {
  std::mt19937 rng(202);
  const int rounds = sampledRounds(60);
  int dropped = 0;
  for (int round = 0; round < rounds; ++round) {
    StrategyProblem p = randomProblem(rng);
    addDominated(p, rng);
    INFO("round " << round);
    dropped += checkAgainstEnumeration(p, true).presolve.dominatedStrategies;
    checkAgainstEnumeration(p, false);
  }
  CHECK(dropped > rounds / 3);
}

TEST_CASE("auto-shard presolve: folds and dominance keep transients and edge copies",
          "[auto_shard]") {
  // Under a budget a separable matrix whose edge holds a copy keeps its pair
  // (the copy depends on both choices), a pair folded because one side has
  // one strategy hands its copy to the other side, and a strategy whose
  // transient or copies are larger is not dominated.
  std::mt19937 rng(404);
  const int rounds = sampledRounds(80);
  int folded = 0, dropped = 0;
  for (int round = 0; round < rounds; ++round) {
    StrategyProblem p = randomProblem(rng);
    if (round % 2)
      makeSeparable(p, rng);
    else
      addDominated(p, rng);
    addTransients(p, rng);
    INFO("round " << round);
    PresolveStats stats = checkAgainstEnumeration(p, true).presolve;
    folded += stats.separableEdges;
    dropped += stats.dominatedStrategies;
  }
  CHECK(folded > rounds / 16);
  CHECK(dropped > rounds / 16);
}

TEST_CASE("auto-shard presolve: groups of at most two neighbours are eliminated", "[auto_shard]") {
  std::mt19937 rng(303);
  const int rounds = sampledRounds(80);
  int eliminated = 0;
  for (int round = 0; round < rounds; ++round) {
    StrategyProblem p = randomProblem(rng);
    if (round % 2)
      sparsen(p, rng);
    INFO("round " << round);
    eliminated += checkAgainstEnumeration(p, false).presolve.eliminatedGroups;
    // Under a budget the memory rows couple every group: the reduction
    // eliminates none (the solver may still answer with the unbudgeted
    // model, when its plan fits).
    StrategyProblem budgeted = p;
    budgeted.memoryBudget = 0;
    CHECK(reduceProblem(budgeted).stats.eliminatedGroups == 0);
    checkAgainstEnumeration(p, true);
  }
  CHECK(eliminated > rounds * 5 / 4);
}

TEST_CASE("auto-shard presolve: a long chain with skips equals the plain ILP", "[auto_shard]") {
  std::mt19937 rng(404);
  StrategyProblem p = randomChain(rng, 40, 4, {1, 3}); // a chain and residual-like skips
  StrategyProblem plain = p;
  plain.presolve = false;
  StrategySolution reduced = solveStrategyProblem(p);
  StrategySolution full = solveStrategyProblem(plain);
  REQUIRE(reduced.status == SolveStatus::Optimal);
  REQUIRE(full.status == SolveStatus::Optimal);
  CHECK(reduced.objective == Approx(full.objective).margin(1e-9));
  CHECK(reduced.variables < full.variables);
  CHECK(reduced.presolve.eliminatedGroups > 0);
}

/// `model` as addStrategyColumns leaves it, which separableBound takes: the
/// groups with one strategy left in the constant.
static ReducedModel asColumnsLeaveIt(ReducedModel model) {
  for (ReducedGroup &group : model.groups)
    if (!group.eliminated && group.alive.size() == 1)
      model.constant += group.linear[0];
  return model;
}

TEST_CASE("auto-shard local search: a plan that follows its leaders, above the bound",
          "[auto_shard]") {
  // On random problems: the local search's plan is a plan (its followers on
  // their leaders' strategies), no better than the optimum, and the
  // separable bound is no higher than the optimum.
  std::mt19937 rng(505);
  const int rounds = sampledRounds(80);
  for (int round = 0; round < rounds; ++round) {
    StrategyProblem p = randomProblem(rng);
    INFO("round " << round);
    double peak = 0;
    const double optimum = enumerate(p, std::numeric_limits<double>::infinity(), peak);
    ReducedModel model = asColumnsLeaveIt(reduceProblem(p));
    std::vector<int> plan = expandChoice(model, localSearchPlan(model, 10.0));
    REQUIRE(followsLeaders(p, plan));
    CHECK(objectiveOf(p, plan) >= optimum - 1e-12);
    CHECK(separableBound(model) <= optimum + 1e-12);
  }
}

TEST_CASE("auto-shard local search: proves a plan that moves nothing", "[auto_shard]") {
  // A chain with skips where strategy 2 is every node's cheapest and edges
  // cost nothing between equal strategies (a data-parallel stack): the
  // greedy finds it and the bound equals its objective, which proves it.
  StrategyProblem p;
  const int n = 30, k = 4;
  p.numSteps = n;
  for (int i = 0; i < n; ++i) {
    ProblemNode node;
    for (int s = 0; s < k; ++s)
      node.cost.push_back(s == 2 ? 1e-4 : 2e-4 + 1e-5 * s);
    node.liveStart = node.liveEnd = i;
    if (i % 3 == 2)
      node.follows = i - 1; // followers, as elementwise chains are
    p.nodes.push_back(node);
  }
  for (int v = 1; v < n; ++v)
    for (int u : {v - 1, v - 4})
      if (u >= 0) {
        ProblemEdge e{u, v, {}, {}, v};
        for (int a = 0; a < k; ++a)
          for (int b = 0; b < k; ++b)
            e.cost.push_back(a == b ? 0.0 : 5e-5);
        p.edges.push_back(e);
      }
  ReducedModel model = asColumnsLeaveIt(reduceProblem(p));
  std::vector<int> plan = expandChoice(model, localSearchPlan(model, 10.0));
  CHECK(plan == std::vector<int>(n, 2));
  CHECK(separableBound(model) == Approx(objectiveOf(p, plan)).margin(1e-12));
}

TEST_CASE("auto-shard local search: leaves a layout the whole stack shares", "[auto_shard]") {
  // A chain with skips (every node three neighbours or more, so none is
  // eliminated): strategy 1 is cheaper everywhere but at the first node,
  // where both cost the same, and a change of strategy along an edge costs
  // more than it saves at one node. Greedy (the first node's tie to strategy
  // 0) and single moves stay on strategy 0 everywhere; trying the first
  // node's other strategy with the rest chosen again finds all 1.
  StrategyProblem p;
  const int n = 12;
  p.numSteps = n;
  for (int i = 0; i < n; ++i) {
    ProblemNode node;
    node.cost = i == 0 ? std::vector<double>{1e-3, 1e-3} : std::vector<double>{1e-3, 9e-4};
    node.liveStart = node.liveEnd = i;
    p.nodes.push_back(node);
  }
  for (int v = 1; v < n; ++v)
    for (int u : {v - 1, v - 2, v - 3})
      if (u >= 0)
        p.edges.push_back(ProblemEdge{u, v, {0.0, 5e-4, 5e-4, 0.0}, {}, v});
  ReducedModel model = asColumnsLeaveIt(reduceProblem(p));
  REQUIRE(model.stats.eliminatedGroups == 0);
  std::vector<int> plan = expandChoice(model, localSearchPlan(model, 10.0));
  CHECK(plan == std::vector<int>(n, 1));
  double peak = 0;
  CHECK(objectiveOf(p, plan) ==
        Approx(enumerate(p, std::numeric_limits<double>::infinity(), peak)).margin(1e-12));
}

/// A problem whose nodes meet about half of the others (so the presolve
/// leaves groups of three neighbours or more), small enough to enumerate.
static StrategyProblem denseProblem(std::mt19937 &rng) {
  std::uniform_int_distribution<int> count(5, 9), strategies(2, 3), coin(0, 1);
  std::uniform_real_distribution<double> cost(0.0, 1e-3);
  StrategyProblem p;
  const int n = count(rng);
  p.numSteps = n;
  for (int i = 0; i < n; ++i) {
    ProblemNode node;
    node.cost.resize(strategies(rng));
    for (double &c : node.cost)
      c = cost(rng);
    node.liveStart = node.liveEnd = i;
    p.nodes.push_back(node);
  }
  for (int v = 1; v < n; ++v)
    for (int u = 0; u < v; ++u)
      if (coin(rng) == 0 || u == v - 1) {
        ProblemEdge e{u, v, {}, {}, v};
        for (size_t s = 0; s < p.nodes[u].cost.size() * p.nodes[v].cost.size(); ++s)
          e.cost.push_back(cost(rng));
        p.edges.push_back(e);
      }
  return p;
}

TEST_CASE("auto-shard elimination: the optimum of every model without a budget", "[auto_shard]") {
  // On random problems (dense ones, whose groups keep three neighbours or
  // more after the presolve, and the usual mix of followers and sparse
  // edges): the plan eliminating every group left is a plan, its objective
  // is the enumerated optimum, and the objective it reports is the plan's.
  std::mt19937 rng(606);
  const int rounds = sampledRounds(80);
  int groupsLeft = 0;
  for (int round = 0; round < rounds; ++round) {
    StrategyProblem p = round % 2 ? randomProblem(rng) : denseProblem(rng);
    INFO("round " << round);
    double peak = 0;
    const double optimum = enumerate(p, std::numeric_limits<double>::infinity(), peak);
    ReducedModel model = asColumnsLeaveIt(reduceProblem(p));
    EliminationPlan exact = eliminationPlan(model, 1e9);
    REQUIRE(!exact.choice.empty());
    std::vector<int> plan = expandChoice(model, exact.choice);
    REQUIRE(followsLeaders(p, plan));
    CHECK(objectiveOf(p, plan) == Approx(optimum).margin(1e-12));
    CHECK(exact.objective == Approx(optimum).margin(1e-12));
    groupsLeft += exact.groups;
  }
  CHECK(groupsLeft > rounds); // the presolve left groups to eliminate
}

TEST_CASE("auto-shard elimination: a stack whose groups keep three neighbours", "[auto_shard]") {
  // A chain where every node meets the three before it (none is eliminated by
  // the presolve), with costs from a random generator: elimination's plan is
  // the enumerated optimum, in tables of at most the strategies of three
  // groups; with less work allowed than those tables take, no plan.
  std::mt19937 rng(707);
  const int n = 9, k = 3;
  StrategyProblem p = randomChain(rng, n, k, {1, 2, 3});
  ReducedModel model = asColumnsLeaveIt(reduceProblem(p));
  REQUIRE(model.stats.eliminatedGroups == 0);
  EliminationPlan exact = eliminationPlan(model, 1e9);
  REQUIRE(exact.choice.size() == static_cast<size_t>(n));
  CHECK(exact.groups == n);
  CHECK(exact.largestTable == k * k * k);
  double peak = 0;
  CHECK(objectiveOf(p, expandChoice(model, exact.choice)) ==
        Approx(enumerate(p, std::numeric_limits<double>::infinity(), peak)).margin(1e-12));
  CHECK(eliminationPlan(model, 50).choice.empty());
}
