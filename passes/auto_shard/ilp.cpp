// The strategy ILP (Alpa's formulation) built and solved with CBC's C API.
//
// 1. The reduced model (presolve.cpp): groups of a leader and its
//    followers, separable and one-sided edges folded into linear costs,
//    dominated strategies dropped, small groups eliminated.
// 2. Without a budget, the groups left are eliminated exactly when their
//    tables are small enough (elimination.cpp): the optimum, without CBC.
// 3. One binary s[g][p] per alive strategy p of each group left with more
//    than one, sum_p s[g][p] = 1; groups with one strategy are constants.
// 4. Each remaining group pair's matrix gets binaries e[p][q] with
//    sum e = 1, sum_q e[p][q] <= s_u[p], sum_p e[p][q] <= s_v[q].
// 5. With a budget, the running sum of live bytes at each step where a
//    value starts (or a transient or edge copy is live), chained from step
//    to step, is at most the budget; an edge's copy is on its e columns. The
//    plan without a budget is tried first (optimal when it fits), then the
//    memory-priced search (memory_priced.cpp): its plan is CBC's cutoff, and
//    its Lagrangian bound narrows CBC's gap or proves the plan optimal. A
//    model too large for CBC to stop within half the time limit is not
//    given to CBC: the memory-priced plan is the answer (without a budget,
//    a local search's, local_search.cpp).
// The model is built in cbc_model.cpp and loaded in one call.
#include "passes/auto_shard/CbcModel.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>

