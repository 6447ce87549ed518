// Path relinking under a memory budget: between a cheaper plan over the
// budget and a plan within it, blocks move from one plan's strategies to the
// other's. A block is a connected piece of the groups (a leader and its
// followers) where the two plans differ, joined by the edges that cost more
// when their ends follow different plans: moved whole, a block adds no
// reshard that neither plan has. First, from the cheap plan toward the one that fits,
// the block removing bytes over the budget at the least cost per byte, until
// the plan fits; then blocks and single groups move wherever that is cheaper
// and still fits. The memory-priced search prices each step with one
// multiplier, and on a stack of identical layers every layer flips at the
// same price: it leaves part of the budget unused, which this spends.
#include "passes/auto_shard/Presolve.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <queue>

namespace shardc::autoshard {
namespace {

/// Bytes added over steps [first, last].
struct RangeChange {
  int first, last;
  double bytes;
};

/// A change of some groups' strategies, measured against the current plan.
struct Move {
  std::vector<std::pair<int, int>> groups; // (group, strategy)
  double cost = 0;                         // objective added
  double excess = 0;                       // bytes over the budget added, summed over steps
  double peak = 0;                         // the highest step the move touches, after it
  std::vector<RangeChange> changes;
};

class Relinker {
public:
  Relinker(const StrategyProblem &problem, double budget) : problem_(problem), budget_(budget) {
    const size_t n = problem.nodes.size();
    incident_.resize(n);
    for (size_t e = 0; e < problem.edges.size(); ++e) {
      incident_[problem.edges[e].from].push_back(static_cast<int>(e));
      if (problem.edges[e].to != problem.edges[e].from)
        incident_[problem.edges[e].to].push_back(static_cast<int>(e));
    }
    std::map<int, int> groupOfLeader;
    groupOf_.resize(n);
    for (size_t v = 0; v < n; ++v) {
      int root = static_cast<int>(v);
      while (problem.nodes[root].follows >= 0)
        root = problem.nodes[root].follows;
      auto [it, fresh] = groupOfLeader.emplace(root, static_cast<int>(groups_.size()));
      if (fresh)
        groups_.emplace_back();
      groups_[it->second].push_back(static_cast<int>(v));
      groupOf_[v] = it->second;
    }
    edgeMark_.assign(problem.edges.size(), -1);
    pending_.assign(groups_.size(), -1);
  }

  /// The plan from `cheap` toward `fits`; `fits` itself when no cheaper plan
  /// within the budget is found on the way.
  std::vector<int> relink(const std::vector<int> &cheap, const std::vector<int> &fits,
                          const std::function<bool()> &outOfTime) {
    choice_ = cheap;
    live_ = liveBytesOf(problem_, choice_);
    std::vector<std::vector<int>> blocks = blocksApart(cheap, fits);
    auto toward = [&](const std::vector<int> &block, const std::vector<int> &plan) {
      std::vector<std::pair<int, int>> groups;
      for (int g : block)
        if (choice_[groups_[g][0]] != plan[groups_[g][0]])
          groups.emplace_back(g, plan[groups_[g][0]]);
      return groups;
    };
    // Toward the plan that fits, greedily and lazily: a block's score grows
    // stale only when a neighbour moves, so the best of the queue is
    // measured again and taken if it still beats the next one.
    auto score = [](const Move &m) { return m.cost / -m.excess; };
    std::priority_queue<std::pair<double, int>, std::vector<std::pair<double, int>>, std::greater<>>
        queue;
    for (size_t b = 0; b < blocks.size(); ++b) {
      Move m = measure(toward(blocks[b], fits));
      if (m.excess < 0)
        queue.emplace(score(m), static_cast<int>(b));
    }
    while (excess() > 0 && !queue.empty() && !outOfTime()) {
      int b = queue.top().second;
      queue.pop();
      Move m = measure(toward(blocks[b], fits));
      if (m.groups.empty() || m.excess >= 0)
        continue; // moved already, or no longer helps
      if (!queue.empty() && score(m) > queue.top().first) {
        queue.emplace(score(m), b); // stale: back in line
        continue;
      }
      apply(m);
    }
    if (excess() > 0)
      return fits;
    // Then any block or single group to either plan's strategies where that
    // is cheaper and still fits.
    for (int pass = 0; pass < 8 && !outOfTime(); ++pass) {
      bool moved = false;
      auto tryMove = [&](std::vector<std::pair<int, int>> groups) {
        if (groups.empty())
          return;
        Move m = measure(std::move(groups));
        if (m.cost < 0 && m.peak <= budget_) {
          apply(m);
          moved = true;
        }
      };
      for (const std::vector<int> &block : blocks)
        for (const std::vector<int> *plan : {&cheap, &fits}) {
          tryMove(toward(block, *plan));
          if (block.size() > 1)
            for (int g : block)
              tryMove(toward({g}, *plan));
        }
      if (!moved)
        break;
    }
    return objectiveOf(problem_, choice_) < objectiveOf(problem_, fits) ? choice_ : fits;
  }

