// all_reduce, reduce_scatter and all_gather of a group on one node, through
// its shared window (SharedWindows.h) by kernel copies: no MPI message.
//
// Every such collective is a Session: each member posts its operand's and its
// result's addresses in its header, reads what it needs from the others'
// buffers with process_vm_readv, counts its reads done in their headers, and
// leaves once every other member has counted its reads of its own buffers.
//
// all_gather: each member reads every other member's operand straight into
// its place in the result, one kernel copy per block.
//
// Reductions: the operand is n blocks (support/BlockLayout.h), member k
// reduces block k. Chunk by chunk of its block, a member reads that chunk of
// every other member's operand into a slot of its own that stays in cache,
// then sums its own chunk and the slots into its result in one pass (max and
// min: copies its own chunk and applies MPI_Reduce_local slot by slot), in
// member order as the messages' way does: the same bits. It counts each
// reduced chunk in its header; an all_reduce then reads the other members'
// reduced chunks from their results straight into its own as they are
// counted.
//
// Why: through MPI messages each block is copied into a receive buffer as
// large as the block, read back for the reduction, and the reduced blocks are
// copied again by the all-gather, each copy through MPICH's shared cells
// (16 MiB on 2 ranks: 9.8-12.9 ms, about five passes over the operand at
// this machine's memory bandwidth); here a member's memory traffic is its
// own block read, the others' chunks read once, its result written once.
#include "runtime/SharedWindows.h"
#include "support/BlockLayout.h"

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

/// One direct collective of member `me` of n on `window`: posts its buffers
/// and waits until every other member has posted; finish() counts its reads
/// done in the others' headers and waits for theirs of its own buffers. The
/// window's epochs advance as for all_to_all's direct exchanges (the same on
/// every member), so all of them alternate on one window.
class Session {
public:
  Session(SharedWindow &window, int64_t n, int64_t me, const void *in, const void *out)
      : w_(window), n_(n), me_(me), epoch_(window.directExchanges + 1) {
    w_.header(me).post(in, out, epoch_);
    for (int64_t k = 0; k < n; ++k)
      if (k != me)
        waitUntil([&] { return w_.header(k).posted.load(std::memory_order_acquire) >= epoch_; });
  }

  int64_t epoch() const { return epoch_; }

  void finish() {
    for (int64_t k = 0; k < n_; ++k)
      if (k != me_)
        w_.header(k).accessed.fetch_add(1, std::memory_order_release);
    w_.finishDirect(me_, epoch_);
  }

private:
  SharedWindow &w_;
  int64_t n_, me_, epoch_;
};

class DirectReduction {
public:
  DirectReduction(shardrt_context *ctx, SharedWindow &window, const ReduceBlocks &r)
      : ctx_(ctx), w_(window), r_(r), chunks_(kReduceChunkBytes, r.size),
        session_(window, r.n, r.me, r.in, r.out) {}

  void run() {
    reduceMine();
    if (r_.gather)
      for (int64_t d = 1; d < r_.n; ++d)
        gatherFrom((r_.me + d) % r_.n);
    session_.finish();
  }

private:
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
      mine.reduced.store(reducedMark(session_.epoch(), c + 1), std::memory_order_release);
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
        return peer.reduced.load(std::memory_order_acquire) >= reducedMark(session_.epoch(), c + 1);
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
  Session session_;
};

} // namespace

void reduceShared(shardrt_context *ctx, SharedWindow &window, const ReduceBlocks &blocks) {
  DirectReduction(ctx, window, blocks).run();
}

void gatherShared(shardrt_context *ctx, SharedWindow &window, int64_t n, int64_t me, const void *in,
                  int64_t rows, int64_t rowBytes, char *out) {
  Session session(window, n, me, in, out);
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(out + (r * n + me) * rowBytes, static_cast<const char *>(in) + r * rowBytes,
                static_cast<size_t>(rowBytes));
  for (int64_t d = 1; d < n; ++d) {
    int64_t k = (me + d) % n;
    const SegmentHeader &peer = window.header(k);
    readFarRows(ctx, static_cast<pid_t>(peer.pid), out + k * rowBytes, n * rowBytes, rows, rowBytes,
                peer.operand.load(std::memory_order_relaxed), "all_gather", k);
  }
  session.finish();
}

} // namespace shardrt
