// The auto-shard stage: chooses the shardings a program leaves out by
// solving an integer linear program over each op's strategies (TorchCAP /
// Alpa, ../shared/LANGUAGE.md section 11).
#pragma once

#include "ir/Diagnostics.h"
#include "ir/IR.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace shardc {

struct AutoShardReport;

/// The command line's auto-sharding options.
struct AutoShardOptions {
  /// --memory-budget: bytes per device; none: no memory rows.
  std::optional<int64_t> memoryBudget;
  /// --cost-model: a JSON file (CostModel.h documents the format); empty:
  /// the built-in model.
  std::string costModelPath;
  /// --solver-time-limit, seconds.
  double timeLimitSeconds = 30;
  /// --solver-gap (a percentage on the command line): the solver stops
  /// when its plan is proven within this fraction of the optimum.
  double relativeGap = 0.01;
  /// --report=auto-sharding: filled when given.
  AutoShardReport *report = nullptr;
  /// Set when the solver decides the auto axes of meshes that also have
  /// explicit axes (inferMixedShardings, LANGUAGE.md section 10): whether a
  /// value may take a layout, i.e. the layout's explicit axes are the value's
  /// explicit type. Unset: values on such meshes are left to the explicit
  /// rules and propagation.
  std::function<bool(const Value &, const Sharding &)> explicitTypes;
  /// How the report names an op the caller made (the mixed pass: a
  /// region's edges, by the region); an empty result or none: `%h = matmul`.
  std::function<std::string(const Op &)> describeOp;
};

/// One op of the report.
struct AutoShardOpRow {
  std::string what;      // `%h = matmul` or `param %x`
  std::string shardings; // the result's chosen sharding
  std::string strategy;  // factor axes, e.g. `i={"x"} j={} k={}`
  double compute = 0;    // seconds
  double communication = 0;
  Loc loc;
};

/// One reshard the plan inserted between a producer and a consumer.
struct AutoShardEdgeRow {
  std::string value; // `%h -> operand 0 of %y = matmul`
  std::string from, to;
  std::string steps; // the planner's collectives
  int64_t bytes = 0;
  double seconds = 0;
};

/// What --report=auto-sharding prints (auto_shard/report.cpp).
struct AutoShardReport {
  std::vector<AutoShardOpRow> ops;
  std::vector<AutoShardEdgeRow> edges;
  double computeSeconds = 0, communicationSeconds = 0, objective = 0;
  double peakBytes = 0;
  std::optional<int64_t> budget;
  std::string status; // optimal, stopped at the time limit, not proven optimal, fallback
  double gap = 0;
  bool gapKnown = true;
  /// How the plan was found when not by CBC alone (the memory-priced
  /// search, CBC skipped and why); empty otherwise.
  std::string how;
  double solveSeconds = 0;
  int variables = 0, constraints = 0, nodes = 0, strategies = 0;
  /// Nodes sharing a leader's choice, and what the reductions before the
  /// ILP removed (groups eliminated, dominated strategies, separable edges).
  int followers = 0, eliminatedGroups = 0, dominatedStrategies = 0, separableEdges = 0;
  std::vector<std::string> notes;
};

/// auto-shard: decides every value of @main without a written sharding and
/// every open dim of a written one; keeps written closed shardings and
/// sharding_constraint. Afterwards each value of @main carries a closed
/// sharding and a sharding_constraint stands wherever a consumer's strategy
/// needs an operand laid out otherwise, so partition executes the plan the
/// solver priced. A memory budget no plan meets is an error giving the
/// smallest peak possible; a bad cost model file is an error naming it.
/// Without a plan in time, warns and leaves the program to propagation.
bool autoShard(Module &module, DiagnosticEngine &diags, const AutoShardOptions &options);

/// Parses a byte count: `1024`, `512KiB`, `64MiB`, `2GiB` (also KB/MB/GB as
/// powers of 1000); nullopt when malformed or not positive.
std::optional<int64_t> parseByteSize(const std::string &text);

/// The report's text (LANGUAGE.md section 11).
std::string formatAutoShardReport(const AutoShardReport &report);

} // namespace shardc
