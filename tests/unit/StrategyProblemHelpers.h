// Helpers for the strategy-problem tests: random small problems and the
// best objective by enumerating every choice.
#pragma once

#include "passes/auto_shard/StrategyProblem.h"

#include <cmath>
#include <functional>
#include <limits>
#include <random>

namespace shardc::autoshard::testing {

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
    for (size_t s = 0; s < p.nodes[i].cost.size(); ++s) {
      choice[i] = static_cast<int>(s);
      visit(i + 1);
    }
  };
  visit(0);
  return best;
}

} // namespace shardc::autoshard::testing
