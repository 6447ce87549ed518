// The all_to_all of a group on one node, through its shared window
// (SharedWindows.h), in one of two ways. Direct: each member's blocks go
// from its operand straight into the others' results by one kernel copy
// (process_vm_writev, or process_vm_readv when the operand side is the
// contiguous one), as MPICH moves a large message between processes of a
// node; the window only carries the buffers' addresses and the handshakes.
// Packed: each member packs its blocks for the others into its own segment,
// chunk by chunk, and the others copy them out into their results as the
// chunks appear. Either way a member's own block goes from operand to result.
#include "runtime/AllToAll.h"
#include "runtime/SharedWindows.h"

#include <sched.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstdint>
#include <vector>

namespace shardrt {
namespace {

/// A packed exchange. Segment of member m: the blocks of members m + 1,
/// m + 2, ... (mod n) in that order, each whole; m's header counts the
/// chunks it has packed (chunk c of every block at once) and the exchanges
/// it has finished reading. A member packs only once every other member has
/// finished reading the previous exchange from its segment.
class PackedExchange {
public:
  PackedExchange(SharedWindow &window, const AllToAllBlocks &blocks)
      : w_(window), b_(blocks), chunks_(kAllToAllChunkBytes, blocks.size),
        count_(chunks_.count(blocks.block)), before_(window.packedChunks) {}

  void run() {
    int64_t n = b_.n, me = b_.me;
    for (int64_t k = 0; k < n; ++k)
      if (k != me)
        waitUntil([&] {
          return w_.header(k).finished.load(std::memory_order_acquire) >= w_.finishedExchanges;
        });
    places_.resize(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j)
      places_[static_cast<size_t>(j)] =
          j == me ? b_.target(me) : BlockView::contiguous(outgoing(me, j), 0);
    copied_.assign(static_cast<size_t>(n), 0);
    copied_[static_cast<size_t>(me)] = count_;
    remaining_ = (n - 1) * count_;
    SegmentHeader &mine = w_.header(me);
    for (int64_t c = 0; c < count_; ++c) {
      int64_t first = chunks_.start(c);
      b_.scatterRows(places_.data(), first, first + chunks_.length(b_.block, c));
      mine.packed.store(before_ + c + 1, std::memory_order_release);
      copyArrived();
    }
    while (remaining_ > 0)
      if (!copyArrived())
        sched_yield();
    w_.packedChunks += count_;
  }

private:
  /// Where member `from` packs member `to`'s block in its segment.
  char *outgoing(int64_t from, int64_t to) const {
    int64_t slot = (to - from - 1 + b_.n) % b_.n;
    return w_.data(from) + slot * b_.block * b_.size;
  }

  /// Copies every chunk published since the last call into the result,
  /// from members me - 1, me - 2, ... (the ones that packed for us first);
  /// whether there was any.
  bool copyArrived() {
    bool any = false;
    for (int64_t d = 1; d < b_.n; ++d) {
      int64_t k = (b_.me - d + b_.n) % b_.n;
      int64_t &done = copied_[static_cast<size_t>(k)];
      int64_t ready =
          std::min(count_, w_.header(k).packed.load(std::memory_order_acquire) - before_);
      if (done >= ready)
        continue;
      int64_t first = chunks_.start(done),
              last = chunks_.start(ready - 1) + chunks_.length(b_.block, ready - 1);
      copyRange(b_.target(k), BlockView::contiguous(outgoing(k, b_.me), 0), first, last, b_.size);
      remaining_ -= ready - done;
      done = ready;
      any = true;
    }
    return any;
  }

  SharedWindow &w_;
  const AllToAllBlocks &b_;
  Chunks chunks_;
  int64_t count_;
  int64_t before_; ///< chunks every member had packed before this exchange
  std::vector<BlockView> places_;
  std::vector<int64_t> copied_; ///< per member, its chunks copied so far
  int64_t remaining_ = 0;
};

/// A direct exchange. Each member posts its operand and result, then moves
/// its block to (or from) each member that has posted with kernel copies,
/// and counts each finished block in the other member's header; it returns
/// once every other member has counted its block here, so its operand and
/// result are free again. The kernel copies at a cost per contiguous run of
/// the far buffer (it pins those pages) and, smaller, per run of the near
/// one (a 512-byte run costs about as much as its bytes), so each chunk is
/// moved as one run: one pass over a chunk's rows of the operand copies the
/// own piece into the result and packs the pieces for the members that have
/// posted, each into a chunk-sized slot that is written at once, while in
/// cache (on reads: read into the slot, then unpacked). A member that posts
/// late gets its earlier chunks packed for it alone.
class DirectExchange {
public:
  DirectExchange(shardrt_context *ctx, SharedWindow &window, const AllToAllBlocks &blocks)
      : ctx_(ctx), w_(window), b_(blocks), chunks_(kAllToAllChunkBytes, blocks.size),
        count_(chunks_.count(blocks.block)), epoch_(window.directExchanges + 1),
        // The far side contiguous when either is (else written, strided).
        writes_(blocks.to.rows == 1 || blocks.from.rows > 1) {}

