// shardrt_alloc and shardrt_free: 64-byte aligned buffers (2 MiB aligned and
// huge-page backed from 2 MiB on), with freed large buffers kept for reuse.
// A program allocates the same buffers in every run of its computation; given
// back to the kernel and faulted in again, each 2 MiB page was zeroed anew
// (5% of an attention block's time went to clear_page).
#include "runtime/Context.h"

#include <sys/mman.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <unordered_map>

namespace shardrt {
namespace {

constexpr size_t kHugePage = size_t(2) << 20;
/// Freed buffers this large or larger are cached; smaller ones stay in
/// malloc's own bins, which never give memory back to the kernel.
constexpr size_t kCachedFrom = size_t(64) << 10;

struct Allocation {
  int64_t bytes;   // asked for: what --profile's peak counts
  size_t capacity; // held: bytes rounded up to the alignment
};

/// Live buffers, the free ones kept for reuse, and the peaks of live bytes
/// (asked for, and held). The cache holds at most the held peak, so a
/// process never holds more than twice what its program needs at once.
struct Heap {
  std::mutex mutex;
  std::unordered_map<void *, Allocation> live;
  std::multimap<size_t, void *> cached; // by capacity
  size_t cachedBytes = 0;
  int64_t liveBytes = 0, peakBytes = 0;
  size_t liveCapacity = 0, peakCapacity = 0;

  /// A cached buffer of `capacity` bytes, or null. A larger one is taken
  /// when it wastes at most an eighth (the next run's sizes are the same).
  void *reuse(size_t capacity, size_t &held) {
    auto it = cached.lower_bound(capacity);
    if (it == cached.end() || it->first > capacity + capacity / 8)
      return nullptr;
    void *buffer = it->second;
    held = it->first;
    cachedBytes -= it->first;
    cached.erase(it);
    return buffer;
  }

  /// Keeps `buffer` for reuse, evicting the largest cached buffers while the
  /// cache would hold more than the held peak.
  void keep(void *buffer, size_t capacity) {
    cached.emplace(capacity, buffer);
    cachedBytes += capacity;
    while (cachedBytes > peakCapacity && !cached.empty()) {
      auto largest = std::prev(cached.end());
      cachedBytes -= largest->first;
      std::free(largest->second);
      cached.erase(largest);
    }
  }

  ~Heap() {
    for (auto &entry : cached)
      std::free(entry.second);
  }
};

Heap &heap() {
  static Heap instance;
  return instance;
}

} // namespace

int64_t peakAllocatedBytes() {
  Heap &h = heap();
  std::lock_guard<std::mutex> lock(h.mutex);
  return h.peakBytes;
}

size_t cachedBufferBytes() {
  Heap &h = heap();
  std::lock_guard<std::mutex> lock(h.mutex);
  return h.cachedBytes;
}

} // namespace shardrt

using namespace shardrt;

extern "C" {

void *shardrt_alloc(shardrt_context *ctx, int64_t bytes) {
  if (bytes < 0)
    internalError(ctx, format("shardrt_alloc of %lld bytes", static_cast<long long>(bytes)));
  // Buffers of 2 MiB or more are aligned to 2 MiB and asked to be backed by
  // huge pages (Debian's default leaves transparent huge pages to madvise):
  // one TLB entry and one page fault per 2 MiB instead of 512.
  size_t alignment = static_cast<size_t>(bytes) >= kHugePage ? kHugePage : 64;
  // aligned_alloc wants a multiple of the alignment; never ask for 0.
  size_t capacity = (static_cast<size_t>(bytes) + alignment - 1) / alignment * alignment;
  if (capacity == 0)
    capacity = alignment;
  Heap &h = heap();
  std::lock_guard<std::mutex> lock(h.mutex);
  void *buffer = capacity >= kCachedFrom ? h.reuse(capacity, capacity) : nullptr;
  if (!buffer) {
    buffer = std::aligned_alloc(alignment, capacity);
    if (!buffer)
      fail(ctx, format("out of memory: allocating %lld bytes", static_cast<long long>(bytes)));
    if (alignment == kHugePage)
      madvise(buffer, capacity, MADV_HUGEPAGE); // advice only: failure changes nothing
  }
  h.live[buffer] = {bytes, capacity};
  h.liveBytes += bytes;
  h.peakBytes = std::max(h.peakBytes, h.liveBytes);
  h.liveCapacity += capacity;
  h.peakCapacity = std::max(h.peakCapacity, h.liveCapacity);
  return buffer;
}

void shardrt_free(void *buffer) {
  if (!buffer)
    return;
  Heap &h = heap();
  std::lock_guard<std::mutex> lock(h.mutex);
  auto it = h.live.find(buffer);
  if (it == h.live.end()) { // not ours (never happens in generated code)
    std::free(buffer);
    return;
  }
  Allocation a = it->second;
  h.live.erase(it);
  h.liveBytes -= a.bytes;
  h.liveCapacity -= a.capacity;
  if (a.capacity >= kCachedFrom)
    h.keep(buffer, a.capacity);
  else
    std::free(buffer);
}

} // extern "C"
