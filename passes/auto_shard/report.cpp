// The text of --report=auto-sharding (LANGUAGE.md section 11): per op the
// chosen sharding and estimated times, per edge the reshard inserted, then
// totals, peak memory against the budget, solver status and model size.
#include "passes/auto_shard/AutoShard.h"

#include <fmt/format.h>

namespace shardc {
namespace {

std::string us(double seconds) { return fmt::format("{:.1f} us", seconds * 1e6); }

std::string bytes(double n) {
  if (n >= (1 << 30))
    return fmt::format("{:.0f} bytes ({:.2f} GiB)", n, n / (1 << 30));
  if (n >= (1 << 20))
    return fmt::format("{:.0f} bytes ({:.2f} MiB)", n, n / (1 << 20));
  if (n >= (1 << 10))
    return fmt::format("{:.0f} bytes ({:.2f} KiB)", n, n / (1 << 10));
  return fmt::format("{:.0f} bytes", n);
}

} // namespace

std::string formatAutoShardReport(const AutoShardReport &r) {
  std::string out = "auto-sharding report\n\nops:\n";
  for (const AutoShardOpRow &row : r.ops) {
    out += fmt::format("  {}: {}", row.what, row.shardings);
    if (!row.strategy.empty())
      out += fmt::format("  [{}]", row.strategy);
    out += fmt::format("  compute {}  communication {}\n", us(row.compute), us(row.communication));
  }
  out += "\nreshards:\n";
  if (r.edges.empty())
    out += "  none\n";
  for (const AutoShardEdgeRow &row : r.edges)
    out += fmt::format("  {}: {} -> {}  {}  ({}, {})\n", row.value, row.from, row.to, row.steps,
                       bytes(static_cast<double>(row.bytes)), us(row.seconds));
  out += "\ntotals:\n";
  out +=
      fmt::format("  compute {}\n  communication {}\n  estimated time {}\n", us(r.computeSeconds),
                  us(r.communicationSeconds), us(r.computeSeconds + r.communicationSeconds));
  out += fmt::format("  peak memory per device {} (budget: {})\n", bytes(r.peakBytes),
                     r.budget ? bytes(static_cast<double>(*r.budget)) : std::string("none"));
  out += "\nsolver:\n";
  out += fmt::format("  status {}", r.status.empty() ? "not run" : r.status);
  if (r.status == "stopped at the time limit" || r.status == "not proven optimal" ||
      r.status == "within the gap tolerance")
    out += r.gapKnown ? fmt::format(" (gap {:.2f}%)", r.gap * 100) : " (gap unknown: no bound)";
  if (!r.how.empty())
    out += fmt::format("\n  how: {}", r.how);
  out += fmt::format("\n  solve time {:.3f} s\n", r.solveSeconds);
  out += fmt::format("  model {} variables, {} constraints ({} nodes, {} strategies)\n",
                     r.variables, r.constraints, r.nodes, r.strategies);
  out += fmt::format("  reduced {} followers, {} groups eliminated, {} dominated strategies, {} "
                     "separable edges\n",
                     r.followers, r.eliminatedGroups, r.dominatedStrategies, r.separableEdges);
  for (const std::string &note : r.notes)
    out += fmt::format("  note: {}\n", note);
  return out;
}

} // namespace shardc