  void run() {
    int64_t n = b_.n, me = b_.me;
    SegmentHeader &mine = w_.header(me);
    mine.post(b_.in, b_.out, epoch_);
    slots_ = scratchBuffer(ctx_, 0, (n - 1) * chunks_.size * b_.size);
    moved_.assign(static_cast<size_t>(n), 0);
    moved_[static_cast<size_t>(me)] = count_;
    left_ = (n - 1) * count_;
    places_.assign(static_cast<size_t>(n), BlockView{nullptr, 1, 0, 0});
    if (writes_) {
      for (int64_t c = 0; c < count_; ++c)
        writeChunk(c);
    } else {
      copyRange(b_.target(me), b_.source(me), 0, b_.block, b_.size);
    }
    while (left_ > 0)
      if (!catchUp(count_))
        sched_yield(); // more ranks than cores: let the member we wait for run
    w_.directExchanges = epoch_;
    waitUntil([&] { return mine.accessed.load(std::memory_order_acquire) >= epoch_ * (n - 1); });
  }

private:
  /// Up to this many runs per system call (the kernel's IOV_MAX).
  static constexpr size_t kRunsPerCall = 1024;

  /// Member k's chunk-sized slot; as a view of its block, holding chunk c.
  char *slot(int64_t k) const {
    return slots_ + ((k - b_.me - 1 + b_.n) % b_.n) * chunks_.size * b_.size;
  }
  BlockView slotView(int64_t k, int64_t c) const {
    return BlockView::contiguous(slot(k), chunks_.start(c));
  }
  bool posted(int64_t k) const {
    return w_.header(k).posted.load(std::memory_order_acquire) >= epoch_;
  }

  /// Chunk c: the own piece and those of the members that have posted and
  /// have every earlier chunk, in one pass; then sent.
  void writeChunk(int64_t c) {
    catchUp(c);
    int64_t first = chunks_.start(c), last = first + chunks_.length(b_.block, c);
    for (int64_t k = 0; k < b_.n; ++k) {
      bool now = k != b_.me && moved_[static_cast<size_t>(k)] == c && posted(k);
      places_[static_cast<size_t>(k)] = k == b_.me ? b_.target(k)
                                        : now      ? slotView(k, c)
                                                   : BlockView{nullptr, 1, 0, 0};
    }
    b_.scatterRows(places_.data(), first, last);
    for (int64_t k = 0; k < b_.n; ++k)
      if (k != b_.me && places_[static_cast<size_t>(k)].base)
        moveChunk(k, c);
  }

  /// Moves chunks before `upTo` to or from every member that has posted
  /// (writes: packing each for that member alone); whether there were any.
  bool catchUp(int64_t upTo) {
    bool any = false;
    for (int64_t d = 1; d < b_.n; ++d) {
      int64_t k = (b_.me + d) % b_.n;
      if (moved_[static_cast<size_t>(k)] >= upTo || !posted(k))
        continue;
      places_.assign(static_cast<size_t>(b_.n), BlockView{nullptr, 1, 0, 0});
      for (int64_t c = moved_[static_cast<size_t>(k)]; c < upTo; ++c) {
        int64_t first = chunks_.start(c), last = first + chunks_.length(b_.block, c);
        if (writes_) {
          places_[static_cast<size_t>(k)] = slotView(k, c);
          b_.scatterRows(places_.data(), first, last);
        }
        moveChunk(k, c);
      }
      any = true;
    }
    return any;
  }

  /// Moves chunk c of my block for k from its slot into k's result, or of
  /// k's block for me from k's operand through its slot into my result.
  void moveChunk(int64_t k, int64_t c) {
    SegmentHeader &peer = w_.header(k);
    int64_t first = chunks_.start(c), last = first + chunks_.length(b_.block, c);
    transfer(k, peer, slotView(k, c), first, last);
    if (!writes_)
      copyRange(b_.target(k), slotView(k, c), first, last, b_.size);
    int64_t &done = moved_[static_cast<size_t>(k)];
    done = c + 1;
    --left_;
    if (done == count_)
      peer.accessed.fetch_add(1, std::memory_order_release);
  }

