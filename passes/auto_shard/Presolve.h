// The strategy problem over groups (a leader and its followers share one
// choice), shrunk before the ILP by exact reductions; private to
// passes/auto_shard/ (presolve.cpp builds and reduces it, ilp.cpp solves it).
#pragma once

#include "passes/auto_shard/StrategyProblem.h"

#include <limits>
#include <map>
#include <set>
#include <utility>
#include <vector>

namespace shardc::autoshard {

/// A leader and its followers: one choice among `alive`.
struct ReducedGroup {
  /// The original strategy indices still candidates (dominated ones dropped).
  std::vector<int> alive;
  /// Cost of each alive strategy: the members' node costs, the edges inside
  /// the group, separable edge parts and eliminated neighbours folded in.
  std::vector<double> linear;
  std::vector<int> members; // problem nodes
  std::set<int> neighbours; // groups sharing a pair matrix
  bool eliminated = false;
};

/// A group removed from the model: its best strategy (original index) for
/// every choice of the groups it was folded into (original indices, dense,
/// row-major over `by`).
struct Elimination {
  int group = 0;
  std::vector<int> by;
  std::vector<int> best;
  /// With two: the original strategy count of by[1].
  size_t stride = 0;
};

/// Bytes live over steps [first, last] that depend on one group's choice
/// (h < 0: one entry per alive strategy of g) or on two groups' (g < h: a
/// matrix over their alive strategies, as in `pairs`): the transients and
/// edge copies of a budgeted problem.
struct MemoryTerm {
  int first = 0;
  int last = 0;
  int g = 0;
  int h = -1;
  std::vector<double> bytes;
};

/// The groups, the edge cost matrices between them, and what was removed.
struct ReducedModel {
  std::vector<ReducedGroup> groups;
  std::vector<int> groupOf; // problem node -> group
  /// (lower group, higher group) -> cost[a * k_higher + b] over alive indices.
  std::map<std::pair<int, int>, std::vector<double>> pairs;
  double constant = 0;
  std::vector<Elimination> eliminations; // in the order they happened
  /// With a budget: transients and edge copies (a pair term's groups keep
  /// their pair: its matrix is not folded away).
  std::vector<MemoryTerm> memoryTerms;
  PresolveStats stats;
};

/// Groups followers with their leaders, folds edges inside a group and
/// edges touching a one-strategy group into linear costs, sums parallel
/// edges per group pair; then, when `problem.presolve` is set, applies the
/// exact reductions: separable matrices folded into both sides, dominated
/// strategies dropped (memory, transients and edge copies count when there
/// is a budget), and without a
/// budget groups with at most two neighbours eliminated into them.
ReducedModel reduceProblem(const StrategyProblem &problem);

/// The choice of every problem node (original indices) from the choice of
/// every group left in the model (indices into `alive`; ignored for
/// eliminated groups).
std::vector<int> expandChoice(const ReducedModel &model, const std::vector<int> &groupChoice);

/// A plan of the reduced model without a budget (local_search.cpp): greedy
/// in program order, then each group's other strategies tried with the
/// groups after it chosen again greedily, and iterated conditional modes
/// (each group in turn the strategy cheapest beside its neighbours') until
/// none moves; about `seconds` of work at most, counted, not timed (the
/// same plan under any load). Indices into `alive`, as expandChoice takes
/// them.
std::vector<int> localSearchPlan(const ReducedModel &model, double seconds);

/// A lower bound on the objective of every plan of `model` as
/// addStrategyColumns leaves it (one-strategy groups in its constant): the
/// constant, each group's least cost and each pair matrix's least entry.
/// Tight when a plan keeps every group and every pair of neighbours at its
/// least cost.
double separableBound(const ReducedModel &model);

/// The optimum of a model without a budget, as addStrategyColumns leaves it
/// (one-strategy groups in its constant), found by eliminating every group
/// left (elimination.cpp).
struct EliminationPlan {
  /// Indices into `alive`, as expandChoice takes them; empty when the
  /// elimination would exceed its limits (then `work` and `largestTable`
  /// are as far as its order got).
  std::vector<int> choice;
  double objective = 0;
  /// Additions its tables take, and the largest table over a group's
  /// neighbours, in entries.
  double work = 0;
  double largestTable = 1;
  /// Groups eliminated.
  int groups = 0;
};

/// Variable elimination (a dynamic program over a tree decomposition of the
/// groups' graph) in the order of smallest tables first: exact, in work
/// growing with the largest table rather than the model. No choice when the
/// order needs more than `maxWork` additions or its tables more than 16 M
/// entries (a model whose groups are densely connected).
EliminationPlan eliminationPlan(const ReducedModel &model, double maxWork);

/// What the memory-priced search found (memory_priced.cpp).
struct MemoryPricedResult {
  /// The cheapest plan found within the budget; empty when none was.
  std::vector<int> plan;
  double objective = std::numeric_limits<double>::infinity();
  /// A lower bound on the best objective within the budget (the best
  /// Lagrangian bound of the solves); -infinity when none was proven.
  double bound = -std::numeric_limits<double>::infinity();
  /// Unbudgeted solves run, and whether the time limit cut the search.
  int solves = 0;
  bool stoppedByTime = false;
  /// Times path relinking found a cheaper plan within the budget.
  int relinked = 0;
};

/// Plans of `problem` within `budget` bytes found by pricing memory into
/// the costs (multipliers on the budget rows, a Lagrangian relaxation) and
/// solving without a budget, starting from `unbudgeted` (the best plan
/// without a budget); at most 66 solves in a fixed sequence, within
/// `seconds`. Not optimal in general: CBC's cutoff, or the plan when CBC is
/// skipped.
MemoryPricedResult memoryPricedPlan(const StrategyProblem &problem,
                                    const std::vector<int> &unbudgeted, double budget,
                                    double seconds);

/// Path relinking (relink.cpp): from `cheap`, a plan over `budget`, toward
/// `fits`, a plan within it, one group of followers at a time; returns the
/// cheapest plan within the budget found on the way (`fits` when none is
/// cheaper). Stops after `seconds`.
std::vector<int> relinkPlans(const StrategyProblem &problem, const std::vector<int> &cheap,
                             const std::vector<int> &fits, double budget, double seconds);

/// Local search (relink.cpp): from `plan`, one group's strategy at a time,
/// the move lowering the bytes over `target` (summed over the steps) the
/// most, until the plan peaks within `target` or no move helps; returns the
/// plan reached. Stops after `seconds`.
std::vector<int> lowerPeak(const StrategyProblem &problem, const std::vector<int> &plan,
                           double target, double seconds);

} // namespace shardc::autoshard
