// Shrinking the strategy problem before the ILP, as XLA's auto-sharding does
// but exactly (the optimum is kept):
//
// 1. Groups: a leader and its followers share one choice; edges inside a
//    group add their diagonal, parallel edges between two groups are summed.
// 2. Separable matrices: M[p][q] = a[p] + b[q] (a rank-1 matrix in the
//    additive sense; e.g. a cost depending on one side only) adds a to one
//    side's costs and b to the other's, and needs no edge binaries. Every
//    matrix touching a one-strategy group is separable. With a budget, a
//    pair whose edge holds a consumer's copy (a memory term over both
//    choices) keeps its binaries unless one side has one strategy (then the
//    term becomes the other side's).
// 3. Dominated strategies: p is dropped when another strategy is no worse in
//    cost, in every entry of every incident matrix and, with a budget, in
//    every member's memory and every transient and copy term.
// 4. Without a budget: a group with no neighbour picks its cheapest
//    strategy; one with one neighbour h is folded into h's costs
//    (h[q] += min_p g[p] + M[p][q], the parameter merged into its single
//    consumer, generalized); one with two neighbours h1, h2 becomes a matrix
//    between them (N[a][b] = min_p g[p] + M1[p][a] + M2[p][b]). The argmins
//    are kept to recover its choice. Chains and residual blocks fold away.
// A work list revisits a group whenever its strategies or neighbours change.
#include "passes/auto_shard/Presolve.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>

namespace shardc::autoshard {
namespace {

constexpr double kTolerance = 1e-15; // seconds: costs this close are equal

class Reducer {
public:
  Reducer(const StrategyProblem &problem, ReducedModel &model)
      : problem_(problem), m_(model), budgeted_(problem.memoryBudget.has_value()) {}

  void groupNodes() {
    m_.groupOf.resize(problem_.nodes.size());
    std::map<int, int> groupOfLeader;
    for (size_t n = 0; n < problem_.nodes.size(); ++n) {
      int leader = static_cast<int>(n);
      while (problem_.nodes[leader].follows >= 0)
        leader = problem_.nodes[leader].follows;
      auto [it, fresh] = groupOfLeader.emplace(leader, static_cast<int>(m_.groups.size()));
      if (fresh) {
        ReducedGroup g;
        int size = static_cast<int>(problem_.nodes[leader].cost.size());
        for (int p = 0; p < size; ++p)
          g.alive.push_back(p);
        g.linear.assign(size, 0.0);
        m_.groups.push_back(std::move(g));
      }
      m_.groupOf[n] = it->second;
      ReducedGroup &g = m_.groups[it->second];
      g.members.push_back(static_cast<int>(n));
      for (size_t p = 0; p < g.linear.size(); ++p)
        g.linear[p] += problem_.nodes[n].cost[p];
    }
    for (const ProblemEdge &edge : problem_.edges) {
      int gu = m_.groupOf[edge.from], gv = m_.groupOf[edge.to];
      int kv = static_cast<int>(problem_.nodes[edge.to].cost.size());
      ReducedGroup &u = m_.groups[gu];
      if (gu == gv) {
        for (size_t p = 0; p < u.linear.size(); ++p)
          u.linear[p] += edge.cost[p * kv + p];
        continue;
      }
      int ku = static_cast<int>(u.linear.size());
      std::vector<double> &matrix = pair(gu, gv, true);
      for (int p = 0; p < ku; ++p)
        for (int q = 0; q < kv; ++q)
          matrix[gu < gv ? p * kv + q : q * ku + p] += edge.cost[p * kv + q];
    }
    if (budgeted_)
      addMemoryTerms();
  }

  void run() {
    std::deque<int> work;
    std::vector<bool> queued(m_.groups.size(), true);
    for (size_t g = 0; g < m_.groups.size(); ++g)
      work.push_back(static_cast<int>(g));
    auto requeue = [&](int g) {
      if (!queued[g] && !m_.groups[g].eliminated) {
        queued[g] = true;
        work.push_back(g);
      }
    };
    while (!work.empty()) {
      int g = work.front();
      work.pop_front();
      queued[g] = false;
      if (m_.groups[g].eliminated)
        continue;
      std::vector<int> touched;
      bool changed = foldSeparable(g, touched);
      if (problem_.presolve && !budgeted_ && m_.groups[g].neighbours.size() <= 2) {
        for (int h : m_.groups[g].neighbours)
          touched.push_back(h);
        eliminate(g);
      } else if (problem_.presolve && dropDominated(g)) {
        changed = true;
        for (int h : m_.groups[g].neighbours)
          touched.push_back(h);
      }
      if (changed && !m_.groups[g].eliminated)
        requeue(g);
      for (int h : touched)
        requeue(h);
    }
  }

private:
  int size(int g) const { return static_cast<int>(m_.groups[g].alive.size()); }
  static std::pair<int, int> key(int g, int h) { return {std::min(g, h), std::max(g, h)}; }