  /// From `plan`, moves of one group's strategy that lower the bytes over
  /// the budget (summed over steps) the most, the cheapest of equals, until
  /// the plan fits or no move lowers them; returns the plan reached.
  std::vector<int> descend(const std::vector<int> &plan, const std::function<bool()> &outOfTime) {
    choice_ = plan;
    live_ = liveBytesOf(problem_, choice_);
    while (excess() > 0 && !outOfTime()) {
      std::optional<Move> best;
      for (size_t g = 0; g < groups_.size(); ++g) {
        if (g % 64 == 0 && outOfTime())
          return choice_; // a scan of a long program's groups takes a while
        const int leader = groups_[g][0];
        const int strategies = static_cast<int>(problem_.nodes[leader].cost.size());
        for (int s = 0; s < strategies; ++s) {
          if (s == choice_[leader])
            continue;
          Move m = measure({{static_cast<int>(g), s}});
          if (m.excess < 0 && (!best || m.excess < best->excess ||
                               (m.excess == best->excess && m.cost < best->cost)))
            best = std::move(m);
        }
      }
      if (!best)
        break;
      apply(*best);
    }
    return choice_;
  }

private:
  /// The groups where `a` and `b` differ, in connected pieces: groups
  /// joined by an edge that costs more when its ends take strategies from
  /// different plans than when both take either plan's.
  std::vector<std::vector<int>> blocksApart(const std::vector<int> &a, const std::vector<int> &b) {
    auto differs = [&](int g) { return a[groups_[g][0]] != b[groups_[g][0]]; };
    auto couples = [&](const ProblemEdge &edge) {
      size_t k = problem_.nodes[edge.to].cost.size();
      auto at = [&](const std::vector<int> &from, const std::vector<int> &to) {
        size_t i = from[edge.from] * k + to[edge.to];
        return edge.cost[i] + (edge.memory.empty() ? 0.0 : edge.memory[i] * 1e-15);
      };
      double mixed = std::max(at(a, b), at(b, a)), consistent = std::max(at(a, a), at(b, b));
      return mixed > consistent + 1e-15;
    };
    std::vector<int> blockOf(groups_.size(), -1);
    std::vector<std::vector<int>> blocks;
    for (size_t start = 0; start < groups_.size(); ++start) {
      if (!differs(static_cast<int>(start)) || blockOf[start] >= 0)
        continue;
      std::vector<int> block{static_cast<int>(start)}, stack{static_cast<int>(start)};
      blockOf[start] = static_cast<int>(blocks.size());
      while (!stack.empty()) {
        int g = stack.back();
        stack.pop_back();
        for (int v : groups_[g])
          for (int e : incident_[v]) {
            if (!couples(problem_.edges[e]))
              continue;
            for (int end : {problem_.edges[e].from, problem_.edges[e].to}) {
              int h = groupOf_[end];
              if (blockOf[h] < 0 && differs(h)) {
                blockOf[h] = blockOf[start];
                block.push_back(h);
                stack.push_back(h);
              }
            }
          }
      }
      blocks.push_back(std::move(block));
    }
    return blocks;
  }

