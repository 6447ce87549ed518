// --report=collectives: the table of every collective the partitioner
// inserted, with the source location of the op that caused it.
#include "passes/partition/PartitionReport.h"

#include <fmt/format.h>

#include <algorithm>

namespace shardc {

int64_t CollectiveRecord::times() const {
  int64_t n = 1;
  for (const Loop &loop : loops) {
    if (loop.trips < 0)
      return -1;
    n *= loop.trips;
  }
  return n;
}

void CollectiveReport::enterLoop(const Op &loop) {
  CollectiveRecord::Loop frame;
  frame.loc = loop.loc;
  frame.isWhile = loop.kind == OpKind::While;
  if (loop.kind == OpKind::For) {
    int64_t lower = loop.get(attrs::lower, 0), upper = loop.get(attrs::upper, 0);
    int64_t step = std::max<int64_t>(1, loop.get(attrs::loopStep, 1));
    frame.trips = upper > lower ? (upper - lower - 1) / step + 1 : 0;
  } else if (loop.kind == OpKind::While) {
    frame.trips = -1;
  }
  loops_.push_back(frame);
}

void CollectiveReport::leaveLoop() { loops_.pop_back(); }

void CollectiveReport::hoisted(const std::vector<const Op *> &ops) {
  for (CollectiveRecord &r : records)
    if (r.emitted && !r.loops.empty() && std::find(ops.begin(), ops.end(), r.emitted) != ops.end())
      r.loops.pop_back();
}

void CollectiveReport::add(Loc cause, const ReshardStep &step, const std::string &reason,
                           const Op *emitted) {
  CollectiveRecord record;
  record.loops = loops_;
  record.emitted = emitted;
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
  size_t perIteration = 0; // inside a while: counted once in the total
  for (const CollectiveRecord &r : report.records) {
    std::string where =
        r.cause.known() ? fmt::format("{}:{}:{}", r.cause.file->name(), r.cause.line, r.cause.col)
                        : "<unknown>";
    std::string axes =
        r.mesh.empty() ? r.axes : "@" + r.mesh + (r.axes.empty() ? "" : " " + r.axes);
    std::string reason = r.reason;
    int64_t times = r.times();
    if (!r.loops.empty()) {
      const CollectiveRecord::Loop &inner = r.loops.back();
      std::string loopAt =
          inner.loc.known() ? fmt::format(" at {}:{}", inner.loc.line, inner.loc.col) : "";
      reason += times < 0
                    ? fmt::format(" [each iteration of the while{}]", loopAt)
                    : fmt::format(" [x{}: {}{}]", times, inner.isWhile ? "while" : "for", loopAt);
    }
    rows.push_back({where, r.kind, axes, std::to_string(r.bytes), reason});
    if (times < 0)
      ++perIteration;
    else
      total += r.bytes * times;
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
  out += fmt::format("total: {} collective{}, {} bytes per device", rows.size(),
                     rows.size() == 1 ? "" : "s", total);
  if (perIteration)
    out += fmt::format(" (plus, per iteration of a while, the {} marked so)", perIteration);
  out += "\n";
  return out;
}

} // namespace shardc
