// The reshard planner: how to move a tensor from one sharding to another
// with the fewest bytes per device (../shared/DESIGN.md, "Partitioning").
//
// A plan is a sequence of collectives, each acting on one mesh axis (or
// sub-axis) of one or two dims, searched Dijkstra-style over the layouts in
// between (like PyTorch DTensor's planner). Bytes per step, with L the local
// (padded) bytes of the value before the step and n the group size:
//
//   all_slice        replicated on g -> sharded on g        0
//   all_gather       sharded on g -> replicated             (n-1) L
//   all_to_all       dim a on g -> dim b on g               (n-1)/n L
//   all_reduce       partial on g -> replicated             2(n-1)/n L
//   reduce_scatter   partial on g -> sharded on g           (n-1)/n L
//   collective_permute  same tiling, other devices          L
//
// Worked example, mesh <["x"=2, "y"=4]>, f32[64x128] from [{"x"}, {"y"}]
// (L = 32x32x4 = 4096 bytes) to [{"y"}, {"x"}]: gathering both dims and
// slicing costs 7 L = 28672. The plan found: all_gather x on dim 0 (L), then
// all_to_all y from dim 1 to dim 0 (3/4 of 2L = 6144), then all_slice x on
// dim 1 (free): 10240 bytes, each step on the layout the previous one left.
#pragma once

#include "ir/Sharding.h"
#include "ir/Types.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace shardc {

enum class ReshardStepKind {
  AllSlice,
  AllGather,
  AllToAll,
  AllReduce,
  ReduceScatter,
  CollectivePermute,
  /// Across meshes: the devices already hold what the target needs (same
  /// blocks on the same device ids); no data moves. 0 bytes.
  Relabel,
  /// Across meshes from a maximal mesh (one device) to the devices of
  /// another: every device receives the whole value. L bytes.
  Broadcast,
};

/// The op spelling (`all_gather`, ...; `relabel`, `broadcast` for the two
/// cross-mesh kinds, which are no ops).
const char *reshardStepName(ReshardStepKind kind);

struct ReshardStep {
  ReshardStepKind kind = ReshardStepKind::AllGather;
  /// The mesh the step runs on (its axes name the group).
  const Mesh *mesh = nullptr;
  /// The group's axes, major first (merged: "x" rather than its halves).
  std::vector<AxisRef> axes;
  /// all_slice, all_gather, reduce_scatter: the dim; all_to_all: the split
  /// dim (it gains the axes). -1 otherwise.
  int64_t dim = -1;
  /// all_to_all: the concat dim (it loses the axes). -1 otherwise.
  int64_t concatDim = -1;
  /// all_reduce: "sum", "max" or "min".
  std::string reduceKind = "sum";
  /// collective_permute: [source, target] mesh positions.
  std::vector<std::pair<int64_t, int64_t>> pairs;
  /// Bytes each device sends, by the table above.
  int64_t bytes = 0;
  /// The layout after the step (closed, on `mesh`), and its local shape.
  Sharding after;
  std::vector<int64_t> localShapeAfter;
  /// all_gather of every axis of a dim at once because the dim's padded
  /// blocks do not nest (a step per axis would misplace elements).
  bool wholeDimGather = false;
};

struct ReshardPlan {
  std::vector<ReshardStep> steps;
  int64_t bytes = 0;
  /// The search gave up (too many layouts or sub-axes that do not nest) and
  /// the plan gathers everything, then slices: correct, not cheapest.
  bool fallback = false;
};

/// What to move: a value of `type` laid out as `source` on `sourceMesh`,
/// possibly a partial result over `partialAxes` (summed, or maxed/mined by
/// `partialKind`), to `target` on `targetMesh` (the same mesh or another one
/// with as many devices; a maximal mesh on either side is allowed).
/// Shardings must be closed; their replicated={...} lists are ignored.
struct ReshardRequest {
  TensorType type;
  const Mesh *sourceMesh = nullptr;
  Sharding source;
  std::vector<AxisRef> partialAxes;
  std::string partialKind = "sum";
  const Mesh *targetMesh = nullptr;
  Sharding target;
};

/// The cheapest plan for `request`; no steps when nothing changes.
/// Throws std::invalid_argument on a malformed request (unknown axis,
/// sharding rank != type rank, meshes of different device counts).
ReshardPlan planReshard(const ReshardRequest &request);

/// One line per step, e.g. `all_gather dim=0 axes={"x"} bytes=1024`, for
/// tests and the report.
std::string describePlan(const ReshardPlan &plan);

} // namespace shardc
