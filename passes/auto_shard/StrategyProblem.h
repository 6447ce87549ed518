// The strategy-selection problem of auto-sharding, apart from the IR: nodes
// with per-strategy costs and memory, edges with cost matrices, live ranges
// and a memory budget; solved exactly as an integer linear program with CBC
// (Alpa's formulation, ../shared/DESIGN.md "v1 design facts").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace shardc::autoshard {

/// One node: an op (or a parameter) that must pick one of its strategies.
struct ProblemNode {
  /// Cost of each strategy (seconds): compute plus the node's own
  /// communication (e.g. the all_reduce of a partial result).
  std::vector<double> cost;
  /// Bytes per device the node's value occupies under each strategy (empty:
  /// the node holds no memory).
  std::vector<double> memory;
  /// Live range of the node's value in steps of program order, inclusive:
  /// from the step that defines it to the step of its last use.
  int liveStart = 0;
  int liveEnd = 0;
  /// When >= 0, the node's strategy must be the same index as this node's
  /// (a follower: elementwise chains, reshapes). The leader comes first and
  /// has as many strategies.
  int follows = -1;
  /// Bytes per device the node needs only while its op runs, at `step`, per
  /// strategy (empty: none): the unreduced result before its reduction and
  /// the collective's scratch.
  std::vector<double> transient;
  /// The step of the node's op (where `transient` is live); -1: liveStart.
  int step = -1;
};

/// One edge: cost[p * k_to + q] when `from` picks p and `to` picks q (the
/// resharding cost from the producer's layout to the consumer's).
struct ProblemEdge {
  int from = 0;
  int to = 0;
  std::vector<double> cost;
  /// Bytes per device live at `step` only, indexed as `cost` (empty: none):
  /// the consumer's resharded copy of the value and the collective's scratch.
  std::vector<double> memory;
  int step = 0;
};

struct StrategyProblem {
  std::vector<ProblemNode> nodes;
  std::vector<ProblemEdge> edges;
  /// Steps of program order (live ranges lie in [0, numSteps)).
  int numSteps = 0;
  /// Bytes per device; none: no memory rows.
  std::optional<double> memoryBudget;
  double timeLimitSeconds = 30;
  /// Stop when the plan is proven within this fraction of the optimum (a
  /// bound that close); 0: prove it optimal.
  double relativeGap = 0;
  /// Shrink the model before solving (exact reductions, Presolve.h); off
  /// only to test the plain formulation.
  bool presolve = true;
};

/// What the reductions before the ILP removed.
struct PresolveStats {
  /// Edge matrices whose cost is a[p] + b[q]: folded into the node costs.
  int separableEdges = 0;
  /// Strategies no better than another in cost, every edge and memory.
  int dominatedStrategies = 0;
  /// Groups (a leader and its followers) with at most two neighbours,
  /// folded into them (only without a memory budget).
  int eliminatedGroups = 0;
};

enum class SolveStatus {
  Optimal,
  /// Stopped at the time limit with a plan (see gap).
  TimeLimit,
  /// A plan proven within the problem's relativeGap of the optimum (see
  /// gap and `how`).
  WithinGap,
  /// A plan within the budget from the memory-priced search, CBC skipped
  /// (its model too large for the time limit; see gap and `how`).
  NotProven,
  /// No plan meets the memory budget (see smallestPeak).
  Infeasible,
  /// The solver found no plan in time.
  NoSolution,
};

const char *solveStatusName(SolveStatus status);

struct StrategySolution {
  SolveStatus status = SolveStatus::NoSolution;
  /// The chosen strategy of every node (empty without a plan).
  std::vector<int> choice;
  double objective = 0;
  /// The solver's lower bound; equal to objective when optimal.
  double bound = 0;
  /// (objective - bound) / max(|objective|, tiny); 0 when optimal.
  double gap = 0;
  /// Whether bound and gap are known (a solver stopped before any bound).
  bool boundKnown = true;
  /// How the plan was found, when not by CBC alone (for the report).
  std::string how;
  double seconds = 0;
  /// Model size after merging followers (both solves when infeasible).
  int variables = 0;
  int constraints = 0;
  PresolveStats presolve;
  /// Infeasible: the peak bytes per device of the smallest plan found (the
  /// smallest any plan reaches when smallestPeakBound is as large).
  double smallestPeak = 0;
  /// Infeasible: no plan peaks below this (at most smallestPeak).
  double smallestPeakBound = 0;
  /// Whether no plan was found in time: smallestPeak is then the bound.
  bool smallestPeakIsBound = false;
};

/// Solves `problem` with CBC: deterministic (one thread, fixed seeds).
/// Throws std::invalid_argument on a malformed problem (sizes that don't
/// match, a follower before its leader or with another strategy count).
StrategySolution solveStrategyProblem(const StrategyProblem &problem);

/// The objective of `choice`: node costs plus edge costs.
double objectiveOf(const StrategyProblem &problem, const std::vector<int> &choice);
/// The peak over steps of the bytes live under `choice` (the M_t rows).
double peakMemoryOf(const StrategyProblem &problem, const std::vector<int> &choice);
/// The step where a node's transient bytes are live.
int transientStep(const ProblemNode &node);
/// The bytes live at each step under `choice` (numSteps entries, at least 1):
/// values over their live ranges, transients and edge copies at their step.
std::vector<double> liveBytesOf(const StrategyProblem &problem, const std::vector<int> &choice);
/// Whether `choice` keeps every follower on its leader's strategy.
bool followsLeaders(const StrategyProblem &problem, const std::vector<int> &choice);

} // namespace shardc::autoshard
