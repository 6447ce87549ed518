// A plan without a memory budget for a model too large to leave to CBC
// alone: greedy in program order, then local search on the reduced model;
// and the lower bound of each group's and each pair's least cost, which
// proves the plan where it keeps all of them there (a program whose best plan
// computes each op its cheapest way and moves nothing between them). On 1,000
// and 2,000 ops of repeated layers the plan is CBC's optimum, found in 0.2 and
// 0.7 s; CBC took 25 and 220 s to prove it (its root LP does not look at the
// time limit).
#include "passes/auto_shard/Presolve.h"

#include <algorithm>
#include <cmath>

namespace shardc::autoshard {

namespace {

/// What one evaluation of a group's strategy beside its neighbours takes on
/// this machine (15 ns measured on the 2,000-op stack): the search's work is
/// counted in evaluations, not timed, so the same model and time limit give
/// the same plan in every build and under any load.
constexpr double kSecondsPerEvaluation = 2e-8;

} // namespace

std::vector<int> localSearchPlan(const ReducedModel &model, double seconds) {
  const double maxEvaluations = seconds / kSecondsPerEvaluation;
  double evaluations = 0;
  auto timeLeft = [&] { return evaluations < maxEvaluations; };
  const size_t n = model.groups.size();
  // Each group's pair matrices: the neighbour, and whether the group picks
  // the matrix's row (the lower group of the pair) or its column.
  struct Side {
    const std::vector<double> *cost;
    int other;
    bool row;
  };
  std::vector<std::vector<Side>> sides(n);
  for (const auto &[key, cost] : model.pairs) {
    sides[static_cast<size_t>(key.first)].push_back({&cost, key.second, true});
    sides[static_cast<size_t>(key.second)].push_back({&cost, key.first, false});
  }
  auto live = [&](size_t g) { return !model.groups[g].eliminated; };
  std::vector<int> choice(n, 0);
  std::vector<bool> chosen(n, false);
  // Strategy a of group g, its chosen neighbours as they are.
  auto costOf = [&](size_t g, int a) {
    ++evaluations;
    double c = model.groups[g].linear[static_cast<size_t>(a)];
    for (const Side &s : sides[g]) {
      const size_t other = static_cast<size_t>(s.other);
      if (!chosen[other])
        continue;
      const size_t index =
          s.row ? static_cast<size_t>(a) * model.groups[other].alive.size() + choice[other]
                : static_cast<size_t>(choice[other]) * model.groups[g].alive.size() + a;
      c += (*s.cost)[index];
    }
    return c;
  };
  auto lower = [](double c, double best) {
    return c < best - 1e-12 * std::max(1.0, std::abs(best));
  };
  // Greedy in program order (groups are numbered by their leaders) from
  // group `first` on: each group the strategy cheapest beside the groups
  // before it.
  auto greedyFrom = [&](size_t first) {
    std::fill(chosen.begin() + static_cast<std::ptrdiff_t>(first), chosen.end(), false);
    for (size_t g = first; g < n; ++g) {
      if (!live(g))
        continue;
      double best = costOf(g, 0);
      choice[g] = 0;
      for (int a = 1; a < static_cast<int>(model.groups[g].alive.size()); ++a)
        if (const double c = costOf(g, a); lower(c, best)) {
          best = c;
          choice[g] = a;
        }
      chosen[g] = true;
    }
  };
  // Iterated conditional modes: each group in turn takes its cheapest
  // strategy beside its neighbours' until none moves. Every move lowers the
  // objective, so it ends; the pass limit only bounds a long plateau walk.
  auto settle = [&] {
    constexpr int kMaxPasses = 100;
    for (int pass = 0; pass < kMaxPasses && timeLeft(); ++pass) {
      bool moved = false;
      for (size_t g = 0; g < n; ++g) {
        if (!live(g) || model.groups[g].alive.size() < 2)
          continue;
        double best = costOf(g, choice[g]);
        for (int a = 0; a < static_cast<int>(model.groups[g].alive.size()); ++a)
          if (const double c = costOf(g, a); lower(c, best)) {
            best = c;
            choice[g] = a;
            moved = true;
          }
      }
      if (!moved)
        return;
    }
  };
  auto objective = [&] {
    double total = 0;
    for (size_t g = 0; g < n; ++g)
      if (live(g))
        total += model.groups[g].linear[static_cast<size_t>(choice[g])];
    for (const auto &[key, cost] : model.pairs)
      total += cost[static_cast<size_t>(choice[static_cast<size_t>(key.first)]) *
                        model.groups[static_cast<size_t>(key.second)].alive.size() +
                    static_cast<size_t>(choice[static_cast<size_t>(key.second)])];
    return total;
  };
  greedyFrom(0);
  settle();
  // A group's choice decides those after it: a single move cannot leave a
  // layout a whole stack of layers shares (each group alone pays a reshard on
  // both sides). So each group tries its other strategies with every group
  // after it chosen again greedily, and keeps the best (then settles).
  double best = objective();
  for (size_t g = 0; g < n && timeLeft(); ++g) {
    if (!live(g) || model.groups[g].alive.size() < 2)
      continue;
    for (int a = 0; a < static_cast<int>(model.groups[g].alive.size()); ++a) {
      if (a == choice[g])
        continue;
      const std::vector<int> kept = choice;
      choice[g] = a;
      greedyFrom(g + 1);
      if (const double total = objective(); lower(total, best)) {
        best = total;
      } else {
        choice = kept;
        std::fill(chosen.begin(), chosen.end(), true);
      }
    }
  }
  std::fill(chosen.begin(), chosen.end(), true);
  settle();
  return choice;
}

double separableBound(const ReducedModel &model) {
  double bound = model.constant;
  for (const ReducedGroup &group : model.groups)
    if (!group.eliminated && group.alive.size() > 1)
      bound += *std::min_element(group.linear.begin(), group.linear.end());
  for (const auto &entry : model.pairs)
    bound += *std::min_element(entry.second.begin(), entry.second.end());
  return bound;
}

} // namespace shardc::autoshard
