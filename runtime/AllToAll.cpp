// shardrt_all_to_all (SPMD_CONTRACT.md section 2): block j of the operand
// (split along split_dim) goes to group member j, and member k's block becomes
// block k of the result (concatenated along concat_dim). With every block
// contiguous this is MPI_Ialltoall; otherwise, in a group on one node,
// through a shared window (SharedAllToAll.cpp), else in point-to-point chunks,
// each packed while the previous ones are on their way (class Exchange).
#include "runtime/AllToAll.h"
#include "runtime/Communicators.h"
#include "runtime/SharedWindows.h"

#include <sched.h>

#include <vector>

namespace shardrt {
namespace {

/// The exchange of strided blocks. MPI_Alltoall wants contiguous blocks,
/// which would cost a pack pass over the whole operand before anything is
/// sent. Here each block travels in chunks: one pass over a chunk's rows of
/// the operand copies the member's own piece straight into the result and
/// packs the others, which are sent at once while the next chunk is packed;
/// the other members pull the data (MPICH's UCX copies large messages between
/// processes with one kernel copy) while this one packs. A packed chunk goes
/// to one of kRingSlots places per member that stay in cache, when that
/// place's last send is done, else to its own place in a buffer as large as
/// the operand: a member never waits for a slow one (more ranks than cores)
/// before it has sent everything. Every receive is posted first,
/// into the result when the destination block is contiguous, else into a
/// scratch buffer that each chunk leaves for the result as soon as it has
/// arrived, while it is still in cache. MPI derived datatypes avoid the pack
/// too, but MPICH moved them 2.5x slower than a pack and a contiguous send.
class Exchange {
public:
  Exchange(shardrt_context *ctx, MPI_Comm comm, const AllToAllBlocks &blocks)
      : ctx_(ctx), comm_(comm), b_(blocks), type_(blocks.type), n_(blocks.n), block_(blocks.block),
        size_(blocks.size), chunks_(kAllToAllChunkBytes, size_), from_(blocks.from), to_(blocks.to),
        me_(blocks.me) {}

  void run() {
    int64_t count = chunks_.count(block_);
    if (packs()) {
      packed_ = scratchBuffer(ctx_, 0, n_ * block_ * size_);
      slotSend_.assign(static_cast<size_t>(kRingSlots * n_), -1);
    }
    if (to_.rows > 1)
      landing_ = scratchBuffer(ctx_, 1, n_ * block_ * size_);
    postReceives(count);
    sends_.assign(static_cast<size_t>(count * n_), MPI_REQUEST_NULL);
    for (int64_t c = 0; c < count; ++c)
      sendChunk(c);
    while (pending_ > 0)
      if (!serveReceives())
        sched_yield();
    waitServing(sends_.data(), static_cast<int>(sends_.size()), "MPI_Isend");
  }

private:
  /// 64 MiB on 2 ranks (docs/backend-and-runtime.md): chunks of 128 or
  /// 256 KiB and rings of 2 or 4 took 14.1-14.3 ms, 64 KiB chunks 15.1, no
  /// ring (every chunk in its own place) 16.6.
  static constexpr int64_t kRingSlots = 2;
  /// Receives tested per poll, from the oldest pending one on.
  static constexpr int64_t kPollWindow = 64;

