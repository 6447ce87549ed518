// `shardc FILE --explain` (alias `--debug-origins`, STYLE point 14): after
// propagation, one block per value saying what its sharding is, what each
// device holds, and for every axis of every dim which annotation it came
// from, whether it was written there or propagated, and in which priority
// round. Reads the side record of passes/ShardingOrigins.h; the normal
// pipeline never builds it.
#pragma once

#include "ir/IR.h"
#include "passes/propagate/ShardingOrigins.h"

#include <string>

namespace shardc {

/// The explanation of every value of `module`, per function (the top-level
/// snippet first, when it has values): parameters, op results in program
/// order (manual_computation bodies after their op), then function results.
/// Each block is
///
///   %h  mlp.shd:19:3  matmul
///     type      tensor<64x512xf32>   f32[64@x, 512@y]
///     sharding  sharding<@mesh, [{"x"}, {"y"}]>
///     local     tensor<32x128xf32> per device (8 devices)
///     dim 0 "x"  from parameter %x at mlp.shd:12:49, propagated, priority 0
///
/// `origins` null means --explicit mode, where every sharding is computed by
/// an op rule and nothing records origins: the axis lines are replaced by
/// one line saying so.
std::string explainModule(const Module &module, const ShardingOrigins *origins);

} // namespace shardc
