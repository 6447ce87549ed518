// The record of every collective the partitioner inserted, for
// `shardc --report=collectives`: which op caused it, what it is, over which
// mesh axes, and how many bytes each device sends (ReshardPlanner.h's table).
#pragma once

#include "ir/Diagnostics.h"
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
};

struct CollectiveReport {
  std::vector<CollectiveRecord> records;
  void add(Loc cause, const ReshardStep &step, const std::string &reason);
};

/// The table printed by --report=collectives: one row per collective
/// (file:line:col, kind, mesh axes, bytes per device, reason) and the total.
std::string renderCollectiveReport(const CollectiveReport &report);

} // namespace shardc
