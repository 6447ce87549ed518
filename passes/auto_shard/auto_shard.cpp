// The auto-shard stage's entry point: cost model, strategy graph, solve,
// then apply the plan, or report why not (an infeasible memory budget is an
// error; no plan in time falls back to propagation with a warning).
#include "passes/auto_shard/AutoShardInternal.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>

namespace shardc {

using namespace autoshard;

std::optional<int64_t> parseByteSize(const std::string &text) {
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits])))
    ++digits;
  if (digits == 0 || digits > 18)
    return std::nullopt;
  int64_t value = std::stoll(text.substr(0, digits));
  static const std::pair<const char *, int64_t> kSuffixes[] = {{"", 1},
                                                               {"B", 1},
                                                               {"KiB", 1LL << 10},
                                                               {"MiB", 1LL << 20},
                                                               {"GiB", 1LL << 30},
                                                               {"TiB", 1LL << 40},
                                                               {"KB", 1000},
                                                               {"MB", 1000000},
                                                               {"GB", 1000000000},
                                                               {"TB", 1000000000000}};
  std::string suffix = text.substr(digits);
  for (const auto &[name, scale] : kSuffixes)
    if (suffix == name) {
      if (value <= 0 || value > INT64_MAX / scale)
        return std::nullopt;
      return value * scale;
    }
  return std::nullopt;
}

bool autoShard(Module &module, DiagnosticEngine &diags, const AutoShardOptions &options) {
  if (diags.hasErrors())
    return false;
  AutoShardReport *report = options.report;
  if (report)
    report->budget = options.memoryBudget;
  Function *main = module.findFunction("main");
  if (!main) {
    if (report)
      report->notes.push_back("no @main: nothing to decide");
    return true;
  }
  CostModel model = defaultCostModel();
  if (!options.costModelPath.empty()) {
    try {
      model = loadCostModel(options.costModelPath);
    } catch (const CostModelError &e) {
      diags.error(Loc{}, fmt::format("cost model - {}", e.what()));
      return false;
    }
  }
  // Meshes with explicit axes (LANGUAGE.md section 10): their shardings are
  // types. The solver decides a mixed mesh's auto axes when the mixed pass
  // runs it (options.explicitTypes set); a wholly explicit mesh has nothing
  // for it to decide.
  std::vector<std::string> typed;
  for (const auto &mesh : module.meshes) {
    bool splits = std::any_of(mesh->axes.begin(), mesh->axes.end(),
                              [](const MeshAxis &a) { return a.size > 1; });
    if (splits && mesh->hasExplicitAxis() && !(mesh->hasAutoAxis() && options.explicitTypes))
      typed.push_back("@" + mesh->name);
  }
  if (report && !typed.empty())
    report->notes.push_back(fmt::format("{} {} explicit axes: left to the explicit rules and "
                                        "propagation (LANGUAGE.md section 10)",
                                        fmt::join(typed, ", "),
                                        typed.size() == 1 ? "has" : "have"));
  Pricer pricer(module, model);
  StrategyGraph graph = buildStrategyGraph(module, *main, pricer, options);
  if (graph.nodes.empty()) {
    if (report && typed.empty())
      report->notes.push_back("no mesh with axes: nothing to decide");
    return true;
  }
  StrategySolution solution = solveStrategyProblem(graph.problem);
  if (report) {
    report->variables = solution.variables;
    report->constraints = solution.constraints;
    report->solveSeconds = solution.seconds;
    report->nodes = static_cast<int>(graph.nodes.size());
    for (const GraphNode &node : graph.nodes) {
      report->strategies += static_cast<int>(node.strategies.size());
      report->followers += node.follows >= 0 ? 1 : 0;
    }
    report->eliminatedGroups = solution.presolve.eliminatedGroups;
    report->dominatedStrategies = solution.presolve.dominatedStrategies;
    report->separableEdges = solution.presolve.separableEdges;
    for (const StrategyGraph::Opaque &left : graph.opaque) {
      std::string named = options.describeOp ? options.describeOp(*left.op) : "";
      if (named.empty())
        named = fmt::format("{} at line {}", left.op->name(), left.op->loc.line);
      report->notes.push_back(fmt::format("{}: left to propagation ({})", named, left.why));
    }
  }
  switch (solution.status) {
  case SolveStatus::Infeasible: {
    // Byte counts: a plan's peak is whole bytes (rounded off the solver's
    // arithmetic), a bound rounds up.
    auto bytes = [](double b) { return static_cast<int64_t>(std::llround(b)); };
    auto atLeast = [](double b) { return static_cast<int64_t>(std::ceil(b - 1e-6)); };
    std::string smallest =
        solution.smallestPeakIsBound
            ? fmt::format("the smallest peak possible is at least {} bytes",
                          atLeast(solution.smallestPeak))
        : atLeast(solution.smallestPeakBound) >= bytes(solution.smallestPeak)
            ? fmt::format("the smallest peak possible is {} bytes", bytes(solution.smallestPeak))
            : fmt::format("the smallest peak found is {} bytes (no plan peaks below {})",
                          bytes(solution.smallestPeak), atLeast(solution.smallestPeakBound));
    diags.error(main->loc, fmt::format("memory budget - no sharding plan fits: {} bytes per "
                                       "device; {}",
                                       options.memoryBudget.value_or(0), smallest));
    return false;
  }
  case SolveStatus::NoSolution:
    diags.warning(main->loc, fmt::format("auto-shard - no plan found within the time limit "
                                         "({} s): shardings are left to propagation",
                                         options.timeLimitSeconds));
    if (report) {
      report->status = "no plan found: fell back to propagation";
      report->how = solution.how;
    }
    return true;
  case SolveStatus::Optimal:
  case SolveStatus::TimeLimit:
  case SolveStatus::WithinGap:
  case SolveStatus::NotProven:
    break;
  }
  applyPlan(module, graph, solution.choice, pricer, options);
  if (report) {
    report->status = solveStatusName(solution.status);
    report->gap = solution.gap;
    report->gapKnown = solution.boundKnown;
    report->how = solution.how;
    report->objective = solution.objective;
    report->peakBytes = peakMemoryOf(graph.problem, solution.choice);
    for (const AutoShardOpRow &row : report->ops) {
      report->computeSeconds += row.compute;
      report->communicationSeconds += row.communication;
    }
    for (const AutoShardEdgeRow &row : report->edges)
      report->communicationSeconds += row.seconds;
  }
  return true;
}

} // namespace shardc