  /// Elements [first, last) of a block between `near` here and k's result
  /// (writes) or operand (reads), whose layout is mine.
  void transfer(int64_t k, const SegmentHeader &peer, const BlockView &near, int64_t first,
                int64_t last) {
    BlockView far = writes_ ? b_.target(b_.me) : b_.source(b_.me);
    const char *mineBase = writes_ ? b_.out : b_.in;
    far.base = reinterpret_cast<char *>(
                   (writes_ ? peer.result : peer.operand).load(std::memory_order_relaxed)) +
               (far.base - mineBase);
    near_.assign(near, first, last, b_.size);
    far_.assign(far, first, last, b_.size);
    pid_t pid = static_cast<pid_t>(peer.pid);
    while (!near_.done()) {
      iovec nearCall[kRunsPerCall], farCall[kRunsPerCall];
      size_t nearCount = 0, farCount = 0;
      size_t bytes = near_.take(nearCall, nearCount, SIZE_MAX);
      size_t farBytes = far_.take(farCall, farCount, bytes);
      if (farBytes < bytes)
        near_.take(nearCall, nearCount, farBytes);
      ssize_t done = writes_ ? process_vm_writev(pid, nearCall, nearCount, farCall, farCount, 0)
                             : process_vm_readv(pid, nearCall, nearCount, farCall, farCount, 0);
      if (done <= 0)
        fail(ctx_, format("all_to_all: %s with member %lld failed: %s",
                          writes_ ? "process_vm_writev" : "process_vm_readv",
                          static_cast<long long>(k), done < 0 ? std::strerror(errno) : "no bytes"));
      near_.advance(static_cast<size_t>(done));
      far_.advance(static_cast<size_t>(done));
    }
  }

  /// The contiguous runs of one side of a transfer, and how far the
  /// transfer has got: the kernel takes each side as one stream of bytes.
  struct Runs {
    std::vector<iovec> runs;
    size_t index = 0, offset = 0;

    void assign(const BlockView &view, int64_t first, int64_t last, int64_t size) {
      runs.clear();
      index = offset = 0;
      for (int64_t e = first; e < last;) {
        int64_t run = std::min(last - e, view.runFrom(e));
        runs.push_back({view.at(e, size), static_cast<size_t>(run * size)});
        e += run;
      }
    }
    bool done() const { return index == runs.size(); }
    /// Fills `out` with up to kRunsPerCall runs from here on, of at most
    /// `limit` bytes in all; their bytes.
    size_t take(iovec *out, size_t &count, size_t limit) const {
      size_t bytes = 0, skip = offset;
      count = 0;
      for (size_t i = index; i < runs.size() && count < kRunsPerCall && bytes < limit; ++i) {
        size_t length = std::min(runs[i].iov_len - skip, limit - bytes);
        out[count++] = {static_cast<char *>(runs[i].iov_base) + skip, length};
        bytes += length;
        skip = 0;
      }
      return bytes;
    }
    /// Moves past `bytes` bytes (a short transfer ends anywhere).
    void advance(size_t bytes) {
      while (bytes > 0) {
        size_t step = std::min(bytes, runs[index].iov_len - offset);
        offset += step;
        bytes -= step;
        if (offset == runs[index].iov_len) {
          ++index;
          offset = 0;
        }
      }
    }
  };

  shardrt_context *ctx_;
  SharedWindow &w_;
  const AllToAllBlocks &b_;
  Chunks chunks_;
  int64_t count_, epoch_;
  bool writes_;
  char *slots_ = nullptr;
  std::vector<BlockView> places_;
  std::vector<int64_t> moved_; ///< per member, its chunks moved
  int64_t left_ = 0;           ///< chunks still to move
  Runs near_, far_;
};

} // namespace

bool exchangeShared(shardrt_context *ctx, SharedWindow &window, const AllToAllBlocks &blocks) {
  SharedWindows &windows = *ctx->windows;
  AllToAllPath forced = windows.forced();
  // Kernel copies cost a page pinning per run of the far buffer: direct
  // only when one side's blocks are contiguous (unless forced). With more
  // ranks than cores a direct member waits for each other one to be
  // scheduled and post before it can send; a packed one never waits to
  // pack (8 ranks on 2 cores: 16 MiB packed 26.6 ms, direct 38.9).
  bool direct = forced == AllToAllPath::Direct ||
                (forced == AllToAllPath::Auto && window.direct() && !windows.crowded(window) &&
                 (blocks.to.rows == 1 || blocks.from.rows == 1));
  if (direct) {
    DirectExchange(ctx, window, blocks).run();
    windows.directExchanges += 1;
  } else {
    if (!windows.reserve(window, (blocks.n - 1) * blocks.block * blocks.size))
      return false;
    PackedExchange(window, blocks).run();
    windows.packedExchanges += 1;
  }
  window.finishedExchanges += 1;
  window.header(blocks.me).finished.store(window.finishedExchanges, std::memory_order_release);
  windows.releaseAfterUse(window);
  return true;
}

} // namespace shardrt