  double excess() const {
    double total = 0;
    for (double bytes : live_)
      total += std::max(0.0, bytes - budget_);
    return total;
  }

  /// What moving each listed group to its strategy changes.
  Move measure(std::vector<std::pair<int, int>> groups) {
    Move m;
    m.groups = std::move(groups);
    for (auto [g, strategy] : m.groups)
      pending_[g] = strategy;
    auto picked = [&](int node) {
      int p = pending_[groupOf_[node]];
      return p >= 0 ? p : choice_[node];
    };
    for (auto [g, strategy] : m.groups)
      for (int v : groups_[g]) {
        const ProblemNode &node = problem_.nodes[v];
        int before = choice_[v];
        m.cost += node.cost[strategy] - node.cost[before];
        if (!node.memory.empty())
          m.changes.push_back(
              {node.liveStart, node.liveEnd, node.memory[strategy] - node.memory[before]});
        if (!node.transient.empty()) {
          int at = transientStep(node);
          m.changes.push_back({at, at, node.transient[strategy] - node.transient[before]});
        }
        for (int e : incident_[v]) {
          if (edgeMark_[e] == stamp_)
            continue; // an edge inside the move, counted once
          edgeMark_[e] = stamp_;
          const ProblemEdge &edge = problem_.edges[e];
          size_t k = problem_.nodes[edge.to].cost.size();
          size_t now = choice_[edge.from] * k + choice_[edge.to];
          size_t next = picked(edge.from) * k + picked(edge.to);
          m.cost += edge.cost[next] - edge.cost[now];
          if (!edge.memory.empty())
            m.changes.push_back({edge.step, edge.step, edge.memory[next] - edge.memory[now]});
        }
      }
    ++stamp_;
    for (auto [g, strategy] : m.groups)
      pending_[g] = -1;
    // The steps touched, as segments of constant change (a sweep over the
    // ranges' ends): the excess and the peak there after the move.
    std::map<int, double> delta;
    for (const RangeChange &c : m.changes) {
      int first = std::max(c.first, 0), end = std::min(c.last + 1, problem_.numSteps);
      if (first < end && c.bytes != 0) {
        delta[first] += c.bytes;
        delta[end] -= c.bytes;
      }
    }
    double running = 0;
    for (auto it = delta.begin(); it != delta.end(); ++it) {
      running += it->second;
      auto next = std::next(it);
      int end = next == delta.end() ? it->first : next->first;
      for (int t = it->first; t < end; ++t) {
        double after = live_[t] + running;
        m.excess += std::max(0.0, after - budget_) - std::max(0.0, live_[t] - budget_);
        m.peak = std::max(m.peak, after);
      }
    }
    return m;
  }

  void apply(const Move &m) {
    for (auto [g, strategy] : m.groups)
      for (int v : groups_[g])
        choice_[v] = strategy;
    for (const RangeChange &c : m.changes)
      for (int t = std::max(c.first, 0); t <= c.last && t < problem_.numSteps; ++t)
        live_[t] += c.bytes;
  }

  const StrategyProblem &problem_;
  const double budget_;
  std::vector<std::vector<int>> incident_; // edges per node
  std::vector<std::vector<int>> groups_;   // nodes per group, leader first
  std::vector<int> groupOf_;
  std::vector<int> edgeMark_;
  std::vector<int> pending_; // per group: the strategy a measured move gives it
  int stamp_ = 0;
  std::vector<int> choice_;
  std::vector<double> live_;
};

} // namespace

std::vector<int> lowerPeak(const StrategyProblem &problem, const std::vector<int> &plan,
                           double target, double seconds) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  return Relinker(problem, target).descend(plan, [&] {
    return std::chrono::steady_clock::now() >= deadline;
  });
}

std::vector<int> relinkPlans(const StrategyProblem &problem, const std::vector<int> &cheap,
                             const std::vector<int> &fits, double budget, double seconds) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  return Relinker(problem, budget).relink(cheap, fits, [&] {
    return std::chrono::steady_clock::now() >= deadline;
  });
}

} // namespace shardc::autoshard