  std::vector<double> &pair(int g, int h, bool create) {
    auto k = key(g, h);
    auto it = m_.pairs.find(k);
    if (it == m_.pairs.end() && create) {
      it = m_.pairs.emplace(k, std::vector<double>(size(g) * size(h), 0.0)).first;
      m_.groups[g].neighbours.insert(h);
      m_.groups[h].neighbours.insert(g);
    }
    return it->second;
  }
  /// Entry (a of g, b of h) of the matrix between g and h.
  double at(const std::vector<double> &matrix, int g, int a, int h, int b) const {
    return g < h ? matrix[a * size(h) + b] : matrix[b * size(g) + a];
  }
  void removePair(int g, int h) {
    m_.pairs.erase(key(g, h));
    m_.groups[g].neighbours.erase(h);
    m_.groups[h].neighbours.erase(g);
  }

  /// The transients and edge copies as terms over the groups (original
  /// strategy indices: nothing is dropped yet).
  void addMemoryTerms() {
    termsOf_.assign(m_.groups.size(), {});
    auto add = [&](MemoryTerm term) {
      termsOf_[term.g].push_back(static_cast<int>(m_.memoryTerms.size()));
      if (term.h >= 0)
        termsOf_[term.h].push_back(static_cast<int>(m_.memoryTerms.size()));
      m_.memoryTerms.push_back(std::move(term));
    };
    for (size_t n = 0; n < problem_.nodes.size(); ++n) {
      const ProblemNode &node = problem_.nodes[n];
      if (!node.transient.empty())
        add({transientStep(node), transientStep(node), m_.groupOf[n], -1, node.transient});
    }
    for (const ProblemEdge &edge : problem_.edges) {
      if (edge.memory.empty())
        continue;
      int gu = m_.groupOf[edge.from], gv = m_.groupOf[edge.to];
      int ku = size(gu), kv = static_cast<int>(problem_.nodes[edge.to].cost.size());
      MemoryTerm term{edge.step, edge.step, std::min(gu, gv), gu == gv ? -1 : std::max(gu, gv), {}};
      if (gu == gv) {
        for (int p = 0; p < ku; ++p)
          term.bytes.push_back(edge.memory[p * kv + p]);
      } else {
        term.bytes.assign(edge.memory.size(), 0.0);
        for (int p = 0; p < ku; ++p)
          for (int q = 0; q < kv; ++q)
            term.bytes[gu < gv ? p * kv + q : q * ku + p] = edge.memory[p * kv + q];
      }
      add(std::move(term));
    }
  }

  bool hasPairTerm(int g, int h) const {
    if (termsOf_.empty())
      return false;
    for (int t : termsOf_[g])
      if (m_.memoryTerms[t].h >= 0 && (m_.memoryTerms[t].g == h || m_.memoryTerms[t].h == h))
        return true;
    return false;
  }

  /// A pair term of g and h folded with their pair (one of them has one
  /// strategy left): it becomes a term of the other group.
  void foldPairTerms(int g, int h) {
    if (termsOf_.empty())
      return;
    int keep = size(g) == 1 ? h : g, gone = keep == g ? h : g;
    std::vector<int> folded;
    for (int t : termsOf_[g]) {
      MemoryTerm &term = m_.memoryTerms[t];
      if (term.h < 0 || (term.g != h && term.h != h))
        continue;
      std::vector<double> bytes;
      for (int a = 0; a < size(keep); ++a)
        bytes.push_back(at(term.bytes, keep, a, gone, 0));
      term = MemoryTerm{term.first, term.last, keep, -1, std::move(bytes)};
      folded.push_back(t);
    }
    std::vector<int> &list = termsOf_[gone];
    list.erase(std::remove_if(list.begin(), list.end(),
                              [&](int t) {
                                return std::find(folded.begin(), folded.end(), t) != folded.end();
                              }),
               list.end());
  }

