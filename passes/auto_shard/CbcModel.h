// The strategy ILP as CBC sees it (cbc_model.cpp builds it): columns and
// rows gathered, then loaded at once; private to passes/auto_shard/ (ilp.cpp
// solves it, smallest_peak.cpp minimizes the peak with it).
#pragma once

#include "passes/auto_shard/Presolve.h"

#include <coin/Cbc_C_Interface.h>

#include <limits>
#include <utility>
#include <vector>

namespace shardc::autoshard {

/// Objective in microseconds and memory in KiB keep CBC's tolerances apart
/// from the tiny values of seconds and the large ones of bytes.
constexpr double kTimeScale = 1e6;      // seconds -> microseconds
constexpr double kMemoryScale = 1024.0; // bytes -> KiB

/// The model in CBC's terms: columns and rows gathered, then loaded at once.
struct CbcModel {
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

  ~CbcModel() { Cbc_deleteModel(cbc); }
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

/// Steps 1, 3 and 4 of ilp.cpp: the reduced model's groups and pairs as columns
/// and rows.
void addStrategyColumns(const StrategyProblem &problem, CbcModel &model);

/// Step 5 of ilp.cpp: the running sums of live bytes (values, transients and
/// edge copies, the copies on the pairs' e columns), at most `budget` or,
/// with `peakColumn` >= 0, at most that column.
void addMemoryRows(const StrategyProblem &problem, CbcModel &model, double budget, int peakColumn);

/// Quiet, deterministic, within `seconds`.
void configure(CbcModel &model, double seconds);

/// The choice of every problem node from CBC's solution `x`.
std::vector<int> decode(const CbcModel &model, const double *x);

/// The largest sum over a step of the least bytes each value live there
/// can take: no plan peaks lower (smallest_peak.cpp).
double peakLowerBound(const StrategyProblem &problem);

/// The smallest peak any plan reaches (minimize P subject to M_t <= P), for
/// the error of a budget no plan meets: the peak of the smallest plan found
/// (CBC's, or `known`'s, a plan it must beat) and the largest bound known
/// (CBC's, the values' least bytes); the bound alone when no plan is known.
/// A model too large for CBC in `seconds` is not given to it. A plan within
/// `enough` ends the search before CBC (the caller wants one that fits).
/// Fills out.smallestPeak and its bound; returns the plan reaching it (or
/// `known`).
std::vector<int> findSmallestPeak(const StrategyProblem &problem, const std::vector<int> &known,
                                  double seconds, StrategySolution &out,
                                  double enough = -std::numeric_limits<double>::infinity());

} // namespace shardc::autoshard
