// The smallest peak any plan reaches, for the error of a memory budget no
// plan meets (and as a way to find a plan within a tight one): a plan of
// small peak found cheaply, lowered by a local search and by bisection with
// the memory-priced search, then CBC minimizing the peak P subject to
// M_t <= P, with the best plan's peak as its cutoff.
#include "passes/auto_shard/CbcModel.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace shardc::autoshard {
namespace {

/// CBC's root estimate (as ilp.cpp's) for the model minimizing the peak
/// (no costs but the peak's: a degenerate LP), from its strategy columns:
/// the 1,000-op stack's, 190,092 columns, spent 160 s in its root LP on a
/// 30 s limit (CLP does not look at the limit there);
/// examples/auto_transformer.shd's, 61,312 columns, about 11 s for the
/// whole search.
constexpr double kPeakRootSecondsPerColumn = 2e-4;
/// Stops the search for the smallest peak within 0.01% of it: the peak is
/// for the error message, and proving the last bytes took a 1,000-op model
/// the whole time limit.
constexpr double kPeakGap = 1e-4;
/// Rounds of the local search lowering the peak, each starting from the
/// plan the last one reached.
constexpr int kDescentRounds = 64;

} // namespace

double peakLowerBound(const StrategyProblem &problem) {
  // Values only: transients and copies under these choices need not be
  // their least, and leaving them out keeps the bound.
  StrategyProblem values = problem;
  values.edges.clear();
  std::vector<int> least(problem.nodes.size(), 0);
  for (size_t n = 0; n < problem.nodes.size(); ++n) {
    values.nodes[n].transient.clear();
    const std::vector<double> &memory = problem.nodes[n].memory;
    if (!memory.empty())
      least[n] = static_cast<int>(std::min_element(memory.begin(), memory.end()) - memory.begin());
  }
  return peakMemoryOf(values, least); // followers may not follow: a bound
}

