// Outputs: every global array written once, complete files only.
#pragma once

#include "runtime/Context.h"
#include "runtime/Layout.h"

namespace shardrt {

/// Rank 0 makes sure --output-dir exists (creating it when missing) and
/// takes a file; otherwise every rank exits 1 before any computing. Collective.
void checkOutputDir(shardrt_context *ctx);

/// Prints one line per output on rank 0: type, sharding, sum, min, max.
/// Each block counts once (its writer's copy). Collective.
void printOutputSummary(shardrt_context *ctx, const void *const *outputs);

/// Calls fn(value as double) for every element this rank holds of `block`
/// (padding excluded), reading `buffer` as `dtype`.
template <typename Fn>
void forEachHeldValue(const Block &block, int64_t dtype, const void *buffer, Fn &&fn) {
  forEachRun(block, [&](int64_t, int64_t localOffset, int64_t count) {
    for (int64_t i = localOffset; i < localOffset + count; ++i) {
      switch (dtype) {
      case SHARDRT_F32:
        fn(static_cast<double>(static_cast<const float *>(buffer)[i]));
        break;
      case SHARDRT_F64:
        fn(static_cast<const double *>(buffer)[i]);
        break;
      case SHARDRT_I32:
        fn(static_cast<double>(static_cast<const int32_t *>(buffer)[i]));
        break;
      case SHARDRT_I64:
        fn(static_cast<double>(static_cast<const int64_t *>(buffer)[i]));
        break;
      default:
        fn(static_cast<double>(static_cast<const uint8_t *>(buffer)[i]));
      }
    }
  });
}

} // namespace shardrt
