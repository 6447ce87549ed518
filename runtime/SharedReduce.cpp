// Large all_reduce and reduce_scatter of a group on one node, through its
// shared window (SharedWindows.h) by kernel copies: no MPI message.
//
// The operand is n blocks (support/BlockLayout.h), member k reduces block k.
// Each member posts its operand's and its result's addresses, then, chunk by
// chunk of its block, reads that chunk of every other member's operand with
// process_vm_readv into a slot of its own that stays in cache, copies its own
// chunk into its result and reduces the slots into it in member order (as
// the messages' path does: the same bits). It counts each reduced chunk in
// its header; an all_reduce then reads the other members' reduced chunks
// from their results straight into its own as they are counted. A member
// leaves once every other one has counted its reads of its buffers done.
//
// Why: through MPI messages each block is copied into a receive buffer as
// large as the block, read back for the reduction, and the reduced blocks are
// copied again by the all-gather, each copy through MPICH's shared cells
// (16 MiB on 2 ranks: 9.3-11.5 ms, about five passes over the operand at
// this machine's memory bandwidth); here a member's memory traffic is its
// own block read, the others' chunks read once, its result written once.
#include "runtime/SharedWindows.h"
#include "support/BlockLayout.h"

#include <sched.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace shardrt {
namespace {

/// Elements per chunk: small enough that the n - 1 slots and the chunk of
/// the result stay in a core's cache while they are reduced.
constexpr int64_t kReduceChunkBytes = int64_t(256) << 10;

/// The count a member publishes after reducing `chunks` chunks of its block
/// in exchange `epoch`: later exchanges compare greater.
uint64_t reducedMark(int64_t epoch, int64_t chunks) {
  return (static_cast<uint64_t>(epoch) << 32) | static_cast<uint64_t>(chunks);
}

/// out = s[n-1] + (... + (s[0] + own)), element by element: MPI_Reduce_local's
/// sum applied slot after slot (the same bits) in one pass, where the copy
/// of `own` into `out` and a pass per slot would each go over the chunk.
/// `out` may be `own`.
template <typename T>
void sumInto(char *out, const char *own, const char *const *slots, int64_t count,
             int64_t elements) {
  T *o = reinterpret_cast<T *>(out);
  const T *a = reinterpret_cast<const T *>(own);
  if (count == 1) {
    const T *s = reinterpret_cast<const T *>(slots[0]);
    for (int64_t i = 0; i < elements; ++i)
      o[i] = s[i] + a[i];
    return;
  }
  for (int64_t i = 0; i < elements; ++i) {
    T sum = a[i];
    for (int64_t k = 0; k < count; ++k)
      sum = reinterpret_cast<const T *>(slots[k])[i] + sum;
    o[i] = sum;
  }
}

using SumInto = void (*)(char *, const char *, const char *const *, int64_t, int64_t);

/// The one-pass sum of `dtype` (integers wrap, as unsigned), or nullptr
/// (max, min: MPI's ops, which keep NaN).
SumInto fusedSum(int64_t dtype, int64_t kind) {
  if (kind != SHARDRT_SUM)
    return nullptr;
  switch (dtype) {
  case SHARDRT_F32:
    return sumInto<float>;
  case SHARDRT_F64:
    return sumInto<double>;
  case SHARDRT_I32:
    return sumInto<uint32_t>;
  case SHARDRT_I64:
    return sumInto<uint64_t>;
  default:
    return nullptr;
  }
}

class DirectReduction {
public:
  DirectReduction(shardrt_context *ctx, SharedWindow &window, const ReduceBlocks &r)
      : ctx_(ctx), w_(window), r_(r), chunks_(kReduceChunkBytes, r.size),
        epoch_(window.directExchanges + 1) {}

