// Node-shared MPI windows (MPI-3 shared memory) for the all_to_all, the
// all_gather and the reductions of groups whose members all share one node:
// one window per group communicator, made on first use, grown collectively,
// freed before MPI_Finalize.
#pragma once

#include "runtime/Context.h"

#include <sched.h>

#include <atomic>
#include <map>
#include <memory>
#include <vector>

namespace shardrt {

/// What a member publishes at the start of its segment, each group of fields
/// on its own cache line. Lock-free atomics are address-free, so they work
/// between processes that map the same memory; counts go on over the
/// window's life.
struct SegmentHeader {
  /// The owner's process and where this header sits in its address space
  /// (set when the window is made): the kernel-copy probe reads them.
  alignas(64) int64_t pid;
  uint64_t self;
  /// Direct exchanges: how many the owner has entered, and its operand and
  /// result of the latest one (published by `posted`).
  alignas(64) std::atomic<int64_t> posted;
  std::atomic<uint64_t> operand, result;
  /// Packed exchanges: the chunks the owner has packed into its segment.
  alignas(64) std::atomic<int64_t> packed;
  /// Exchanges (of either kind) whose reading the owner has finished.
  alignas(64) std::atomic<int64_t> finished;
  /// Direct exchanges: the blocks other members have finished moving to or
  /// from the owner's buffers.
  alignas(64) std::atomic<int64_t> accessed;
  /// Direct reductions: (exchange << 32) | the chunks of the owner's block
  /// it has reduced into its result so far in that exchange.
  alignas(64) std::atomic<uint64_t> reduced;

  /// Publishes the owner's buffers for direct exchange `epoch`.
  void post(const void *in, const void *out, int64_t epoch) {
    operand.store(reinterpret_cast<uint64_t>(in), std::memory_order_relaxed);
    result.store(reinterpret_cast<uint64_t>(out), std::memory_order_relaxed);
    posted.store(epoch, std::memory_order_release);
  }
};
static_assert(std::atomic<int64_t>::is_always_lock_free, "atomics in shared memory");
static_assert(std::atomic<uint64_t>::is_always_lock_free, "atomics in shared memory");

/// One group's window: each member's segment is a SegmentHeader, then
/// `capacity` bytes of data; every member sees every segment.
class SharedWindow {
public:
  SharedWindow(MPI_Comm comm, int64_t members) : comm_(comm), members_(members) {}

  /// Where member k's data starts (a page after its header).
  char *data(int64_t k) const { return segments_[static_cast<size_t>(k)] + kDataOffset; }
  SegmentHeader &header(int64_t k) const {
    return *reinterpret_cast<SegmentHeader *>(segments_[static_cast<size_t>(k)]);
  }

  /// Whether the kernel may copy between every two members' memory
  /// (process_vm_writev/readv: same user, no ptrace restriction).
  bool direct() const { return direct_; }

  /// Ends direct exchange `epoch` of member `me` (a direct all_to_all, an
  /// overlapped all_gather, SharedCollectives.cpp's collectives): waits
  /// until every other member has counted its accesses to me done, then
  /// counts the exchange finished. Every member ends every exchange, so the
  /// counts stay the same on all of them.
  void finishDirect(int64_t me, int64_t epoch);

  /// This member's counts so far (the same on every member between
  /// exchanges: each one does the same ones).
  int64_t packedChunks = 0;
  int64_t finishedExchanges = 0;
  int64_t directExchanges = 0;

private:
  friend class SharedWindows;
  static constexpr int64_t kDataOffset = 4096;
  static_assert(sizeof(SegmentHeader) <= kDataOffset, "the header fits before the data");

