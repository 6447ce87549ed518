// shardrt_alloc's reuse of freed buffers (runtime/Memory.cpp): a buffer the
// next run asks for again comes back with its pages still mapped, the cache
// never holds more than the program's peak, and --profile's peak counts only
// live buffers.
#include "runtime/Context.h"

#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

int failures = 0;

void expect(bool ok, const char *what) {
  if (!ok) {
    std::fprintf(stderr, "memory_test: FAILED: %s\n", what);
    ++failures;
  }
}

long minorFaults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

constexpr int64_t MiB = int64_t(1) << 20;

} // namespace

int main() {
  // A large buffer freed and asked for again: the same memory, no new faults.
  void *first = shardrt_alloc(nullptr, 24 * MiB);
  std::memset(first, 1, 24 * MiB);
  shardrt_free(first);
  expect(shardrt::cachedBufferBytes() == size_t(24 * MiB), "a freed 24 MiB buffer is cached");
  long before = minorFaults();
  void *again = shardrt_alloc(nullptr, 24 * MiB);
  std::memset(again, 2, 24 * MiB);
  long faults = minorFaults() - before;
  expect(again == first, "the same size gets the cached buffer back");
  // A fresh 24 MiB buffer faults 12 huge pages in (6144 small ones); a few
  // faults come from elsewhere (the sanitizers' own bookkeeping).
  if (faults >= 8)
    std::fprintf(stderr, "memory_test: %ld page faults\n", faults);
  expect(faults < 8, "touching a reused buffer faults no pages in");
  expect(shardrt::cachedBufferBytes() == 0, "a reused buffer leaves the cache");

  // A slightly smaller request may take it; a much smaller one may not.
  shardrt_free(again);
  void *smaller = shardrt_alloc(nullptr, 23 * MiB);
  expect(smaller == first, "a request within an eighth of a cached buffer reuses it");
  void *small = shardrt_alloc(nullptr, 4 * MiB);
  expect(small != first, "a request far below a cached buffer's size gets its own");
  shardrt_free(smaller);
  shardrt_free(small);

  // Small buffers go back to malloc.
  size_t cached = shardrt::cachedBufferBytes();
  shardrt_free(shardrt_alloc(nullptr, 1000));
  expect(shardrt::cachedBufferBytes() == cached, "a small buffer is not cached");

  // The cache holds at most the peak of live bytes: freeing many buffers
  // that were never live together keeps it at the peak.
  for (int i = 0; i < 16; ++i)
    shardrt_free(shardrt_alloc(nullptr, (40 + 2 * i) * MiB));
  expect(shardrt::cachedBufferBytes() <= size_t(70 * MiB),
         "the cache stays within the largest live total");

  // --profile's peak counts live bytes as asked, not what the cache holds.
  expect(shardrt::peakAllocatedBytes() == 70 * MiB, "the peak is the largest live buffer");
  void *a = shardrt_alloc(nullptr, 40 * MiB);
  void *b = shardrt_alloc(nullptr, 40 * MiB);
  expect(shardrt::peakAllocatedBytes() == 80 * MiB, "two live buffers add up in the peak");
  shardrt_free(a);
  shardrt_free(b);

  if (failures == 0)
    std::printf("memory_test: all passed\n");
  return failures == 0 ? 0 : 1;
}