namespace shardc::autoshard {
namespace {

void validate(const StrategyProblem &problem) {
  for (size_t n = 0; n < problem.nodes.size(); ++n) {
    const ProblemNode &node = problem.nodes[n];
    if (node.cost.empty())
      throw std::invalid_argument("node " + std::to_string(n) + " - no strategies");
    if (!node.memory.empty() && node.memory.size() != node.cost.size())
      throw std::invalid_argument("node " + std::to_string(n) + " - memory size mismatch");
    if (!node.transient.empty() && node.transient.size() != node.cost.size())
      throw std::invalid_argument("node " + std::to_string(n) + " - transient size mismatch");
    if (node.follows >= static_cast<int>(n) ||
        (node.follows >= 0 && problem.nodes[node.follows].cost.size() != node.cost.size()))
      throw std::invalid_argument("node " + std::to_string(n) + " - bad leader");
  }
  for (const ProblemEdge &edge : problem.edges) {
    if (edge.from < 0 || edge.to < 0 || edge.from >= static_cast<int>(problem.nodes.size()) ||
        edge.to >= static_cast<int>(problem.nodes.size()) ||
        edge.cost.size() !=
            problem.nodes[edge.from].cost.size() * problem.nodes[edge.to].cost.size())
      throw std::invalid_argument("edge - bad endpoints or cost matrix size");
    if (!edge.memory.empty() && edge.memory.size() != edge.cost.size())
      throw std::invalid_argument("edge - memory matrix size mismatch");
  }
}

/// CBC's root processing (the LP, a cut pass) runs to its end before CBC
/// first looks at its time limit, and grows with the model: about 17 us of
/// CPU per column on this machine (the 1,000-op stack's budgeted model,
/// 178,772 columns: 3 s), estimated with room for a loaded machine. A model
/// whose estimate exceeds half the time limit is not given to CBC (the
/// other half is for the memory-priced search before it and the search for
/// a better plan after its root), so the solve ends near its limit. The
/// decision depends only on the model and the limit, not on the clock, so
/// the same input gets the same plan.
constexpr double kRootSecondsPerColumn = 3e-5;
/// From this root estimate on (about 33,000 columns), a model without a
/// budget gets a local search's plan before CBC (local_search.cpp), its
/// cutoff and the answer when CBC is skipped: CBC took 25 s to prove the
/// optimum of 1,000 ops of repeated layers (114,946 columns, estimated 3.4 s)
/// and 220 s for 2,000 (6.9 s), where the search finds the same plan in 0.2
/// and 0.7 s.
constexpr double kLocalSearchRootSeconds = 1.0;
/// The root estimate per column of such a model, which has the local
/// search's plan to fall back on: their LPs are degenerate (many layouts of
/// equal cost), and CBC's whole solve of the residual stacks took 1.8e-4 to
/// 9.6e-4 s per column (57,922 columns 13.4 s, 114,946 columns 22 s on a
/// 10 s limit, 228,994 columns 220 s on a 30 s limit), where the per-column
/// estimate above gave 1.7, 3.4 and 6.9 s. From about 75,000 columns on a
/// 30 s limit, the search's plan is the answer.
constexpr double kDegenerateRootSecondsPerColumn = 2e-4;

/// What one addition of variable elimination's tables takes (counted, not
/// timed: the same model and limit give the same plan under any load).
constexpr double kSecondsPerAddition = 2e-9;

double tolerance(double objective) { return 1e-9 * std::max(std::abs(objective), 1e-12); }

void setGap(StrategySolution &out) {
  out.boundKnown = std::isfinite(out.bound);
  if (!out.boundKnown) {
    out.gap = 0;
    return;
  }
  out.gap = std::max(0.0, (out.objective - out.bound) / std::max(std::abs(out.objective), 1e-12));
  if (out.objective - out.bound <= tolerance(out.objective))
    out.status = SolveStatus::Optimal;
}

/// The answer when the model is too large for CBC in the time limit: the
/// memory-priced plan (gap against its bound), a budget proven infeasible
/// by the peak's lower bound, or no plan.
void skipSolver(const StrategyProblem &problem, const MemoryPricedResult &priced,
                const std::vector<int> &known, double rootSeconds, StrategySolution &out) {
  out.how = fmt::format("CBC skipped: its model needs about {:.1f} s before it can stop, over half "
                        "the time limit ({} s)",
                        rootSeconds, problem.timeLimitSeconds);
  if (!priced.plan.empty()) {
    out.status = SolveStatus::NotProven;
    out.choice = priced.plan;
    out.objective = priced.objective;
    out.bound = priced.bound;
    setGap(out);
    return;
  }
  if (problem.memoryBudget && peakLowerBound(problem) > *problem.memoryBudget) {
    out.status = SolveStatus::Infeasible;
    findSmallestPeak(problem, known, 0, out); // no time for CBC: `known` and the bound
    return;
  }
  out.status = SolveStatus::NoSolution;
}

} // namespace

const char *solveStatusName(SolveStatus status) {
  switch (status) {
  case SolveStatus::Optimal:
    return "optimal";
  case SolveStatus::TimeLimit:
    return "stopped at the time limit";
  case SolveStatus::WithinGap:
    return "within the gap tolerance";
  case SolveStatus::Infeasible:
    return "infeasible";
  case SolveStatus::NoSolution:
    return "no solution found";
  case SolveStatus::NotProven:
    return "not proven optimal";
  }
  return "unknown";
}

StrategySolution solveStrategyProblem(const StrategyProblem &problem) {
  validate(problem);
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  StrategySolution out;
  const bool budgeted = problem.memoryBudget.has_value();
  MemoryPricedResult priced;         // plans within the budget to start from
  bool pricedFromPeakSearch = false; // priced.plan came from findSmallestPeak
  bool freeFits = false;             // priced.plan is the unproven plan without a budget
  std::vector<int> known;            // a plan, for the smallest peak when none fits
  if (budgeted && problem.presolve) {
    // The best plan without a budget is the best plan with it when it fits;
    // without a budget the presolve eliminates most of the model, so
    // checking first is cheap and often settles a budget that does not bind.
    StrategyProblem unbudgeted = problem;
    unbudgeted.memoryBudget.reset();
    StrategySolution free = solveStrategyProblem(unbudgeted);
    if ((free.status == SolveStatus::Optimal || free.status == SolveStatus::WithinGap) &&
        peakMemoryOf(problem, free.choice) <= *problem.memoryBudget) {
      free.seconds = elapsed();
      return free;
    }
    out.variables = free.variables;
    out.constraints = free.constraints;
    known = free.choice;
    if (peakLowerBound(problem) > *problem.memoryBudget) {
      // No plan fits (the values alone exceed the budget at some step):
      // all the time goes to the smallest peak, for the error.
      out.status = SolveStatus::Infeasible;
      findSmallestPeak(problem, known, problem.timeLimitSeconds - elapsed(), out);
      out.seconds = elapsed();
      return out;
    }
    // The memory-priced search runs before CBC, with all the time left: it
    // is a bounded number of solves of the cheap unbudgeted model.
    if (!free.choice.empty()) {
      priced = memoryPricedPlan(problem, free.choice, *problem.memoryBudget,
                                problem.timeLimitSeconds - elapsed());
      if (free.status == SolveStatus::Optimal)
        priced.bound = std::max(priced.bound, free.objective);
      // Not proven (CBC skipped on a large model), the plan without a budget
      // may still fit and be the cheapest found.
      const double freeObjective = objectiveOf(problem, free.choice);
      if (peakMemoryOf(problem, free.choice) <= *problem.memoryBudget &&
          (priced.plan.empty() || freeObjective < priced.objective)) {
        priced.plan = free.choice;
        priced.objective = freeObjective;
        freeFits = true;
      }
    }
    if (priced.plan.empty() && !known.empty()) {
      // No plan within the budget yet: the budget is tight or none fits.
      // The search for the smallest peak settles which, with half the time
      // left (a plan within the budget becomes CBC's cutoff; a bound over it
      // proves none fits); CBC alone, from no plan, could spend the whole
      // limit finding none.
      StrategySolution smallest;
      std::vector<int> plan =
          findSmallestPeak(problem, known, (problem.timeLimitSeconds - elapsed()) / 2, smallest,
                           *problem.memoryBudget);
      if (!plan.empty() && peakMemoryOf(problem, plan) <= *problem.memoryBudget) {
        // Found for its peak, not its cost: relinked toward the plan without
        // a budget where that still fits.
        plan = relinkPlans(problem, known, plan, *problem.memoryBudget,
                           (problem.timeLimitSeconds - elapsed()) / 4);
        priced.plan = plan;
        priced.objective = objectiveOf(problem, plan);
        pricedFromPeakSearch = true;
      } else if (smallest.smallestPeakBound > *problem.memoryBudget) {
        // None fits: the smallest peak for the error, from the best plan found.
        out.status = SolveStatus::Infeasible;
        out.variables += smallest.variables;
        out.constraints += smallest.constraints;
        findSmallestPeak(problem, plan.empty() ? known : plan, problem.timeLimitSeconds - elapsed(),
                         out);
        out.seconds = elapsed();
        return out;
      }
    }
  }
  CbcModel model;
  addStrategyColumns(problem, model);
  out.presolve = model.reduced.stats;
  const int strategyColumns = model.columns; // the memory rows add continuous ones
  if (budgeted)
    addMemoryRows(problem, model, *problem.memoryBudget, -1);
  out.variables += model.columns;
  out.constraints += model.rows;

  if (strategyColumns == 0) { // every group has one strategy left
    out.choice = expandChoice(model.reduced, std::vector<int>(model.reduced.groups.size(), 0));
    double peak = peakMemoryOf(problem, out.choice);
    if (budgeted && peak > *problem.memoryBudget) {
      out.status = SolveStatus::Infeasible;
      out.choice.clear();
      out.seconds = elapsed();
      out.smallestPeak = out.smallestPeakBound = peak;
      return out;
    }
    out.status = SolveStatus::Optimal;
    out.objective = out.bound = objectiveOf(problem, out.choice);
    out.seconds = elapsed();
    return out;
  }

  std::string eliminationSkipped; // why the exact elimination did not answer
  if (!budgeted && problem.presolve) {
    // Exact when the groups' graph is thin enough (its tables within the
    // work allowed): no LP, no search.
    const double maxWork = problem.timeLimitSeconds / 4 / kSecondsPerAddition;
    EliminationPlan exact = eliminationPlan(model.reduced, maxWork);
    if (!exact.choice.empty()) {
      out.choice = expandChoice(model.reduced, exact.choice);
      out.status = SolveStatus::Optimal;
      out.objective = out.bound = objectiveOf(problem, out.choice);
      out.how = fmt::format("variable elimination of the {} groups the presolve left (largest "
                            "table {:.0f} entries)",
                            exact.groups, exact.largestTable);
      out.seconds = elapsed();
      return out;
    }
    eliminationSkipped =
        exact.work > maxWork
            ? fmt::format("variable elimination skipped: its tables need over a quarter of the "
                          "time limit (the largest so far {:.0f} entries)",
                          exact.largestTable)
            : "variable elimination skipped: its tables need over 16 M entries of memory";
  }
  std::string search =
      priced.solves == 0
          ? std::string()
          : fmt::format("the memory-priced search ({} unbudgeted solves{}{})", priced.solves,
                        priced.relinked > 0 ? ", then path relinking" : "",
                        priced.stoppedByTime ? ", cut by the time limit" : "");
  if (freeFits)
    search = "the plan found without a budget, which fits it" +
             (search.empty() ? std::string() : "; " + search + " found none cheaper");
  if (pricedFromPeakSearch)
    search = fmt::format("the search for a small peak ({}found no plan within the budget; "
                         "the local search lowering the peak did, then path relinking)",
                         search.empty() ? "" : search + " ");
  const double cbcRoot = model.columns * kRootSecondsPerColumn;
  const bool localSearched =
      !budgeted && (cbcRoot >= kLocalSearchRootSeconds || cbcRoot > problem.timeLimitSeconds / 2);
  if (localSearched) {
    // A large model, or one CBC cannot take within the limit: a local
    // search's plan first, proven optimal when its groups and pairs of
    // neighbours are all at their least cost; else CBC's cutoff, and the
    // answer when CBC is skipped. (Small models go to CBC alone: it proves
    // them quickly, and keeps their plans as they were.)
    priced.plan =
        expandChoice(model.reduced, localSearchPlan(model.reduced, problem.timeLimitSeconds / 4));
    priced.objective = objectiveOf(problem, priced.plan);
    priced.bound = separableBound(model.reduced);
    search = "a local search (greedy in program order, redone from each group's other "
             "strategies; bound: each group's and each pair's least cost); " +
             eliminationSkipped;
  }
  if (!priced.plan.empty() && priced.bound >= priced.objective - tolerance(priced.objective)) {
    out.status = SolveStatus::Optimal; // its Lagrangian bound proves it
    out.choice = priced.plan;
    out.objective = out.bound = priced.objective;
    out.how = search + ", proven optimal by its bound";
    out.seconds = elapsed();
    return out;
  }
  if (!priced.plan.empty() && problem.relativeGap > 0 &&
      priced.objective - priced.bound <= problem.relativeGap * std::abs(priced.objective)) {
    out.status = SolveStatus::WithinGap; // close enough by its bound: CBC not needed
    out.choice = priced.plan;
    out.objective = priced.objective;
    out.bound = priced.bound;
    setGap(out);
    out.how = search + ", within the gap tolerance by its bound";
    out.seconds = elapsed();
    return out;
  }
  const double rootSeconds =
      model.columns * (localSearched ? kDegenerateRootSecondsPerColumn : kRootSecondsPerColumn);
  if (rootSeconds > problem.timeLimitSeconds / 2) {
    skipSolver(problem, priced, known, rootSeconds, out);
    out.how = (out.status == SolveStatus::NotProven ? search + "; " : std::string()) + out.how;
    out.seconds = elapsed();
    return out;
  }

  model.load();
  configure(model, problem.timeLimitSeconds - elapsed());
  Cbc_setAllowableFractionGap(model.cbc, problem.relativeGap);
  // The memory-priced plan is CBC's cutoff rather than its first solution:
  // CBC would search a sub-MIP around a first solution before it first
  // looks at its time limit (on the 1,000-op stack, 8 s past a 12 s limit).
  // Nodes that cannot beat the plan are cut; a search that ends without a
  // plan proves it optimal.
  if (!priced.plan.empty())
    Cbc_setCutoff(model.cbc, (priced.objective - model.reduced.constant) * kTimeScale +
                                 tolerance(priced.objective) * kTimeScale);
  Cbc_solve(model.cbc);
  const double *x = Cbc_bestSolution(model.cbc);
  const bool finished = Cbc_status(model.cbc) == 0;
  if (x || !priced.plan.empty()) {
    out.choice = x ? decode(model, x) : priced.plan;
    out.objective = objectiveOf(problem, out.choice);
    if (!priced.plan.empty() && priced.objective <= out.objective) {
      out.choice = priced.plan;
      out.objective = priced.objective;
      out.how = search + (finished ? ", proven optimal by CBC" : "; CBC found no better plan");
    }
    const bool keptPriced = !out.how.empty(); // the search's plan, not CBC's
    // CBC's bound, where it has one (before its first LP ends it has none).
    const double cbcBound = Cbc_getBestPossibleObjValue(model.cbc);
    const bool cbcBoundKnown = std::isfinite(cbcBound) && std::abs(cbcBound) < 1e30;
    const double bound = cbcBoundKnown ? cbcBound / kTimeScale + model.reduced.constant
                                       : -std::numeric_limits<double>::infinity();
    // Without a plan of its own CBC searched to the end under the cutoff:
    // that proves the search's plan. With one, a finished search may have
    // stopped at the gap tolerance.
    if (finished && x && problem.relativeGap > 0 && cbcBoundKnown &&
        out.objective - bound > tolerance(out.objective)) {
      // Stopped by the gap tolerance: nothing beats the plan by more.
      out.status = SolveStatus::WithinGap;
      out.bound = std::max(bound, priced.bound);
      setGap(out);
      if (keptPriced)
        out.how = search + ", within the gap tolerance by CBC";
    } else if (finished) { // searched to the end: nothing beats the plan kept
      out.status = SolveStatus::Optimal;
      out.bound = out.objective;
    } else {
      out.status = SolveStatus::TimeLimit;
      out.bound = std::max(bound, priced.bound); // the search's may be known
      setGap(out);
    }
  } else if (Cbc_isProvenInfeasible(model.cbc) && budgeted) {
    out.status = SolveStatus::Infeasible;
    findSmallestPeak(problem, known, std::max(1.0, problem.timeLimitSeconds - elapsed()), out);
  } else {
    out.status = SolveStatus::NoSolution;
  }
  out.seconds = elapsed();
  return out;
}

} // namespace shardc::autoshard
