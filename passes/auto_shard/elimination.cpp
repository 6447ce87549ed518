// The exact optimum of a model without a budget by variable elimination
// (bucket elimination over the groups the presolve left): the presolve
// eliminates groups of at most two neighbours, which keeps every cost a
// pair matrix; here a group of any degree is eliminated into a table over
// all its neighbours, so the work grows with the largest such table (the
// model's treewidth), not with its size.
//
// 1. Order: repeatedly the group whose table (its strategies times its
//    neighbours') is smallest, the lowest number first among equals; its
//    neighbours become each other's. The tables' sizes are known before any
//    is filled: a model whose work exceeds the limit is left to CBC and the
//    local search.
// 2. Eliminate in that order: the new table holds, for every choice of the
//    neighbours, the least sum over the group's strategies of every table
//    that mentions it; its argmin is kept.
// 3. Back-substitute in reverse order.
// Worked example: a residual layer x -> f -> g -> add(x, g) leaves x, g and
// the add with three pairs (a triangle once f is folded); eliminating x makes
// a table over (g, add), the presolve's two-neighbour step; a stack of
// layers whose skip connections overlap leaves groups of three or four
// neighbours, which only this step removes.
#include "passes/auto_shard/Presolve.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace shardc::autoshard {
namespace {

/// A cost over some groups: `vars` ascending, `table` row-major over their
/// alive strategies (the last group's index varies fastest).
struct Factor {
  std::vector<int> vars;
  std::vector<double> table;
  bool used = false; // folded into a later table
};

/// What eliminating a group left for back-substitution: its best strategy
/// for every choice of `scope` (row-major, as a Factor's table).
struct Eliminated {
  int group = 0;
  std::vector<int> scope;
  std::vector<int> best;
};

/// The entries of every table kept for back-substitution, at most: 16 M
/// entries hold 200 MB (a cost and a strategy each); a model needing more
/// is left to CBC and the local search.
constexpr double kMaxStoredEntries = 16.0 * 1024 * 1024;

} // namespace

