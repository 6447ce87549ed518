// Outputs: every global array written once, complete files only.
#pragma once

#include "runtime/Context.h"
#include "runtime/Layout.h"

namespace shardrt {

/// Rank 0 makes sure --output-dir exists (creating it when missing) and
/// takes a file; otherwise every rank exits 1 before any computing. Collective.
void checkOutputDir(shardrt_context *ctx);

/// Prints a summary per output on rank 0 (the form of `shardc --interpret`).
/// Each block counts once (its writer's copy). Collective.
void printOutputSummary(shardrt_context *ctx, const void *const *outputs);

} // namespace shardrt
