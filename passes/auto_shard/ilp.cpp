// The strategy ILP (Alpa's formulation) built and solved with CBC's C API.
//
// 1. The reduced model (presolve.cpp): groups of a leader and its
//    followers, separable and one-sided edges folded into linear costs,
//    dominated strategies dropped, small groups eliminated.
// 2. One binary s[g][p] per alive strategy p of each group left with more
//    than one, sum_p s[g][p] = 1; groups with one strategy are constants.
// 3. Each remaining group pair's matrix gets binaries e[p][q] with
//    sum e = 1, sum_q e[p][q] <= s_u[p], sum_p e[p][q] <= s_v[q].
// 4. With a budget, the running sum of live bytes at each step where a
//    value starts, chained from step to step, is at most the budget. The
//    plan without a budget is tried first (optimal when it fits), then the
//    memory-priced search (memory_priced.cpp): its plan is CBC's cutoff, and
//    its Lagrangian bound narrows CBC's gap or proves the plan optimal. A
//    model too large for CBC to stop within half the time limit is not
//    given to CBC: the memory-priced plan is the answer.
// The model is loaded in one call (column-major); objective in
// microseconds and memory in KiB keep CBC's tolerances apart from the tiny
// values of seconds and the large ones of bytes.
#include "passes/auto_shard/Presolve.h"

#include <coin/Cbc_C_Interface.h>
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

constexpr double kTimeScale = 1e6;      // seconds -> microseconds
constexpr double kMemoryScale = 1024.0; // bytes -> KiB

/// The model in CBC's terms: columns and rows gathered, then loaded at once.
struct Model {
  Cbc_Model *cbc = Cbc_newModel();
  ReducedModel reduced;
  std::vector<int> first;     // group -> first s column; -1 when not a column
  std::vector<int> pairFirst; // r.pairs in order -> first e column
  std::vector<double> objective, upper;
  std::vector<bool> integer;
  std::vector<std::vector<std::pair<int, double>>> columnEntries; // (row, coefficient)
  std::vector<double> rowLower, rowUpper;
  int columns = 0;
  int rows = 0;

  ~Model() { Cbc_deleteModel(cbc); }
  int addColumn(double cost, bool isInteger, double up = 1) {
    objective.push_back(cost);
    upper.push_back(up);
    integer.push_back(isInteger);
    columnEntries.emplace_back();
    return columns++;
  }
  void addRow(const std::vector<int> &cols, const std::vector<double> &coefs, char sense,
              double rhs) {
    for (size_t i = 0; i < cols.size(); ++i)
      columnEntries[cols[i]].emplace_back(rows, coefs[i]);
    const double inf = std::numeric_limits<double>::max();
    rowLower.push_back(sense == 'L' ? -inf : rhs);
    rowUpper.push_back(sense == 'G' ? inf : rhs);
    ++rows;
  }
  void load() {
    std::vector<CoinBigIndex> start{0};
    std::vector<int> index;
    std::vector<double> value;
    for (const auto &entries : columnEntries) {
      for (auto [row, coef] : entries) {
        index.push_back(row);
        value.push_back(coef);
      }
      start.push_back(static_cast<CoinBigIndex>(index.size()));
    }
    std::vector<double> lower(columns, 0.0);
    Cbc_loadProblem(cbc, columns, rows, start.data(), index.data(), value.data(), lower.data(),
                    upper.data(), objective.data(), rowLower.data(), rowUpper.data());
    for (int c = 0; c < columns; ++c)
      if (integer[c])
        Cbc_setInteger(cbc, c);
  }
};

void validate(const StrategyProblem &problem) {
  for (size_t n = 0; n < problem.nodes.size(); ++n) {
    const ProblemNode &node = problem.nodes[n];
    if (node.cost.empty())
      throw std::invalid_argument("node " + std::to_string(n) + " - no strategies");
    if (!node.memory.empty() && node.memory.size() != node.cost.size())
      throw std::invalid_argument("node " + std::to_string(n) + " - memory size mismatch");
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
  }
}

