// Building the strategy ILP's CBC model (CbcModel.h): the groups' and
// pairs' binaries, and the memory rows as a chain of running sums.
#include "passes/auto_shard/CbcModel.h"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace shardc::autoshard {
namespace {

/// Models with fewer columns are solved without CBC's preprocessing.
constexpr int kPreprocessColumns = 2000;

} // namespace

void addStrategyColumns(const StrategyProblem &problem, CbcModel &model) {
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

/// Step 5: the running sum M_t of live bytes at each step t where a value
/// starts, as a chain of continuous columns: M_first = the values live then,
/// M_next = M_prev + values starting - values ended in between. Each value
/// enters at most two rows, so the rows stay linear in the program's size
/// (one row summing every live value per step grew with the square: the
/// weights of a deep stack are live across most steps). M_t <= budget is the
/// columns' upper bound; with `peakColumn` >= 0, rows M_t <= P bound that
/// column instead (the smallest-peak model). With a budget no group is
/// eliminated, so every node has a group here.
void addMemoryRows(const StrategyProblem &problem, CbcModel &model, double budget, int peakColumn) {
  const ReducedModel &r = model.reduced;
  std::vector<int> steps; // the steps with a row, in order
  {
    std::vector<bool> starts(problem.numSteps + 1, false);
    auto mark = [&](int step) {
      if (step >= 0 && step < problem.numSteps)
        starts[step] = true;
    };
    for (const ProblemNode &node : problem.nodes)
      if (!node.memory.empty())
        mark(node.liveStart);
    for (const MemoryTerm &term : r.memoryTerms)
      mark(term.first);
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
  std::map<std::pair<int, int>, int> pairColumn; // pair -> its first e column
  {
    size_t i = 0;
    for (const auto &entry : r.pairs)
      pairColumn[entry.first] = model.pairFirst[i++];
  }
  for (const MemoryTerm &term : r.memoryTerms) {
    size_t first = std::lower_bound(steps.begin(), steps.end(), term.first) - steps.begin();
    size_t end = std::upper_bound(steps.begin(), steps.end(), term.last) - steps.begin();
    if (first >= end)
      continue;
    int column = -1; // the first column the bytes apply to, in order
    if (term.h >= 0) {
      auto it = pairColumn.find({term.g, term.h});
      if (it == pairColumn.end())
        throw std::logic_error("auto-shard - a memory term's pair has no columns");
      column = it->second;
    } else {
      column = model.first[term.g];
    }
    const std::vector<double> &bytes = term.bytes;
    for (auto [row, sign] : {std::pair<size_t, double>{first, 1.0}, {end, -1.0}}) {
      if (row >= rows)
        continue;
      if (column < 0) {
        fixed[row] += sign * bytes[0];
        continue;
      }
      for (size_t i = 0; i < bytes.size(); ++i)
        if (bytes[i] != 0)
          delta[row][column + static_cast<int>(i)] += sign * bytes[i] / kMemoryScale;
    }
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

void configure(CbcModel &model, double seconds) {
  Cbc_setLogLevel(model.cbc, 0);
  Cbc_setMaximumSeconds(model.cbc, std::max(0.01, seconds));
  Cbc_setParameter(model.cbc, "threads", "0");
  Cbc_setParameter(model.cbc, "randomCbcSeed", "1");
  Cbc_setParameter(model.cbc, "randomSeed", "1");
  Cbc_setParameter(model.cbc, "timeMode", "elapsed");
  // CBC's primal heuristics (RINS and others searching sub-MIPs around an
  // incumbent) run to their end before CBC looks at its time limit again:
  // the 1,000-op stack's budgeted solve ran 51 s on a 30 s limit with them,
  // 30.5 s without, with the same plan (the memory-priced search's plan is
  // the cutoff, branch and bound finds the better ones).
  Cbc_setParameter(model.cbc, "heuristicsOnOff", "off");
  // CBC 2.10's integer preprocessing loses the optimum of some budgeted
  // models (a chain of running sums: on a 6-binary model it returned a
  // plan 17% worse as optimal; tests/unit/auto_shard_presolve_test.cpp,
  // seed 404). It is also what lets CBC prove large budgeted models in
  // time (a 200-op stack: 2 s with it, the 30 s limit without), so it is
  // off only for small models, which CBC searches to the end quickly.
  if (model.columns < kPreprocessColumns)
    Cbc_setParameter(model.cbc, "preprocess", "off");
}

std::vector<int> decode(const CbcModel &model, const double *x) {
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

} // namespace shardc::autoshard
