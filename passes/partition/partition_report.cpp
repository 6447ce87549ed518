// --report=collectives: the table of every collective the partitioner
// inserted, with the source location of the op that caused it.
#include "passes/partition/PartitionReport.h"

#include <fmt/format.h>

#include <algorithm>

namespace shardc {

void CollectiveReport::add(Loc cause, const ReshardStep &step, const std::string &reason) {
  CollectiveRecord record;
  record.cause = cause;
  record.kind = reshardStepName(step.kind);
  record.mesh = step.mesh ? step.mesh->name : "";
  if (!step.axes.empty()) {
    record.axes = "{";
    for (size_t i = 0; i < step.axes.size(); ++i)
      record.axes += (i ? ", " : "") + step.axes[i].str();
    record.axes += "}";
  }
  record.bytes = step.bytes;
  record.reason = reason;
  records.push_back(std::move(record));
}

std::string renderCollectiveReport(const CollectiveReport &report) {
  struct Row {
    std::string where, kind, axes, bytes, reason;
  };
  std::vector<Row> rows;
  int64_t total = 0;
  for (const CollectiveRecord &r : report.records) {
    std::string where =
        r.cause.known() ? fmt::format("{}:{}:{}", r.cause.file->name(), r.cause.line, r.cause.col)
                        : "<unknown>";
    std::string axes =
        r.mesh.empty() ? r.axes : "@" + r.mesh + (r.axes.empty() ? "" : " " + r.axes);
    rows.push_back({where, r.kind, axes, std::to_string(r.bytes), r.reason});
    total += r.bytes;
  }
  Row header{"location", "collective", "mesh axes", "bytes/device", "reason"};
  size_t w[4] = {header.where.size(), header.kind.size(), header.axes.size(), header.bytes.size()};
  for (const Row &row : rows) {
    w[0] = std::max(w[0], row.where.size());
    w[1] = std::max(w[1], row.kind.size());
    w[2] = std::max(w[2], row.axes.size());
    w[3] = std::max(w[3], row.bytes.size());
  }
  std::string out;
  auto line = [&](const Row &row) {
    out += fmt::format("{:<{}}  {:<{}}  {:<{}}  {:>{}}  {}", row.where, w[0], row.kind, w[1],
                       row.axes, w[2], row.bytes, w[3], row.reason);
    while (!out.empty() && out.back() == ' ')
      out.pop_back();
    out += "\n";
  };
  line(header);
  for (const Row &row : rows)
    line(row);
  out += fmt::format("total: {} collective{}, {} bytes per device\n", rows.size(),
                     rows.size() == 1 ? "" : "s", total);
  return out;
}

} // namespace shardc