  bool packs() const { return from_.rows > 1; }
  BlockView source(int64_t j) const { return b_.source(j); }
  BlockView target(int64_t k) const { return b_.target(k); }
  /// Member k's block as it arrives (contiguous), before it is unpacked.
  BlockView landed(int64_t k) const {
    return BlockView::contiguous(landing_ + k * block_ * size_, 0);
  }
  /// Where chunk c for member j is packed: the place of chunk `place` in
  /// j's block of the send buffer (c itself, or a ring slot < kRingSlots).
  char *packedChunk(int64_t j, int64_t place) const {
    return packed_ + (j * block_ + chunks_.start(place)) * size_;
  }
  /// The place for chunk c to member j: ring slot c mod kRingSlots when the
  /// last send from it is done (always for the first chunks), else c's own.
  int64_t placeFor(int64_t j, int64_t c) {
    int64_t slot = c % kRingSlots;
    int64_t &user = slotSend_[static_cast<size_t>(slot * n_ + j)];
    int done = 1;
    if (user >= 0)
      checkMpi(ctx_, MPI_Test(&sends_[static_cast<size_t>(user)], &done, MPI_STATUS_IGNORE),
               "MPI_Isend");
    if (!done)
      return c;
    user = c * n_ + j;
    return slot;
  }
  /// The member that the d-th receive of a chunk comes from, d = 0 .. n - 2:
  /// me - 1, me - 2, ... (and sends go to me + 1, me + 2, ...), so that no
  /// member is everyone's first.
  int64_t receivedFrom(int64_t d) const { return (me_ - 1 - d + n_) % n_; }

  void postReceives(int64_t count) {
    receives_.assign(static_cast<size_t>(count * (n_ - 1)), MPI_REQUEST_NULL);
    done_.resize(receives_.size());
    for (int64_t c = 0; c < count; ++c)
      for (int64_t d = 0; d + 1 < n_; ++d) {
        int64_t k = receivedFrom(d), first = chunks_.start(c);
        char *into = to_.rows > 1 ? landed(k).at(first, size_) : target(k).at(first, size_);
        checkMpi(ctx_,
                 MPI_Irecv(into, mpiCount(ctx_, chunks_.length(block_, c)), type_,
                           static_cast<int>(k), 0, comm_, &receives_[c * (n_ - 1) + d]),
                 "MPI_Irecv");
      }
    pending_ = static_cast<int64_t>(receives_.size());
    oldest_ = 0;
  }

  /// Packs chunk c of every block (the member's own one straight into the
  /// result) in one pass over its rows of the operand, and sends it.
  void sendChunk(int64_t c) {
    int64_t first = chunks_.start(c), last = first + chunks_.length(block_, c);
    // Where each member's piece goes: the result for my own, else (packed)
    // a place in the send buffer holding element `first` at its start.
    places_.assign(static_cast<size_t>(n_), target(me_));
    for (int64_t j = 0; j < n_; ++j)
      if (j != me_)
        places_[static_cast<size_t>(j)] =
            packs() ? BlockView::contiguous(packedChunk(j, placeFor(j, c)), first)
                    : BlockView{nullptr, 1, 0, 0};
    b_.scatterRows(places_.data(), first, last);
    for (int64_t d = 1; d < n_; ++d) {
      int64_t j = (me_ + d) % n_;
      const char *data = (packs() ? places_[static_cast<size_t>(j)] : source(j)).at(first, size_);
      checkMpi(ctx_,
               MPI_Isend(data, mpiCount(ctx_, last - first), type_, static_cast<int>(j), 0, comm_,
                         &sends_[static_cast<size_t>(c * n_ + j)]),
               "MPI_Isend");
    }
    serveReceives();
  }

  /// Completes the receives that have arrived (unpacking each into the
  /// result when it landed in scratch); whether any had.
  bool serveReceives() {
    while (oldest_ < static_cast<int64_t>(receives_.size()) &&
           receives_[static_cast<size_t>(oldest_)] == MPI_REQUEST_NULL)
      ++oldest_;
    if (pending_ == 0)
      return false;
    int window = static_cast<int>(
        std::min<int64_t>(kPollWindow, static_cast<int64_t>(receives_.size()) - oldest_));
    int completed = 0;
    checkMpi(ctx_,
             MPI_Testsome(window, receives_.data() + oldest_, &completed, done_.data(),
                          MPI_STATUSES_IGNORE),
             "MPI_Irecv");
    if (completed == MPI_UNDEFINED || completed == 0)
      return false;
    pending_ -= completed;
    for (int i = 0; to_.rows > 1 && i < completed; ++i) {
      int64_t index = oldest_ + done_[static_cast<size_t>(i)];
      int64_t c = index / (n_ - 1), k = receivedFrom(index % (n_ - 1));
      int64_t first = chunks_.start(c);
      copyRange(target(k), landed(k), first, first + chunks_.length(block_, c), size_);
    }
    return true;
  }

