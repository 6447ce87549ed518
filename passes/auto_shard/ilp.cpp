// The strategy ILP (Alpa's formulation) built and solved with CBC's C API.
//
// 1. Followers share their leader's variables: a group per leader.
// 2. One binary s[g][p] per strategy p of each group with more than one
//    strategy, sum_p s[g][p] = 1; groups with one strategy are constants.
// 3. Node costs are linear in s. An edge inside a group adds its diagonal;
//    an edge touching a one-strategy group adds a row or column of its
//    matrix; other edges (summed per group pair) get binaries e[p][q] with
//    sum e = 1, sum_q e[p][q] <= s_u[p], sum_p e[p][q] <= s_v[q].
// 4. With a budget, one row per step where a value starts to live:
//    sum over live values of memory * s <= budget.
// Objective in microseconds and memory in KiB keep CBC's tolerances apart
// from the tiny values of seconds and the large ones of bytes.
#include "passes/auto_shard/StrategyProblem.h"

#include <coin/Cbc_C_Interface.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>

namespace shardc::autoshard {
namespace {

constexpr double kTimeScale = 1e6;      // seconds -> microseconds
constexpr double kMemoryScale = 1024.0; // bytes -> KiB

struct Group {
  int size = 0;  // strategy count
  int first = 0; // first s column; -1 for a one-strategy group
  std::vector<double> linear;
};

/// The model in CBC's terms, before solving.
struct Model {
  Cbc_Model *cbc = Cbc_newModel();
  std::vector<Group> groups;
  std::vector<int> groupOf;
  double constant = 0;
  int columns = 0;
  int rows = 0;

