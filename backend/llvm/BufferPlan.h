// Buffers reused by liveness: every materialized value of the kernel gets an
// offset in one arena, planned at compile time. Two values share bytes only
// when their live ranges (first to last step, both included) are disjoint.
#pragma once

#include <cstdint>
#include <vector>

namespace shardc::llvmgen {

struct BufferRequest {
  int64_t bytes = 0;
  int64_t firstStep = 0; // the step that writes it
  int64_t lastStep = 0;  // the last step that reads it (>= firstStep)
};

struct ArenaPlan {
  std::vector<int64_t> offsets; // one per request, multiples of kArenaAlignment
  int64_t bytes = 0;            // the arena's size
};

constexpr int64_t kArenaAlignment = 64;

/// Places the requests: largest first, each at the lowest offset that
/// overlaps no already placed request live at the same time (first fit).
ArenaPlan planArena(const std::vector<BufferRequest> &requests);

} // namespace shardc::llvmgen