std::vector<int> findSmallestPeak(const StrategyProblem &problem, const std::vector<int> &known,
                                  double seconds, StrategySolution &out, double enough) {
  const auto start = std::chrono::steady_clock::now();
  auto left = [&] {
    return seconds -
           std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  auto leftBeforeCbc = [&] { return left() - seconds / 2; }; // the other half is CBC's
  std::vector<int> bestPlan = known;
  double best =
      known.empty() ? std::numeric_limits<double>::infinity() : peakMemoryOf(problem, known);
  auto consider = [&](const std::vector<int> &plan) {
    if (plan.empty())
      return;
    double peak = peakMemoryOf(problem, plan);
    if (peak < best) {
      best = peak;
      bestPlan = plan;
    }
  };
  double floor = peakLowerBound(problem);
  if (problem.presolve && seconds > 0) {
    // A plan of small peak, cheaply: the one holding the least bytes summed
    // over the steps (each value's bytes times its steps live, transients
    // and copies at theirs), solved without a budget, which the presolve
    // mostly eliminates. CBC then has only to beat it.
    StrategyProblem area = problem;
    area.memoryBudget.reset();
    area.relativeGap = 0;
    area.timeLimitSeconds = seconds / 4;
    for (ProblemNode &node : area.nodes) {
      double steps = std::max(0, node.liveEnd - node.liveStart + 1);
      for (size_t p = 0; p < node.cost.size(); ++p)
        node.cost[p] = (p < node.memory.size() ? node.memory[p] * steps : 0.0) +
                       (p < node.transient.size() ? node.transient[p] : 0.0);
    }
    for (ProblemEdge &edge : area.edges)
      for (size_t i = 0; i < edge.cost.size(); ++i)
        edge.cost[i] = i < edge.memory.size() ? edge.memory[i] : 0.0;
    StrategySolution small = solveStrategyProblem(area);
    std::vector<int> from = known.empty() ? small.choice : known;
    consider(small.choice);
    // From the best plan, a local search (lowerPeak): aiming at `enough`,
    // or at a byte under the peak reached, round after round. The searches
    // below miss what one group's move can mend: the memory-priced search
    // found nothing under 128000 bytes on examples/auto_transformer.shd and
    // CBC needed 11 s to find 127232; this takes 128000 to 127232 in 0.05 s.
    auto descend = [&] {
      for (int round = 0; round < kDescentRounds && std::isfinite(best) && best > enough &&
                          best - floor > kPeakGap * best;
           ++round) {
        const double halfLeft = leftBeforeCbc();
        if (halfLeft <= 0)
          break;
        double before = best;
        consider(lowerPeak(problem, bestPlan, std::isfinite(enough) ? enough : best - 1, halfLeft));
        if (best >= before)
          break;
      }
    };
    descend();
    // Then smaller peaks by bisection between the bound and the best so
    // far, each budget tried by the memory-priced search (cheap solves
    // without a budget); half the time at most.
    double low = floor;
    for (int round = 0; round < 8 && !from.empty() && std::isfinite(best) &&
                        best - low > kPeakGap * best && best > enough;
         ++round) {
      const double halfLeft = leftBeforeCbc();
      if (halfLeft <= 0)
        break;
      double budget = std::floor((low + best) / 2);
      MemoryPricedResult fit = memoryPricedPlan(problem, from, budget, halfLeft);
      if (fit.plan.empty())
        low = budget;
      else
        consider(fit.plan);
    }
    descend(); // from a plan the bisection found
  }
  StrategyProblem noEdges = problem; // no costs: only the edges' copies count
  for (ProblemEdge &edge : noEdges.edges)
    std::fill(edge.cost.begin(), edge.cost.end(), 0.0);
  for (ProblemNode &node : noEdges.nodes)
    std::fill(node.cost.begin(), node.cost.end(), 0.0);
  CbcModel peak;
  addStrategyColumns(noEdges, peak);
  if (peak.columns == 0) { // dominance left one layout per value: the smallest
    consider(expandChoice(peak.reduced, std::vector<int>(peak.reduced.groups.size(), 0)));
    floor = best;
  } else if (best > enough && peak.columns * kPeakRootSecondsPerColumn <= left() / 2) {
    int column = peak.addColumn(1.0, false, 1e30);
    addMemoryRows(noEdges, peak, 0, column);
    out.variables += peak.columns;
    out.constraints += peak.rows;
    peak.load();
    configure(peak, left());
    Cbc_setAllowableFractionGap(peak.cbc, kPeakGap);
    // Only plans below the best known are searched. Looking for a plan
    // within `enough`, the search still minimizes the peak: with `enough` as
    // the cutoff and CBC stopping at its first plan, it found none in 12 s
    // on examples/auto_transformer.shd at 48 bytes over the smallest peak,
    // where minimizing found and proved the smallest in 11 s.
    const double cutoff = best / kMemoryScale;
    if (std::isfinite(cutoff))
      Cbc_setCutoff(peak.cbc, cutoff);
    Cbc_solve(peak.cbc);
    const double *x = Cbc_bestSolution(peak.cbc);
    if (x)
      consider(decode(peak, x));
    const double bound = Cbc_getBestPossibleObjValue(peak.cbc) * kMemoryScale;
    if (Cbc_status(peak.cbc) == 0 && !x && std::isfinite(cutoff))
      floor = std::max(floor, std::min(best, cutoff * kMemoryScale)); // nothing under it
    else if (std::isfinite(bound) && std::abs(bound) < 1e30 * kMemoryScale)
      floor = std::max(floor, bound);
  }
  if (std::isfinite(best)) {
    out.smallestPeak = best;
    out.smallestPeakBound = std::min(floor, best);
  } else {
    out.smallestPeak = out.smallestPeakBound = floor;
    out.smallestPeakIsBound = true;
  }
  return bestPlan;
}

} // namespace shardc::autoshard
