// The record of every collective the partitioner inserted, for
// `shardc --report=collectives`: which op caused it, what it is, over which
// mesh axes, and how many bytes each device sends (ReshardPlanner.h's table).
#pragma once

#include "ir/Diagnostics.h"
#include "ir/IR.h"
#include "passes/reshard/ReshardPlanner.h"

#include <string>
#include <vector>

namespace shardc {

struct CollectiveRecord {
  Loc cause;          ///< the op whose operand, result or reshard needed it
  std::string kind;   ///< all_gather, ..., relabel, broadcast
  std::string mesh;   ///< the mesh whose axes form the group
  std::string axes;   ///< e.g. {"x", "y"}; empty for collective_permute
  int64_t bytes = 0;  ///< per device
  std::string reason; ///< why, e.g. "partial sum of matmul", "reshape across a sharded dim"
  /// The loops around it, outermost first: how many times each runs it
  /// (-1: a `while`, unknown) and where it is.
  struct Loop {
    int64_t trips = 1;
    Loc loc;
    bool isWhile = false;
  };
  std::vector<Loop> loops;
  const Op *emitted = nullptr; ///< the collective op, while partitioning
  /// How many times it runs in total; -1 when a `while` repeats it.
  int64_t times() const;
};

struct CollectiveReport {
  std::vector<CollectiveRecord> records;
  /// `emitted` is the collective op (optional): a record can follow it when
  /// it is hoisted out of a loop.
  void add(Loc cause, const ReshardStep &step, const std::string &reason,
           const Op *emitted = nullptr);
  /// Records added until leaveLoop() run once per iteration of `loop`.
  void enterLoop(const Op &loop);
  void leaveLoop();
  /// The collectives among `ops` left their innermost loop (hoisted).
  void hoisted(const std::vector<const Op *> &ops);

private:
  std::vector<CollectiveRecord::Loop> loops_;
};

/// The table printed by --report=collectives: one row per collective
/// (file:line:col, kind, mesh axes, bytes per device, reason; inside loops,
/// how often it runs) and the total, loops' collectives counted per
/// iteration (`for`: times its trip count).
std::string renderCollectiveReport(const CollectiveReport &report);

} // namespace shardc