  /// Waits for `count` requests, serving receives meanwhile and yielding the
  /// core when nothing arrived (waitAll's reason).
  void waitServing(MPI_Request *requests, int count, const char *call) {
    for (;;) {
      int done = 0;
      checkMpi(ctx_, MPI_Testall(count, requests, &done, MPI_STATUSES_IGNORE), call);
      if (done)
        return;
      if (!serveReceives())
        sched_yield();
    }
  }

  shardrt_context *ctx_;
  MPI_Comm comm_;
  const AllToAllBlocks &b_;
  MPI_Datatype type_;
  int64_t n_, block_, size_;
  Chunks chunks_;
  Interleaved from_, to_;
  int64_t me_;
  char *packed_ = nullptr, *landing_ = nullptr;
  std::vector<MPI_Request> receives_, sends_;
  /// Per ring slot and member, the index in sends_ of its last send (-1: none).
  std::vector<int64_t> slotSend_;
  std::vector<BlockView> places_;
  std::vector<int> done_;
  int64_t pending_ = 0, oldest_ = 0;
};

} // namespace

void exchangePointToPoint(shardrt_context *ctx, MPI_Comm comm, const AllToAllBlocks &blocks) {
  Exchange(ctx, comm, blocks).run();
}

} // namespace shardrt

using namespace shardrt;

extern "C" {

void shardrt_all_to_all(shardrt_context *ctx, int64_t op, const shardrt_group *group, int64_t dtype,
                        int64_t ndims, const int64_t *shape, int64_t split_dim, int64_t concat_dim,
                        const void *in, void *out) {
  checkDim(ctx, "all_to_all", ndims, split_dim);
  checkDim(ctx, "all_to_all", ndims, concat_dim);
  double start = now();
  int64_t size = elementSize(ctx, dtype), local = product(shape, 0, ndims);
  const Group &g = ctx->comms->get(*group);
  int64_t n = g.size;
  if (shape[split_dim] % n != 0)
    internalError(ctx, format("all_to_all: split dim %lld of size %lld over %lld devices",
                              static_cast<long long>(split_dim),
                              static_cast<long long>(shape[split_dim]), static_cast<long long>(n)));
  if (local == 0) {
    // An empty operand (every member's is: SPMD) moves nothing; the shared
    // window's handshakes count blocks of at least one chunk.
  } else if (n == 1) {
    std::memcpy(out, in, static_cast<size_t>(local * size));
  } else {
    // Each block has the operand's shape with split_dim divided by n.
    std::vector<int64_t> blockShape(shape, shape + ndims);
    blockShape[split_dim] /= n;
    int64_t block = local / n;
    Interleaved from{product(shape, 0, split_dim),
                     blockShape[split_dim] * product(shape, split_dim + 1, ndims)};
    Interleaved to{product(blockShape.data(), 0, concat_dim),
                   product(blockShape.data(), concat_dim, ndims)};
    if (from.rows == 1 && to.rows == 1) { // every block contiguous: MPI's own
      MPI_Request request;
      int count = mpiCount(ctx, block);
      checkMpi(
          ctx,
          MPI_Ialltoall(in, count, mpiType(dtype), out, count, mpiType(dtype), g.comm, &request),
          "MPI_Ialltoall");
      waitAll(ctx, 1, &request, "MPI_Ialltoall");
    } else {
      AllToAllBlocks blocks{mpiType(dtype),
                            n,
                            block,
                            size,
                            from,
                            to,
                            static_cast<char *>(const_cast<void *>(in)),
                            static_cast<char *>(out),
                            g.index};
      SharedWindow *window = ctx->windows->get(g.comm, n);
      if (!window || !exchangeShared(ctx, *window, blocks))
        exchangePointToPoint(ctx, g.comm, blocks);
    }
  }
  recordCollective(ctx, op, Collective::AllToAll, start,
                   static_cast<double>((n - 1) * (local / n) * size));
}

} // extern "C"
