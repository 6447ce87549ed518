// First-fit arena placement by decreasing size (the usual offline heuristic
// for buffer sharing: big buffers first leave the small ones the gaps), equal
// sizes by when they are written.
#include "backend/llvm/BufferPlan.h"

#include <algorithm>
#include <numeric>
#include <utility>

namespace shardc::llvmgen {

ArenaPlan planArena(const std::vector<BufferRequest> &requests) {
  auto aligned = [](int64_t bytes) {
    return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
  };
  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), 0);
  // Equal sizes go in the order they are written: first fit in start order
  // packs intervals optimally (a chain of same-size values needs two
  // buffers, not three), and the plan does not depend on the order of
  // `requests` beyond exact ties.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const BufferRequest &x = requests[a], &y = requests[b];
    if (x.bytes != y.bytes)
      return x.bytes > y.bytes;
    return std::make_pair(x.firstStep, x.lastStep) < std::make_pair(y.firstStep, y.lastStep);
  });

  ArenaPlan plan;
  plan.offsets.assign(requests.size(), 0);
  std::vector<size_t> placed;
  for (size_t i : order) {
    const BufferRequest &r = requests[i];
    // The byte ranges of placed buffers live at the same time as r.
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (size_t j : placed) {
      const BufferRequest &o = requests[j];
      if (o.firstStep <= r.lastStep && r.firstStep <= o.lastStep)
        busy.emplace_back(plan.offsets[j], plan.offsets[j] + aligned(o.bytes));
    }
    std::sort(busy.begin(), busy.end());
    int64_t offset = 0;
    for (const auto &[begin, end] : busy) {
      if (offset + aligned(r.bytes) <= begin)
        break;
      offset = std::max(offset, end);
    }
    plan.offsets[i] = offset;
    plan.bytes = std::max(plan.bytes, offset + aligned(r.bytes));
    placed.push_back(i);
  }
  return plan;
}

} // namespace shardc::llvmgen