  /// A matrix between g and h without the strategies of g not in `keep`.
  std::vector<double> compact(const std::vector<double> &m, int g, int h,
                              const std::vector<int> &keep) const {
    std::vector<double> next;
    int k = size(g), kh = size(h);
    if (g < h) {
      for (int a : keep)
        next.insert(next.end(), m.begin() + a * kh, m.begin() + (a + 1) * kh);
    } else {
      for (int b = 0; b < kh; ++b)
        for (int a : keep)
          next.push_back(m[b * k + a]);
    }
    return next;
  }

  /// Step 2 on every matrix of g; the other ends go to `touched`.
  bool foldSeparable(int g, std::vector<int> &touched) {
    bool changed = false;
    std::vector<int> neighbours(m_.groups[g].neighbours.begin(), m_.groups[g].neighbours.end());
    for (int h : neighbours) {
      const std::vector<double> &m = pair(g, h, false);
      double scale = 0;
      for (double c : m)
        scale = std::max(scale, std::abs(c));
      double tolerance = 1e-12 * scale + 1e-18;
      bool separable = true;
      for (int a = 1; a < size(g) && separable; ++a)
        for (int b = 1; b < size(h) && separable; ++b)
          separable = std::abs(at(m, g, a, h, b) - at(m, g, a, h, 0) - at(m, g, 0, h, b) +
                               at(m, g, 0, h, 0)) <= tolerance;
      bool trivial = size(g) == 1 || size(h) == 1;
      if (!separable || (!trivial && (!problem_.presolve || hasPairTerm(g, h))))
        continue;
      if (trivial)
        foldPairTerms(g, h);
      ReducedGroup &gg = m_.groups[g];
      ReducedGroup &hh = m_.groups[h];
      for (int a = 0; a < size(g); ++a)
        gg.linear[a] += at(m, g, a, h, 0);
      for (int b = 0; b < size(h); ++b)
        hh.linear[b] += at(m, g, 0, h, b) - at(m, g, 0, h, 0);
      removePair(g, h);
      if (!trivial)
        ++m_.stats.separableEdges;
      touched.push_back(h);
      changed = true;
    }
    return changed;
  }

  /// Whether strategy b of g is no worse than a everywhere.
  bool noWorse(int g, int b, int a) {
    const ReducedGroup &gg = m_.groups[g];
    if (gg.linear[b] > gg.linear[a] + kTolerance)
      return false;
    for (int h : gg.neighbours) {
      const std::vector<double> &m = pair(g, h, false);
      for (int q = 0; q < size(h); ++q)
        if (at(m, g, b, h, q) > at(m, g, a, h, q) + kTolerance)
          return false;
    }
    if (budgeted_)
      for (int n : gg.members) {
        const std::vector<double> &memory = problem_.nodes[n].memory;
        if (!memory.empty() && memory[gg.alive[b]] > memory[gg.alive[a]])
          return false;
      }
    for (int t : termsOf_.empty() ? std::vector<int>() : termsOf_[g]) {
      const MemoryTerm &term = m_.memoryTerms[t];
      if (term.h < 0) {
        if (term.bytes[b] > term.bytes[a])
          return false;
        continue;
      }
      int h = term.g == g ? term.h : term.g;
      for (int q = 0; q < size(h); ++q)
        if (at(term.bytes, g, b, h, q) > at(term.bytes, g, a, h, q))
          return false;
    }
    return true;
  }

  /// Step 3; compacts the group's costs and matrices.
  bool dropDominated(int g) {
    int k = size(g);
    std::vector<bool> dropped(k, false);
    int count = 0;
    for (int a = 0; a < k; ++a)
      for (int b = 0; b < k; ++b)
        if (b != a && !dropped[b] && noWorse(g, b, a) && (b < a || !noWorse(g, a, b))) {
          dropped[a] = true;
          ++count;
          break;
        }
    if (count == 0)
      return false;
    m_.stats.dominatedStrategies += count;
    ReducedGroup &gg = m_.groups[g];
    std::vector<int> keep;
    for (int a = 0; a < k; ++a)
      if (!dropped[a])
        keep.push_back(a);
    for (int h : gg.neighbours) {
      std::vector<double> &m = pair(g, h, false);
      m = compact(m, g, h, keep);
    }
    for (int t : termsOf_.empty() ? std::vector<int>() : termsOf_[g]) {
      MemoryTerm &term = m_.memoryTerms[t];
      if (term.h < 0) {
        std::vector<double> bytes;
        for (int a : keep)
          bytes.push_back(term.bytes[a]);
        term.bytes = std::move(bytes);
      } else {
        term.bytes = compact(term.bytes, g, term.g == g ? term.h : term.g, keep);
      }
    }
    std::vector<int> alive;
    std::vector<double> linear;
    for (int a : keep) {
      alive.push_back(gg.alive[a]);
      linear.push_back(gg.linear[a]);
    }
    gg.alive = std::move(alive);
    gg.linear = std::move(linear);
    return true;
  }

