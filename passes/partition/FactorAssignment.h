// The factor assignment the partitioner computes each op in: which mesh axes
// shard each factor of the op's sharding rule, given its operands' and
// results' shardings (partition_assignment.cpp). Public because the
// auto-sharding solver prices the layouts users write with the same rule.
#pragma once

#include "ir/IR.h"
#include "passes/rules/ShardingRules.h"

#include <vector>

namespace shardc::partition {

/// For each factor of `rule`, the mesh axes that shard it, chosen from the
/// operands' current layouts first (null: none), then the results'
/// shardings; an axis is used once. Permutation factors, and factors of a
/// reshape that are not on both sides or whose size the axes don't divide,
/// stay unsharded. The layouts the partitioner computes `op` in; the
/// auto-sharding solver prices written layouts it does not enumerate with
/// the same assignment. With `first` (an operand's index, or the number of
/// operands plus a result's), that tensor chooses before the others, which
/// keep their order: the partitioner's alternatives (partition_ops.cpp).
std::vector<std::vector<AxisRef>> assignFactors(const Op &op, const ShardingRule &rule,
                                                const std::vector<const Sharding *> &operands,
                                                const std::vector<const Sharding *> &results,
                                                const Mesh &mesh, int first = -1);

} // namespace shardc::partition