  void run() {
    int64_t n = r_.n, me = r_.me;
    SegmentHeader &mine = w_.header(me);
    mine.post(r_.in, r_.out, epoch_);
    for (int64_t k = 0; k < n; ++k)
      if (k != me)
        waitUntil([&] { return w_.header(k).posted.load(std::memory_order_acquire) >= epoch_; });
    reduceMine();
    if (r_.gather)
      for (int64_t d = 1; d < n; ++d)
        gatherFrom((me + d) % n);
    // My reads of every member's buffers are done: count them there, then
    // wait until the others have counted theirs of mine.
    for (int64_t k = 0; k < n; ++k)
      if (k != me)
        w_.header(k).accessed.fetch_add(1, std::memory_order_release);
    w_.directExchanges = epoch_;
    waitUntil([&] { return mine.accessed.load(std::memory_order_acquire) >= epoch_ * (n - 1); });
    w_.finishedExchanges += 1;
    mine.finished.store(w_.finishedExchanges, std::memory_order_release);
  }

private:
  template <typename Ready> static void waitUntil(Ready &&ready) {
    while (!ready())
      sched_yield(); // more ranks than cores: the member we wait for needs one
  }

  int64_t start(int64_t k) const { return shardc::support::blockStart(r_.count, r_.n, k); }
  int64_t extent(int64_t k) const { return shardc::support::blockExtent(r_.count, r_.n, k); }

  /// Reduces my block chunk by chunk into my result, publishing each chunk.
  void reduceMine() {
    int64_t n = r_.n, me = r_.me, size = r_.size, length = extent(me);
    // A slot per other member, of a chunk or of the block when it is shorter.
    int64_t slotBytes = std::min(chunks_.size, length) * size;
    char *slots = scratchBuffer(ctx_, 1, (n - 1) * slotBytes);
    auto slot = [&](int64_t k) { return slots + (k < me ? k : k - 1) * slotBytes; };
    std::vector<const char *> inOrder;
    for (int64_t k = 0; k < n; ++k)
      if (k != me)
        inOrder.push_back(slot(k));
    SumInto sum = fusedSum(r_.dtype, r_.kind);
    char *result = r_.gather ? r_.out + start(me) * size : r_.out;
    const char *own = r_.in + start(me) * size;
    SegmentHeader &mine = w_.header(me);
    for (int64_t c = 0; c < chunks_.count(length); ++c) {
      int64_t first = chunks_.start(c), elements = chunks_.length(length, c);
      for (int64_t k = 0; k < n; ++k)
        if (k != me) {
          const SegmentHeader &peer = w_.header(k);
          readFar(ctx_, static_cast<pid_t>(peer.pid), slot(k),
                  peer.operand.load(std::memory_order_relaxed) +
                      static_cast<uint64_t>((start(me) + first) * size),
                  elements * size, r_.what, k);
        }
      char *into = result + first * size;
      if (sum) {
        sum(into, own + first * size, inOrder.data(), n - 1, elements);
      } else {
        if (own != result)
          std::memcpy(into, own + first * size, static_cast<size_t>(elements * size));
        for (const char *from : inOrder)
          checkMpi(ctx_, MPI_Reduce_local(from, into, mpiCount(ctx_, elements), r_.type, r_.op),
                   "MPI_Reduce_local");
      }
      mine.reduced.store(reducedMark(epoch_, c + 1), std::memory_order_release);
    }
  }

  /// Reads member k's reduced block from its result into mine, each chunk
  /// once k has counted it.
  void gatherFrom(int64_t k) {
    const SegmentHeader &peer = w_.header(k);
    int64_t size = r_.size, length = extent(k);
    uint64_t far = peer.result.load(std::memory_order_relaxed);
    for (int64_t c = 0; c < chunks_.count(length); ++c) {
      waitUntil([&] {
        return peer.reduced.load(std::memory_order_acquire) >= reducedMark(epoch_, c + 1);
      });
      int64_t at = (start(k) + chunks_.start(c)) * size;
      readFar(ctx_, static_cast<pid_t>(peer.pid), r_.out + at, far + static_cast<uint64_t>(at),
              chunks_.length(length, c) * size, r_.what, k);
    }
  }

  shardrt_context *ctx_;
  SharedWindow &w_;
  const ReduceBlocks &r_;
  Chunks chunks_;
  int64_t epoch_;
};

} // namespace

void reduceShared(shardrt_context *ctx, SharedWindow &window, const ReduceBlocks &blocks) {
  DirectReduction(ctx, window, blocks).run();
}

} // namespace shardrt