  ~Model() { Cbc_deleteModel(cbc); }
  int addColumn(double objective, bool integer, double upper = 1) {
    Cbc_addCol(cbc, "", 0, upper, objective, integer ? 1 : 0, 0, nullptr, nullptr);
    return columns++;
  }
  void addRow(const std::vector<int> &cols, const std::vector<double> &coefs, char sense,
              double rhs) {
    Cbc_addRow(cbc, "", static_cast<int>(cols.size()), cols.data(), coefs.data(), sense, rhs);
    ++rows;
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

/// Steps 1-2: groups and their s columns with sum = 1 rows.
void addStrategyColumns(const StrategyProblem &problem, Model &model) {
  model.groupOf.resize(problem.nodes.size());
  std::map<int, int> groupOfLeader;
  for (size_t n = 0; n < problem.nodes.size(); ++n) {
    int leader = static_cast<int>(n);
    while (problem.nodes[leader].follows >= 0)
      leader = problem.nodes[leader].follows;
    auto [it, fresh] = groupOfLeader.emplace(leader, static_cast<int>(model.groups.size()));
    if (fresh) {
      Group g;
      g.size = static_cast<int>(problem.nodes[leader].cost.size());
      g.linear.assign(g.size, 0.0);
      model.groups.push_back(g);
    }
    model.groupOf[n] = it->second;
    Group &g = model.groups[it->second];
    for (int p = 0; p < g.size; ++p)
      g.linear[p] += problem.nodes[n].cost[p];
  }
}

/// Step 3: edge terms, linear where one side is fixed.
void addEdgeTerms(const StrategyProblem &problem, Model &model) {
  std::map<std::pair<int, int>, std::vector<double>> pairCosts;
  for (const ProblemEdge &edge : problem.edges) {
    int gu = model.groupOf[edge.from], gv = model.groupOf[edge.to];
    Group &u = model.groups[gu];
    Group &v = model.groups[gv];
    if (gu == gv) {
      for (int p = 0; p < u.size; ++p)
        u.linear[p] += edge.cost[p * v.size + p];
    } else if (u.size == 1) {
      for (int q = 0; q < v.size; ++q)
        v.linear[q] += edge.cost[q];
    } else if (v.size == 1) {
      for (int p = 0; p < u.size; ++p)
        u.linear[p] += edge.cost[p];
    } else {
      bool swap = gu > gv;
      auto &m = pairCosts[swap ? std::make_pair(gv, gu) : std::make_pair(gu, gv)];
      m.resize(static_cast<size_t>(u.size) * v.size, 0.0);
      for (int p = 0; p < u.size; ++p)
        for (int q = 0; q < v.size; ++q)
          m[swap ? q * u.size + p : p * v.size + q] += edge.cost[p * v.size + q];
    }
  }
  for (Group &g : model.groups) {
    if (g.size == 1) {
      model.constant += g.linear[0];
      g.first = -1;
      continue;
    }
    g.first = model.columns;
    std::vector<int> cols;
    for (int p = 0; p < g.size; ++p)
      cols.push_back(model.addColumn(g.linear[p] * kTimeScale, true));
    model.addRow(cols, std::vector<double>(cols.size(), 1.0), 'E', 1.0);
  }
  for (auto &[key, cost] : pairCosts) {
    const Group &u = model.groups[key.first];
    const Group &v = model.groups[key.second];
    auto [lo, hi] = std::minmax_element(cost.begin(), cost.end());
    if (*hi - *lo <= 1e-15) { // the same whatever is chosen
      model.constant += *lo;
      continue;
    }
    int first = model.columns;
    std::vector<int> all;
    for (double c : cost)
      all.push_back(model.addColumn(c * kTimeScale, true));
    model.addRow(all, std::vector<double>(all.size(), 1.0), 'E', 1.0);
    for (int p = 0; p < u.size; ++p) {
      std::vector<int> cols{u.first + p};
      std::vector<double> coefs{-1.0};
      for (int q = 0; q < v.size; ++q) {
        cols.push_back(first + p * v.size + q);
        coefs.push_back(1.0);
      }
      model.addRow(cols, coefs, 'L', 0.0);
    }
    for (int q = 0; q < v.size; ++q) {
      std::vector<int> cols{v.first + q};
      std::vector<double> coefs{-1.0};
      for (int p = 0; p < u.size; ++p) {
        cols.push_back(first + p * v.size + q);
        coefs.push_back(1.0);
      }
      model.addRow(cols, coefs, 'L', 0.0);
    }
  }
}

/// Step 4: one row per step where a value starts. With `peakColumn` >= 0 the
/// rows bound that column instead of the budget (the smallest-peak model).
void addMemoryRows(const StrategyProblem &problem, Model &model, double budget, int peakColumn) {
  std::vector<bool> starts(problem.numSteps + 1, false);
  for (const ProblemNode &node : problem.nodes)
    if (!node.memory.empty() && node.liveStart >= 0 && node.liveStart < problem.numSteps)
      starts[node.liveStart] = true;
  for (int t = 0; t < problem.numSteps; ++t) {
    if (!starts[t])
      continue;
    std::map<int, double> coefOf;
    double fixed = 0;
    for (size_t n = 0; n < problem.nodes.size(); ++n) {
      const ProblemNode &node = problem.nodes[n];
      if (node.memory.empty() || node.liveStart > t || node.liveEnd < t)
        continue;
      const Group &g = model.groups[model.groupOf[n]];
      if (g.first < 0) {
        fixed += node.memory[0];
        continue;
      }
      for (int p = 0; p < g.size; ++p)
        coefOf[g.first + p] += node.memory[p] / kMemoryScale;
    }
    std::vector<int> cols;
    std::vector<double> coefs;
    for (auto [c, v] : coefOf)
      if (v != 0) {
        cols.push_back(c);
        coefs.push_back(v);
      }
    if (peakColumn >= 0) {
      cols.push_back(peakColumn);
      coefs.push_back(-1.0);
      model.addRow(cols, coefs, 'L', -fixed / kMemoryScale);
    } else if (!cols.empty()) {
      model.addRow(cols, coefs, 'L', (budget - fixed) / kMemoryScale);
    } else if (fixed > budget) {
      model.addRow({}, {}, 'L', -1.0); // infeasible: fixed values exceed the budget
    }
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
  std::vector<int> choice;
  for (int g : model.groupOf) {
    const Group &group = model.groups[g];
    int best = 0;
    if (group.first >= 0)
      for (int p = 1; p < group.size; ++p)
        if (x[group.first + p] > x[group.first + best])
          best = p;
    choice.push_back(best);
  }
  return choice;
}

/// The smallest peak any plan reaches: minimize P subject to M_t <= P.
double smallestPeak(const StrategyProblem &problem, double seconds, StrategySolution &out) {
  StrategyProblem noEdges = problem;
  noEdges.edges.clear();
  for (ProblemNode &node : noEdges.nodes)
    std::fill(node.cost.begin(), node.cost.end(), 0.0);
  Model peak;
  addStrategyColumns(noEdges, peak);
  addEdgeTerms(noEdges, peak);
  int column = peak.addColumn(1.0, false, 1e30);
  addMemoryRows(noEdges, peak, 0, column);
  configure(peak, seconds);
  Cbc_solve(peak.cbc);
  out.variables += peak.columns;
  out.constraints += peak.rows;
  const double *x = Cbc_bestSolution(peak.cbc);
  if (!x)
    return Cbc_getBestPossibleObjValue(peak.cbc) * kMemoryScale;
  return peakMemoryOf(problem, decode(peak, x));
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
  Model model;
  addStrategyColumns(problem, model);
  addEdgeTerms(problem, model);
  const bool budgeted = problem.memoryBudget.has_value();
  if (budgeted)
    addMemoryRows(problem, model, *problem.memoryBudget, -1);
  out.variables = model.columns;
  out.constraints = model.rows;

  if (model.columns == 0) { // every node has one strategy
    out.choice.assign(problem.nodes.size(), 0);
    double peak = peakMemoryOf(problem, out.choice);
    if (budgeted && peak > *problem.memoryBudget) {
      out = StrategySolution{SolveStatus::Infeasible, {}, 0, 0, 0, elapsed(), 0, 0, peak};
      return out;
    }
    out.status = SolveStatus::Optimal;
    out.objective = out.bound = objectiveOf(problem, out.choice);
    out.seconds = elapsed();
    return out;
  }

  configure(model, problem.timeLimitSeconds);
  Cbc_solve(model.cbc);
  const double *x = Cbc_bestSolution(model.cbc);
  if (x) {
    out.choice = decode(model, x);
    out.objective = objectiveOf(problem, out.choice);
    if (Cbc_isProvenOptimal(model.cbc)) {
      out.status = SolveStatus::Optimal;
      out.bound = out.objective;
    } else {
      out.status = SolveStatus::TimeLimit;
      out.bound = Cbc_getBestPossibleObjValue(model.cbc) / kTimeScale + model.constant;
      out.gap =
          std::max(0.0, (out.objective - out.bound) / std::max(std::abs(out.objective), 1e-12));
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