/// Steps 1-3: the reduced model's groups and pairs as columns and rows.
void addStrategyColumns(const StrategyProblem &problem, Model &model) {
  model.reduced = reduceProblem(problem);
  ReducedModel &r = model.reduced;
  model.first.assign(r.groups.size(), -1);
  for (size_t g = 0; g < r.groups.size(); ++g) {
    const ReducedGroup &group = r.groups[g];
    if (group.eliminated)
      continue;
    if (group.alive.size() == 1) {
      r.constant += group.linear[0];
      continue;
    }
    model.first[g] = model.columns;
    std::vector<int> cols;
    for (double c : group.linear)
      cols.push_back(model.addColumn(c * kTimeScale, true));
    model.addRow(cols, std::vector<double>(cols.size(), 1.0), 'E', 1.0);
  }
  for (auto &[key, cost] : r.pairs) {
    int ku = static_cast<int>(r.groups[key.first].alive.size());
    int kv = static_cast<int>(r.groups[key.second].alive.size());
    int fu = model.first[key.first], fv = model.first[key.second];
    int first = model.columns;
    model.pairFirst.push_back(first);
    std::vector<int> all;
    for (double c : cost)
      all.push_back(model.addColumn(c * kTimeScale, true));
    model.addRow(all, std::vector<double>(all.size(), 1.0), 'E', 1.0);
    for (int p = 0; p < ku; ++p) {
      std::vector<int> cols{fu + p};
      std::vector<double> coefs{-1.0};
      for (int q = 0; q < kv; ++q) {
        cols.push_back(first + p * kv + q);
        coefs.push_back(1.0);
      }
      model.addRow(cols, coefs, 'L', 0.0);
    }
    for (int q = 0; q < kv; ++q) {
      std::vector<int> cols{fv + q};
      std::vector<double> coefs{-1.0};
      for (int p = 0; p < ku; ++p) {
        cols.push_back(first + p * kv + q);
        coefs.push_back(1.0);
      }
      model.addRow(cols, coefs, 'L', 0.0);
    }
  }
}

/// Step 4: the running sum M_t of live bytes at each step t where a value
/// starts, as a chain of continuous columns: M_first = the values live then,
/// M_next = M_prev + values starting - values ended in between. Each value
/// enters at most two rows, so the rows stay linear in the program's size
/// (one row summing every live value per step grew with the square: the
/// weights of a deep stack are live across most steps). M_t <= budget is the
/// columns' upper bound; with `peakColumn` >= 0, rows M_t <= P bound that
/// column instead (the smallest-peak model). With a budget no group is
/// eliminated, so every node has a group here.
void addMemoryRows(const StrategyProblem &problem, Model &model, double budget, int peakColumn) {
  const ReducedModel &r = model.reduced;
  std::vector<int> steps; // the steps with a row, in order
  {
    std::vector<bool> starts(problem.numSteps + 1, false);
    for (const ProblemNode &node : problem.nodes)
      if (!node.memory.empty() && node.liveStart >= 0 && node.liveStart < problem.numSteps)
        starts[node.liveStart] = true;
    for (int t = 0; t < problem.numSteps; ++t)
      if (starts[t])
        steps.push_back(t);
  }
  if (steps.empty())
    return;
  const size_t rows = steps.size();
  // Per row: column -> coefficient (KiB; + entering, - leaving) and the
  // bytes of values with one strategy left.
  std::vector<std::map<int, double>> delta(rows);
  std::vector<double> fixed(rows, 0.0);
  for (size_t n = 0; n < problem.nodes.size(); ++n) {
    const ProblemNode &node = problem.nodes[n];
    if (node.memory.empty())
      continue;
    size_t first = std::lower_bound(steps.begin(), steps.end(), node.liveStart) - steps.begin();
    size_t end = std::upper_bound(steps.begin(), steps.end(), node.liveEnd) - steps.begin();
    if (first >= end)
      continue; // live at no row step
    int g = r.groupOf[n];
    const ReducedGroup &group = r.groups[g];
    auto add = [&](size_t row, double sign) {
      if (row >= rows)
        return;
      if (model.first[g] < 0) {
        fixed[row] += sign * node.memory[group.alive[0]];
        return;
      }
      for (size_t p = 0; p < group.alive.size(); ++p)
        delta[row][model.first[g] + static_cast<int>(p)] +=
            sign * node.memory[group.alive[p]] / kMemoryScale;
    };
    add(first, 1.0);
    add(end, -1.0);
  }
  const double limit = peakColumn >= 0 ? 1e30 : budget / kMemoryScale;
  int previous = -1;
  double total = 0; // bytes of fixed values live, to catch an infeasible budget early
  for (size_t i = 0; i < rows; ++i) {
    total += fixed[i];
    if (peakColumn < 0 && total > budget * (1 + 1e-12)) {
      model.addRow({}, {}, 'L', -1.0); // infeasible: fixed values exceed the budget
      return;
    }
    int running = model.addColumn(0.0, false, limit);
    std::vector<int> cols{running};
    std::vector<double> coefs{1.0};
    if (previous >= 0) {
      cols.push_back(previous);
      coefs.push_back(-1.0);
    }
    for (auto [c, v] : delta[i])
      if (v != 0) {
        cols.push_back(c);
        coefs.push_back(-v);
      }
    model.addRow(cols, coefs, 'E', fixed[i] / kMemoryScale);
    if (peakColumn >= 0)
      model.addRow({running, peakColumn}, {1.0, -1.0}, 'L', 0.0);
    previous = running;
  }
}

