// The partition stage: the global program to its per-device (SPMD) form.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/IR.h"
#include "passes/partition/PartitionReport.h"
#include "passes/rules/ShardingRules.h"

#include <vector>

namespace shardc {

/// partition: rewrites each function into its per-device (SPMD) form: one
/// manual_computation over every axis per run of ops on one mesh, local
/// (padded) shapes, the collectives the reshard planner chose, padding
/// masks before reductions and contractions. A reshard across meshes stays
/// a global op between runs. Records every collective in `report` when
/// given. An op it cannot partition throws InternalError naming the op and
/// why: every program the checks accept must partition.
bool partitionModule(Module &module, DiagnosticEngine &diags, CollectiveReport *report);
bool partitionModule(Module &module, DiagnosticEngine &diags);

namespace partition {

/// For each factor of `rule`, the mesh axes that shard it, chosen from the
/// operands' current layouts first (null: none), then the results'
/// shardings; an axis is used once. Permutation factors, and factors of a
/// reshape that are not on both sides or whose size the axes don't divide,
/// stay unsharded. The layouts the partitioner computes `op` in; the
/// auto-sharding solver prices written layouts it does not enumerate with
/// the same assignment.
std::vector<std::vector<AxisRef>> assignFactors(const Op &op, const ShardingRule &rule,
                                                const std::vector<const Sharding *> &operands,
                                                const std::vector<const Sharding *> &results,
                                                const Mesh &mesh);

} // namespace partition
} // namespace shardc