  /// Step 4 for a group of at most two neighbours.
  void eliminate(int g) {
    ReducedGroup &gg = m_.groups[g];
    std::vector<int> by(gg.neighbours.begin(), gg.neighbours.end());
    Elimination e{g, {}, {}};
    const double inf = std::numeric_limits<double>::infinity();
    auto argmin = [&](auto &&extra) {
      int best = 0;
      double value = inf;
      for (int p = 0; p < size(g); ++p) {
        double v = gg.linear[p] + extra(p);
        if (v < value) {
          value = v;
          best = p;
        }
      }
      return std::make_pair(best, value);
    };
    auto originalSize = [&](int h) {
      return static_cast<int>(problem_.nodes[m_.groups[h].members[0]].cost.size());
    };
    if (by.empty()) {
      auto [p, value] = argmin([](int) { return 0.0; });
      m_.constant += value;
      e.best = {gg.alive[p]};
    } else if (by.size() == 1) {
      int h = by[0];
      const std::vector<double> &m = pair(g, h, false);
      e.by = {h};
      e.best.assign(originalSize(h), 0);
      for (int q = 0; q < size(h); ++q) {
        auto [p, value] = argmin([&](int p) { return at(m, g, p, h, q); });
        m_.groups[h].linear[q] += value;
        e.best[m_.groups[h].alive[q]] = gg.alive[p];
      }
      removePair(g, h);
    } else {
      int h1 = by[0], h2 = by[1];
      std::vector<double> m1 = pair(g, h1, false), m2 = pair(g, h2, false);
      removePair(g, h1);
      removePair(g, h2);
      std::vector<double> &n = pair(h1, h2, true); // h1 < h2: n[a * k2 + b]
      e.by = {h1, h2};
      int o2 = originalSize(h2);
      e.best.assign(originalSize(h1) * o2, 0);
      e.stride = o2;
      for (int a = 0; a < size(h1); ++a)
        for (int b = 0; b < size(h2); ++b) {
          auto [p, value] =
              argmin([&](int p) { return at(m1, g, p, h1, a) + at(m2, g, p, h2, b); });
          n[a * size(h2) + b] += value;
          e.best[m_.groups[h1].alive[a] * o2 + m_.groups[h2].alive[b]] = gg.alive[p];
        }
    }
    gg.eliminated = true;
    ++m_.stats.eliminatedGroups;
    m_.eliminations.push_back(std::move(e));
  }

  const StrategyProblem &problem_;
  ReducedModel &m_;
  bool budgeted_;
  std::vector<std::vector<int>> termsOf_; // group -> its memory terms (with a budget)
};

} // namespace

ReducedModel reduceProblem(const StrategyProblem &problem) {
  ReducedModel model;
  Reducer reducer(problem, model);
  reducer.groupNodes();
  reducer.run();
  return model;
}

std::vector<int> expandChoice(const ReducedModel &model, const std::vector<int> &groupChoice) {
  std::vector<int> original(model.groups.size(), 0);
  for (size_t g = 0; g < model.groups.size(); ++g)
    if (!model.groups[g].eliminated)
      original[g] = model.groups[g].alive[groupChoice[g]];
  for (auto it = model.eliminations.rbegin(); it != model.eliminations.rend(); ++it) {
    size_t index = 0;
    if (it->by.size() == 1)
      index = static_cast<size_t>(original[it->by[0]]);
    else if (it->by.size() == 2)
      index = static_cast<size_t>(original[it->by[0]]) * it->stride + original[it->by[1]];
    original[it->group] = it->best[index];
  }
  std::vector<int> choice(model.groupOf.size());
  for (size_t n = 0; n < choice.size(); ++n)
    choice[n] = original[model.groupOf[n]];
  return choice;
}

} // namespace shardc::autoshard