void configure(Model &model, double seconds) {
  Cbc_setLogLevel(model.cbc, 0);
  Cbc_setMaximumSeconds(model.cbc, std::max(0.01, seconds));
  Cbc_setParameter(model.cbc, "threads", "0");
  Cbc_setParameter(model.cbc, "randomCbcSeed", "1");
  Cbc_setParameter(model.cbc, "randomSeed", "1");
  Cbc_setParameter(model.cbc, "timeMode", "elapsed");
}

std::vector<int> decode(const Model &model, const double *x) {
  const ReducedModel &r = model.reduced;
  std::vector<int> groupChoice(r.groups.size(), 0);
  for (size_t g = 0; g < r.groups.size(); ++g) {
    int first = model.first[g];
    if (first < 0)
      continue;
    int best = 0;
    for (int p = 1; p < static_cast<int>(r.groups[g].alive.size()); ++p)
      if (x[first + p] > x[first + best])
        best = p;
    groupChoice[g] = best;
  }
  return expandChoice(r, groupChoice);
}

/// The smallest peak any plan reaches: minimize P subject to M_t <= P.
double smallestPeak(const StrategyProblem &problem, double seconds, StrategySolution &out) {
  StrategyProblem noEdges = problem;
  noEdges.edges.clear();
  for (ProblemNode &node : noEdges.nodes)
    std::fill(node.cost.begin(), node.cost.end(), 0.0);
  Model peak;
  addStrategyColumns(noEdges, peak);
  if (peak.columns == 0) // dominance left one layout per value: the smallest
    return peakMemoryOf(
        problem, expandChoice(peak.reduced, std::vector<int>(peak.reduced.groups.size(), 0)));
  int column = peak.addColumn(1.0, false, 1e30);
  addMemoryRows(noEdges, peak, 0, column);
  peak.load();
  configure(peak, seconds);
  Cbc_solve(peak.cbc);
  out.variables += peak.columns;
  out.constraints += peak.rows;
  const double *x = Cbc_bestSolution(peak.cbc);
  if (!x)
    return Cbc_getBestPossibleObjValue(peak.cbc) * kMemoryScale;
  return peakMemoryOf(problem, decode(peak, x));
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

/// The largest sum over a step of the least bytes each value live there
/// can take: no plan peaks lower.
double peakLowerBound(const StrategyProblem &problem) {
  std::vector<int> least(problem.nodes.size(), 0);
  for (size_t n = 0; n < problem.nodes.size(); ++n) {
    const std::vector<double> &memory = problem.nodes[n].memory;
    if (!memory.empty())
      least[n] = static_cast<int>(std::min_element(memory.begin(), memory.end()) - memory.begin());
  }
  return peakMemoryOf(problem, least); // followers may not follow: a bound
}

/// The answer when the model is too large for CBC in the time limit: the
/// memory-priced plan (gap against its bound), a budget proven infeasible
/// by the peak's lower bound, or no plan.
void skipSolver(const StrategyProblem &problem, const MemoryPricedResult &priced,
                double rootSeconds, StrategySolution &out) {
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
  double least = peakLowerBound(problem);
  if (problem.memoryBudget && least > *problem.memoryBudget) {
    out.status = SolveStatus::Infeasible;
    out.smallestPeak = least;
    out.smallestPeakIsBound = true;
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
  MemoryPricedResult priced; // plans within the budget to start from
  if (budgeted && problem.presolve) {
    // The best plan without a budget is the best plan with it when it fits;
    // without a budget the presolve eliminates most of the model, so
    // checking first is cheap and often settles a budget that does not bind.
    StrategyProblem unbudgeted = problem;
    unbudgeted.memoryBudget.reset();
    StrategySolution free = solveStrategyProblem(unbudgeted);
    if (free.status == SolveStatus::Optimal &&
        peakMemoryOf(problem, free.choice) <= *problem.memoryBudget) {
      free.seconds = elapsed();
      return free;
    }
    out.variables = free.variables;
    out.constraints = free.constraints;
    // The memory-priced search runs before CBC, with all the time left: it
    // is a bounded number of solves of the cheap unbudgeted model.
    if (!free.choice.empty()) {
      priced = memoryPricedPlan(problem, free.choice, *problem.memoryBudget,
                                problem.timeLimitSeconds - elapsed());
      if (free.status == SolveStatus::Optimal)
        priced.bound = std::max(priced.bound, free.objective);
    }
  }
  Model model;
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
      out.smallestPeak = peak;
      return out;
    }
    out.status = SolveStatus::Optimal;
    out.objective = out.bound = objectiveOf(problem, out.choice);
    out.seconds = elapsed();
    return out;
  }

  const std::string search =
      priced.solves == 0
          ? std::string()
          : fmt::format("the memory-priced search ({} unbudgeted solves{})", priced.solves,
                        priced.stoppedByTime ? ", cut by the time limit" : "");
  if (!priced.plan.empty() && priced.bound >= priced.objective - tolerance(priced.objective)) {
    out.status = SolveStatus::Optimal; // its Lagrangian bound proves it
    out.choice = priced.plan;
    out.objective = out.bound = priced.objective;
    out.how = search + ", proven optimal by its bound";
    out.seconds = elapsed();
    return out;
  }
  const double rootSeconds = model.columns * kRootSecondsPerColumn;
  if (rootSeconds > problem.timeLimitSeconds / 2) {
    skipSolver(problem, priced, rootSeconds, out);
    out.how = (out.status == SolveStatus::NotProven ? search + "; " : std::string()) + out.how;
    out.seconds = elapsed();
    return out;
  }

  model.load();
  configure(model, problem.timeLimitSeconds - elapsed());
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
    if (finished) { // searched to the end: nothing beats the plan kept
      out.status = SolveStatus::Optimal;
      out.bound = out.objective;
    } else {
      out.status = SolveStatus::TimeLimit;
      // Before its first LP ends CBC has no bound; the search's may be known.
      double bound = Cbc_getBestPossibleObjValue(model.cbc);
      out.bound = std::isfinite(bound) && std::abs(bound) < 1e30
                      ? bound / kTimeScale + model.reduced.constant
                      : -std::numeric_limits<double>::infinity();
      out.bound = std::max(out.bound, priced.bound);
      setGap(out);
    }
  } else if (Cbc_isProvenInfeasible(model.cbc) && budgeted) {
    out.status = SolveStatus::Infeasible;
    out.smallestPeak =
        smallestPeak(problem, std::max(1.0, problem.timeLimitSeconds - elapsed()), out);
  } else {
    out.status = SolveStatus::NoSolution;
  }
  out.seconds = elapsed();
  return out;
}

} // namespace shardc::autoshard