  MPI_Comm comm_;
  int64_t members_;
  MPI_Win win_ = MPI_WIN_NULL;
  int64_t capacity_ = 0;
  bool direct_ = false;
  std::vector<char *> segments_;
};

/// How strided all_to_all blocks travel: SHARDRT_A2A=messages (point to
/// point), packed or direct (through a shared window; a group it cannot
/// serve is an error); unset: direct where it serves the layout, else packed
/// where the group shares a window, else messages.
enum class AllToAllPath { Auto, Messages, Packed, Direct };

/// How all_reduce, reduce_scatter and all_gather travel from 4 KiB on:
/// SHARDRT_COLLECTIVES=messages (MPI) or direct (through the group's shared
/// window, SharedCollectives.cpp; a group it cannot serve is an error);
/// unset: direct where the group shares a window that the kernel copies
/// through and the node has a core per rank.
enum class CollectivePath { Auto, Messages, Direct };

/// A reduction of `count` elements of `in`, split into n blocks
/// (support/BlockLayout.h): member k reduces block k. With `gather` (an
/// all_reduce) `out` holds all `count` elements and every member's reduced
/// block lands in its place; without (a reduce_scatter) `out` is this
/// member's block only. `in` may be `out`.
struct ReduceBlocks {
  int64_t n, me, count, size;
  int64_t dtype, kind; ///< SHARDRT_F32..., SHARDRT_SUM...
  MPI_Datatype type;   ///< and their MPI type and op
  MPI_Op op;
  const char *in;
  char *out;
  bool gather;
  const char *what; ///< the collective, for errors
};

/// Runs `blocks` through `window` (SharedCollectives.cpp). Collective over the
/// window's group.
void reduceShared(shardrt_context *ctx, SharedWindow &window, const ReduceBlocks &blocks);

/// all_gather through `window` of each of the n members' `rows` rows of
/// `rowBytes`: member k's row r lands at out + (r * n + k) * rowBytes.
/// Collective over the window's group.
void gatherShared(shardrt_context *ctx, SharedWindow &window, int64_t n, int64_t me, const void *in,
                  int64_t rows, int64_t rowBytes, char *out);

/// Yields the core until `ready()`: with more ranks than cores, the member
/// we wait for needs it.
template <typename Ready> void waitUntil(Ready &&ready) {
  while (!ready())
    sched_yield();
}

/// Copies `bytes` from address `far` in process `pid` to `near` here
/// (process_vm_readv, repeated until all have come); fails naming `what`
/// and member k when the kernel refuses.
void readFar(shardrt_context *ctx, pid_t pid, void *near, uint64_t far, int64_t bytes,
             const char *what, int64_t k);
/// The same for `rows` rows of `rowBytes`, contiguous at `far` and `stride`
/// bytes apart from `near` on.
void readFarRows(shardrt_context *ctx, pid_t pid, char *near, int64_t stride, int64_t rows,
                 int64_t rowBytes, uint64_t far, const char *what, int64_t k);

/// The windows of the run.
class SharedWindows {
public:
  explicit SharedWindows(shardrt_context *ctx);
  ~SharedWindows();
  SharedWindows(const SharedWindows &) = delete;
  SharedWindows &operator=(const SharedWindows &) = delete;

  /// The window of group communicator `comm` (of `members` members), made
  /// now if need be with headers only; nullptr when the group's all_to_all
  /// goes point to point. Collective over `comm` (SPMD: every member asks
  /// at the same all_to_all, so all of them make it or skip alike).
  SharedWindow *get(MPI_Comm comm, int64_t members);

  /// Grows `window` to at least `bytes` of data per member (a packed
  /// exchange); false when it could not, and the group goes point to point
  /// from now on. Collective over the window's group (every member asks
  /// with the same bytes).
  bool reserve(SharedWindow &window, int64_t bytes);

  /// SHARDRT_A2A's choice.
  AllToAllPath forced() const { return mode_; }
  /// The window of a collective's group when it goes direct (the choice of
  /// CollectivePath), else nullptr. Collective over `comm`, as get().
  SharedWindow *forDirect(MPI_Comm comm, int64_t members);

  /// Whether this node runs more ranks than it has cores (the launcher's
  /// count of ranks on the node, else at least the window's members).
  bool crowded(const SharedWindow &window) const;

  /// The data bytes per member that the windows hold now.
  int64_t dataBytes() const {
    int64_t bytes = 0;
    for (const auto &window : windows_)
      bytes += window->capacity_;
    return bytes;
  }

  /// The exchanges of this run so far, by path (the tests check the path).
  int64_t directExchanges = 0;
  int64_t packedExchanges = 0;

  /// Frees `window` when it holds data and the program runs under a memory
  /// budget (release_scratch: the compiler counted the exchange's memory at
  /// the collective only); else nothing. Collective over the window's group.
  void releaseAfterUse(SharedWindow &window);

private:
  /// Whether every member of `comm` shares this rank's node. Collective.
  bool onOneNode(MPI_Comm comm, int64_t members);
  /// Makes the window of `comm` with `bytes` per member; false when MPI
  /// could not make it on some member. Collective.
  bool allocate(SharedWindow &window, int64_t bytes);
  /// Whether this member's kernel copies reach every other member (it reads
  /// each one's header through process_vm_readv) on every member. Collective.
  bool kernelCopiesWork(SharedWindow &window);
  /// Frees the window's memory (collective over its group).
  void free(SharedWindow &window);
  [[noreturn]] void cannotShare(MPI_Comm comm, const char *why,
                                const char *forcedBy = "SHARDRT_A2A");

  shardrt_context *ctx_;
  AllToAllPath mode_ = AllToAllPath::Auto;
  CollectivePath collectiveMode_ = CollectivePath::Auto;
  int64_t ranksOnNode_ = 0; ///< as the launcher says (0: it does not)
  int64_t cores_ = 1;
  /// Per group communicator: its window, or null when it goes point to
  /// point. Windows are freed in the order they were made, the same on
  /// every rank (every rank makes them in program order), so that the
  /// collective frees of overlapping groups never wait on each other.
  std::map<MPI_Comm, SharedWindow *> byComm_;
  std::vector<std::unique_ptr<SharedWindow>> windows_;
};

} // namespace shardrt