EliminationPlan eliminationPlan(const ReducedModel &model, double maxWork) {
  const size_t n = model.groups.size();
  auto live = [&](size_t g) { return !model.groups[g].eliminated; };
  auto domain = [&](int g) {
    return static_cast<double>(model.groups[static_cast<size_t>(g)].alive.size());
  };

  // Step 1: the order, on the graph of pairs, and the work it takes.
  std::vector<std::set<int>> adjacent(n);
  for (const auto &entry : model.pairs) {
    adjacent[static_cast<size_t>(entry.first.first)].insert(entry.first.second);
    adjacent[static_cast<size_t>(entry.first.second)].insert(entry.first.first);
  }
  auto tableOf = [&](int g) {
    double entries = domain(g);
    for (int h : adjacent[static_cast<size_t>(g)])
      entries *= domain(h);
    return entries;
  };
  using Key = std::pair<double, int>; // table entries, group
  std::set<Key> queue;
  std::vector<Key> keyOf(n);
  for (size_t g = 0; g < n; ++g)
    if (live(g)) {
      keyOf[g] = Key{tableOf(static_cast<int>(g)), static_cast<int>(g)};
      queue.insert(keyOf[g]);
    }
  EliminationPlan plan;
  std::vector<int> order;
  double stored = 0;
  while (!queue.empty()) {
    const auto [entries, g] = *queue.begin();
    queue.erase(queue.begin());
    // Each entry of the table sums the tables mentioning g: at most one per
    // neighbour and g's own, counted as that many additions.
    plan.work += entries * static_cast<double>(adjacent[static_cast<size_t>(g)].size() + 1);
    plan.largestTable = std::max(plan.largestTable, entries / domain(g));
    stored += entries / domain(g);
    if (plan.work > maxWork || stored > kMaxStoredEntries)
      return plan; // no choice: over the limits (the order stops here too)
    order.push_back(g);
    const std::vector<int> around(adjacent[static_cast<size_t>(g)].begin(),
                                  adjacent[static_cast<size_t>(g)].end());
    for (int h : around) {
      adjacent[static_cast<size_t>(h)].erase(g);
      for (int other : around)
        if (other != h)
          adjacent[static_cast<size_t>(h)].insert(other);
    }
    adjacent[static_cast<size_t>(g)].clear();
    // The neighbours' tables change (no other group's neighbours do).
    for (int h : around) {
      queue.erase(keyOf[static_cast<size_t>(h)]);
      keyOf[static_cast<size_t>(h)] = Key{tableOf(h), h};
      queue.insert(keyOf[static_cast<size_t>(h)]);
    }
  }

  // Step 2: the tables, each group's own and the pairs', filed by group.
  std::vector<Factor> factors;
  std::vector<std::vector<size_t>> bucket(n); // the factors mentioning each group
  auto addFactor = [&](Factor f) {
    for (int v : f.vars)
      bucket[static_cast<size_t>(v)].push_back(factors.size());
    factors.push_back(std::move(f));
  };
  for (size_t g = 0; g < n; ++g)
    if (live(g))
      // A group of one strategy is in the constant already
      // (addStrategyColumns).
      addFactor(Factor{{static_cast<int>(g)},
                       model.groups[g].alive.size() > 1 ? model.groups[g].linear
                                                        : std::vector<double>{0.0}});
  for (const auto &entry : model.pairs)
    addFactor(Factor{{entry.first.first, entry.first.second}, entry.second});
  std::vector<Eliminated> eliminated;
  eliminated.reserve(order.size());
  double constant = model.constant;
  for (int g : order) {
    std::vector<size_t> mine;
    for (size_t f : bucket[static_cast<size_t>(g)])
      if (!factors[f].used) {
        factors[f].used = true;
        mine.push_back(f);
      }
    std::vector<int> scope;
    for (size_t f : mine)
      for (int v : factors[f].vars)
        if (v != g)
          scope.push_back(v);
    std::sort(scope.begin(), scope.end());
    scope.erase(std::unique(scope.begin(), scope.end()), scope.end());
    const int k = static_cast<int>(domain(g));
    std::vector<int> sizes(scope.size());
    size_t entries = 1;
    for (size_t i = 0; i < scope.size(); ++i) {
      sizes[i] = static_cast<int>(domain(scope[i]));
      entries *= static_cast<size_t>(sizes[i]);
    }
    // Per factor: the stride of each scope position and of g in its table.
    struct Reader {
      const std::vector<double> *table;
      std::vector<size_t> stride; // by scope position (0 where absent)
      size_t gStride = 0;
    };
    std::vector<Reader> readers;
    for (size_t f : mine) {
      Reader r{&factors[f].table, std::vector<size_t>(scope.size(), 0), 0};
      size_t stride = 1;
      for (size_t i = factors[f].vars.size(); i-- > 0;) {
        const int v = factors[f].vars[i];
        if (v == g)
          r.gStride = stride;
        else
          r.stride[static_cast<size_t>(std::lower_bound(scope.begin(), scope.end(), v) -
                                       scope.begin())] = stride;
        stride *= static_cast<size_t>(domain(v));
      }
      readers.push_back(std::move(r));
    }
    Factor made{scope, std::vector<double>(entries)};
    Eliminated e{g, scope, std::vector<int>(entries)};
    std::vector<int> digit(scope.size(), 0);
    std::vector<size_t> base(readers.size(), 0);
    for (size_t at = 0; at < entries; ++at) {
      double best = std::numeric_limits<double>::infinity();
      int argmin = 0;
      for (int a = 0; a < k; ++a) {
        double sum = 0;
        for (size_t r = 0; r < readers.size(); ++r)
          sum += (*readers[r].table)[base[r] + static_cast<size_t>(a) * readers[r].gStride];
        if (sum < best) {
          best = sum;
          argmin = a;
        }
      }
      made.table[at] = best;
      e.best[at] = argmin;
      // Next choice of the scope (the last position fastest), and the
      // readers' offsets with it.
      for (size_t i = scope.size(); i-- > 0;) {
        for (size_t r = 0; r < readers.size(); ++r)
          base[r] += readers[r].stride[i];
        if (++digit[i] < sizes[i])
          break;
        for (size_t r = 0; r < readers.size(); ++r)
          base[r] -= readers[r].stride[i] * static_cast<size_t>(sizes[i]);
        digit[i] = 0;
      }
    }
    if (scope.empty())
      constant += made.table[0];
    else
      addFactor(std::move(made));
    eliminated.push_back(std::move(e));
  }

  // Step 3: each group's strategy from those of the groups in its scope,
  // all eliminated after it.
  plan.choice.assign(n, 0);
  for (auto it = eliminated.rbegin(); it != eliminated.rend(); ++it) {
    size_t at = 0;
    for (int v : it->scope)
      at = at * static_cast<size_t>(domain(v)) +
           static_cast<size_t>(plan.choice[static_cast<size_t>(v)]);
    plan.choice[static_cast<size_t>(it->group)] = it->best[at];
  }
  plan.objective = constant;
  plan.groups = static_cast<int>(order.size());
  return plan;
}

} // namespace shardc::autoshard
