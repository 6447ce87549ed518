// The collectives over mesh axes (SPMD_CONTRACT.md section 2), on the group's
// cached communicator: MPI nonblocking collectives, or for reduce_scatter and
// large all_reduce nonblocking point-to-point messages (faster here, see
// reduceBlocksPipelined), all waited for with MPI_Testall + sched_yield
// (waitAll); where a group's members share a node with a core each,
// all_reduce, reduce_scatter and all_gather of 4 KiB and more go through its
// shared window instead (SharedCollectives.cpp); all_to_all is in
// AllToAll.cpp. MPI moves whole contiguous blocks, one per group member, so
// a dim that is not the outermost is packed into per-member blocks before the
// call and unpacked after it.
//
// Worked example, all_gather of a 2x3 operand along dim 1 over 2 members:
// MPI_Allgather yields [member 0's 2x3][member 1's 2x3]; the result 2x6 takes
// row o as member 0's row o then member 1's row o (outer = 2 rows, each
// member's slab = 3 elements).
#include "runtime/Communicators.h"
#include "runtime/SharedWindows.h"
#include "support/BlockLayout.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace shardrt {

void checkDim(shardrt_context *ctx, const char *what, int64_t ndims, int64_t dim) {
  if (ndims < 0 || dim < 0 || dim >= ndims)
    internalError(ctx, format("%s: dim %lld out of range for rank %lld", what,
                              static_cast<long long>(dim), static_cast<long long>(ndims)));
}

namespace {

/// Copies `count` blocks of `bytes` bytes from src (block i at i*srcStride)
/// to dst (block i at i*dstStride).
void copyBlocks(char *dst, int64_t dstStride, const char *src, int64_t srcStride, int64_t count,
                int64_t bytes) {
  for (int64_t i = 0; i < count; ++i)
    std::memcpy(dst + i * dstStride, src + i * srcStride, static_cast<size_t>(bytes));
}

/// The MPI type and op of a reduction: sums of integers use unsigned types
/// so that they wrap (the contract's integer semantics); float max/min keep
/// NaN (the context's own ops).
void reductionTypeAndOp(shardrt_context *ctx, int64_t dtype, int64_t kind, MPI_Datatype &type,
                        MPI_Op &op) {
  if (kind != SHARDRT_SUM && kind != SHARDRT_MAX && kind != SHARDRT_MIN)
    internalError(ctx, format("unknown reduction kind %lld", static_cast<long long>(kind)));
  if (dtype == SHARDRT_I1 && kind == SHARDRT_SUM)
    internalError(ctx, "a sum of i1 values");
  bool isFloat = dtype == SHARDRT_F32 || dtype == SHARDRT_F64;
  type = mpiType(dtype);
  if (kind == SHARDRT_SUM) {
    op = MPI_SUM;
    if (dtype == SHARDRT_I32)
      type = MPI_UINT32_T;
    if (dtype == SHARDRT_I64)
      type = MPI_UINT64_T;
  } else if (isFloat) {
    op = kind == SHARDRT_MAX ? ctx->floatMax : ctx->floatMin;
  } else {
    op = kind == SHARDRT_MAX ? MPI_MAX : MPI_MIN;
  }
}

/// The reduction of `count` elements of `in` split into n blocks of `block`
/// elements (the last ones shorter or empty when n does not divide count):
/// member k gets block k of every member and reduces them into `mine`. Each
/// block travels in chunks, and each chunk is reduced as soon as it has
/// arrived, while the later chunks are still on their way, so the reduction
/// costs little beyond the transfer. MPICH 4.0's reduce-scatter (blocking or
/// not) took 58-70 ms for 64 MiB on 2 ranks, this 19-23 ms. The reductions are
/// MPI_Reduce_local with the call's type and op, in member order. `mine` may
/// be `in`'s own block.
void reduceBlocksPipelined(shardrt_context *ctx, MPI_Comm comm, int64_t n, int64_t count,
                           int64_t block, int64_t size, MPI_Datatype type, MPI_Op reduction,
                           const char *in, char *mine) {
  const Chunks chunks(int64_t(1) << 20, size);
  int me = 0;
  checkMpi(ctx, MPI_Comm_rank(comm, &me), "MPI_Comm_rank");
  auto blockLength = [&](int64_t k) { return shardc::support::blockExtent(count, n, k); };
  auto chunksOf = [&](int64_t k) { return chunks.count(blockLength(k)); };
  auto chunkLength = [&](int64_t k, int64_t c) { return chunks.length(blockLength(k), c); };
  int64_t length = blockLength(me), myChunks = chunksOf(me);
  // What member k sends me lands in slot k (me excluded) of the scratch buffer.
  char *received = scratchBuffer(ctx, 1, (n - 1) * length * size);
  auto slot = [&](int64_t k) { return received + (k < me ? k : k - 1) * length * size; };
  // Receives chunk by chunk (chunk c's n - 1 requests side by side), then the
  // sends. Messages between two members arrive in the order they were sent.
  std::vector<MPI_Request> requests;
  for (int64_t c = 0; c < myChunks; ++c)
    for (int64_t k = 0; k < n; ++k)
      if (k != me) {
        requests.emplace_back();
        checkMpi(ctx,
                 MPI_Irecv(slot(k) + chunks.start(c) * size, mpiCount(ctx, chunkLength(me, c)),
                           type, static_cast<int>(k), 0, comm, &requests.back()),
                 "MPI_Irecv");
      }
  size_t receives = requests.size();
  for (int64_t j = 0; j < n; ++j)
    for (int64_t c = 0; j != me && c < chunksOf(j); ++c) {
      requests.emplace_back();
      checkMpi(ctx,
               MPI_Isend(in + (j * block + chunks.start(c)) * size,
                         mpiCount(ctx, chunkLength(j, c)), type, static_cast<int>(j), 0, comm,
                         &requests.back()),
               "MPI_Isend");
    }
  const char *own = in + me * block * size;
  if (own != mine)
    std::memcpy(mine, own, static_cast<size_t>(length * size));
  for (int64_t c = 0; c < myChunks; ++c) {
    waitAll(ctx, static_cast<int>(n - 1), requests.data() + c * (n - 1), "MPI_Irecv");
    for (int64_t k = 0; k < n; ++k)
      if (k != me)
        checkMpi(ctx,
                 MPI_Reduce_local(slot(k) + chunks.start(c) * size, mine + chunks.start(c) * size,
                                  mpiCount(ctx, chunkLength(me, c)), type, reduction),
                 "MPI_Reduce_local");
  }
  waitAll(ctx, static_cast<int>(requests.size() - receives), requests.data() + receives,
          "MPI_Isend");
}

/// From this size on, all_reduce is a pipelined reduce-scatter and an
/// all-gather: 64 MiB on 2 ranks 36 ms, where MPI_Iallreduce took 79-88 ms
/// (16 MiB: 10 vs 13-18 ms; 16 MiB on 8 ranks on 2 cores: 55 vs 79 ms).
/// Below it (16 KiB: 12.5 vs 10.6 us) MPI's one call has the lower latency.
constexpr int64_t kPipelinedAllReduceBytes = int64_t(256) << 10;

/// From this size on, a group whose members share a node with a core each
/// reduces through its shared window (SharedCollectives.cpp) instead: on 2 ranks
/// 4 KiB 4.5 us against MPI_Iallreduce's 6.0 (1 KiB: 5.7 against 3.5), 16 KiB
/// 11 against 15, 256 KiB 68 against the messages' 118, 16 MiB 6.3-7.5 ms
/// against 10.0-12.9.
constexpr int64_t kDirectReduceBytes = int64_t(4) << 10;

/// From this many bytes per member on, all_gather reads the others' operands
/// through the group's shared window (the conditions above).
constexpr int64_t kDirectGatherBytes = int64_t(4) << 10;

/// From this many bytes per row on, a direct all_gather along a dim that is
/// not the outermost reads each member's rows straight into their places in
/// the result (a vector of rows per kernel call); shorter rows are read whole
/// into scratch and unpacked. 4096 rows per member on 2 ranks, straight
/// against unpacked: 16-byte rows 186-210 against 52-67 us, 256-byte rows
/// 447-462 against 545-595 us, 4 KiB rows 7.3-7.8 against 15.1-15.9 ms.
constexpr int64_t kDirectGatherRowBytes = 256;

/// Where all_reduce goes direct: from kDirectReduceBytes, or under a memory
/// budget only where the messages' way takes scratch of ours too (the direct
/// way reads into slots of a chunk; MPI_Iallreduce takes none of ours, and
/// at the smallest budget of auto_shard/memory.test those slots went over).
int64_t directReduceBytes(shardrt_context *ctx) {
  bool budget = ctx->program && ctx->program->release_scratch;
  return budget ? kPipelinedAllReduceBytes : kDirectReduceBytes;
}

} // namespace

char *scratchBuffer(shardrt_context *ctx, int slot, int64_t bytes) {
  if (ctx->scratchBytes[slot] < bytes) {
    shardrt_free(ctx->scratch[slot]);
    ctx->scratch[slot] = static_cast<char *>(shardrt_alloc(ctx, bytes));
    ctx->scratchBytes[slot] = bytes;
  }
  return ctx->scratch[slot];
}

int mpiCount(shardrt_context *ctx, int64_t count) {
  if (count > INT32_MAX)
    fail(ctx, format("a collective of %lld elements is beyond MPI's int counts",
                     static_cast<long long>(count)));
  return static_cast<int>(count);
}

} // namespace shardrt

using namespace shardrt;

extern "C" {

void shardrt_all_gather(shardrt_context *ctx, int64_t op, const shardrt_group *group, int64_t dtype,
                        int64_t ndims, const int64_t *shape, int64_t dim, const void *in,
                        void *out) {
  checkDim(ctx, "all_gather", ndims, dim);
  double start = now();
  int64_t size = elementSize(ctx, dtype), local = product(shape, 0, ndims);
  int64_t outer = product(shape, 0, dim), slab = product(shape, dim, ndims);
  const Group &g = ctx->comms->get(*group);
  if (g.size == 1) {
    std::memcpy(out, in, static_cast<size_t>(local * size));
  } else {
    SharedWindow *window =
        local * size >= kDirectGatherBytes ? ctx->windows->forDirect(g.comm, g.size) : nullptr;
    if (window && (outer == 1 || slab * size >= kDirectGatherRowBytes)) {
      // Each member's rows read straight into their places.
      gatherShared(ctx, *window, g.size, g.index, in, outer, slab * size, static_cast<char *>(out));
    } else {
      // Member k's operand lands at k * local; with outer > 1 it is unpacked.
      char *gathered =
          outer > 1 ? scratchBuffer(ctx, 0, g.size * local * size) : static_cast<char *>(out);
      if (window) {
        gatherShared(ctx, *window, g.size, g.index, in, 1, local * size, gathered);
      } else {
        MPI_Request request;
        checkMpi(ctx,
                 MPI_Iallgather(in, mpiCount(ctx, local), mpiType(dtype), gathered,
                                mpiCount(ctx, local), mpiType(dtype), g.comm, &request),
                 "MPI_Iallgather");
        waitAll(ctx, 1, &request, "MPI_Iallgather");
      }
      for (int64_t k = 0; outer > 1 && k < g.size; ++k)
        copyBlocks(static_cast<char *>(out) + k * slab * size, g.size * slab * size,
                   gathered + k * local * size, slab * size, outer, slab * size);
    }
  }
  recordCollective(ctx, op, Collective::AllGather, start,
                   static_cast<double>((g.size - 1) * local * size));
}

void shardrt_all_reduce(shardrt_context *ctx, int64_t op, const shardrt_group *group, int64_t dtype,
                        int64_t count, int64_t kind, const void *in, void *out) {
  double start = now();
  int64_t size = elementSize(ctx, dtype);
  MPI_Datatype type;
  MPI_Op reduction;
  reductionTypeAndOp(ctx, dtype, kind, type, reduction);
  const Group &g = ctx->comms->get(*group);
  if (g.size == 1) {
    if (in != out)
      std::memcpy(out, in, static_cast<size_t>(count * size));
  } else if (SharedWindow *window = count * size >= directReduceBytes(ctx)
                                        ? ctx->windows->forDirect(g.comm, g.size)
                                        : nullptr) {
    reduceShared(ctx, *window,
                 {g.size, g.index, count, size, dtype, kind, type, reduction,
                  static_cast<const char *>(in), static_cast<char *>(out), true, "all_reduce"});
  } else if (count * size < kPipelinedAllReduceBytes) {
    MPI_Request request;
    checkMpi(ctx,
             MPI_Iallreduce(in == out ? MPI_IN_PLACE : in, out, mpiCount(ctx, count), type,
                            reduction, g.comm, &request),
             "MPI_Iallreduce");
    waitAll(ctx, 1, &request, "MPI_Iallreduce");
  } else {
    // A reduce-scatter into the member's own block of `out`, then an
    // all-gather of the blocks in place: every member ends with the same
    // bits, as each block is reduced once.
    int64_t block = shardc::support::blockSize(count, g.size);
    std::vector<int> counts, offsets;
    for (int64_t k = 0; k < g.size; ++k) {
      counts.push_back(mpiCount(ctx, shardc::support::blockExtent(count, g.size, k)));
      offsets.push_back(mpiCount(ctx, shardc::support::blockStart(count, g.size, k)));
    }
    int me = 0;
    checkMpi(ctx, MPI_Comm_rank(g.comm, &me), "MPI_Comm_rank");
    char *result = static_cast<char *>(out);
    reduceBlocksPipelined(ctx, g.comm, g.size, count, block, size, type, reduction,
                          static_cast<const char *>(in), result + offsets[me] * size);
    MPI_Request request;
    checkMpi(ctx,
             MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out, counts.data(), offsets.data(),
                             type, g.comm, &request),
             "MPI_Iallgatherv");
    waitAll(ctx, 1, &request, "MPI_Iallgatherv");
  }
  recordCollective(ctx, op, Collective::AllReduce, start,
                   2.0 * static_cast<double>((g.size - 1) * count * size) /
                       static_cast<double>(g.size));
}

void shardrt_reduce_scatter(shardrt_context *ctx, int64_t op, const shardrt_group *group,
                            int64_t dtype, int64_t ndims, const int64_t *shape, int64_t dim,
                            const void *in, void *out) {
  checkDim(ctx, "reduce_scatter", ndims, dim);
  double start = now();
  int64_t size = elementSize(ctx, dtype);
  MPI_Datatype type;
  MPI_Op reduction;
  reductionTypeAndOp(ctx, dtype, SHARDRT_SUM, type, reduction);
  const Group &g = ctx->comms->get(*group);
  if (shape[dim] % g.size != 0)
    internalError(ctx, format("reduce_scatter: dim %lld of size %lld over %lld devices",
                              static_cast<long long>(dim), static_cast<long long>(shape[dim]),
                              static_cast<long long>(g.size)));
  // Member k's block: rows [k*piece, (k+1)*piece) of dim, for every outer index.
  int64_t piece = shape[dim] / g.size * product(shape, dim + 1, ndims);
  int64_t outer = product(shape, 0, dim), block = outer * piece;
  if (g.size == 1) {
    std::memcpy(out, in, static_cast<size_t>(block * size));
  } else {
    const char *send = static_cast<const char *>(in);
    if (outer > 1) {
      char *packed = scratchBuffer(ctx, 0, g.size * block * size);
      for (int64_t k = 0; k < g.size; ++k)
        copyBlocks(packed + k * block * size, piece * size, send + k * piece * size,
                   g.size * piece * size, outer, piece * size);
      send = packed;
    }
    SharedWindow *window = g.size * block * size >= kDirectReduceBytes
                               ? ctx->windows->forDirect(g.comm, g.size)
                               : nullptr;
    if (window)
      reduceShared(ctx, *window,
                   {g.size, g.index, g.size * block, size, dtype, SHARDRT_SUM, type, reduction,
                    send, static_cast<char *>(out), false, "reduce_scatter"});
    else
      reduceBlocksPipelined(ctx, g.comm, g.size, g.size * block, block, size, type, reduction, send,
                            static_cast<char *>(out));
  }
  recordCollective(ctx, op, Collective::ReduceScatter, start,
                   static_cast<double>((g.size - 1) * block * size));
}

void shardrt_all_slice(shardrt_context *ctx, int64_t op, const shardrt_group *group, int64_t dtype,
                       int64_t ndims, const int64_t *shape, int64_t dim, const void *in,
                       void *out) {
  checkDim(ctx, "all_slice", ndims, dim);
  double start = now();
  int64_t size = elementSize(ctx, dtype);
  GroupPlace place = placeInGroup(ctx, *group);
  int64_t length = shape[dim], kept = shardc::support::blockSize(length, place.size);
  int64_t first = shardc::support::blockStart(length, place.size, place.index);
  int64_t held = shardc::support::blockExtent(length, place.size, place.index);
  int64_t inner = product(shape, dim + 1, ndims) * size, outer = product(shape, 0, dim);
  auto *dst = static_cast<char *>(out);
  const auto *src = static_cast<const char *>(in);
  for (int64_t o = 0; o < outer; ++o) {
    std::memcpy(dst + o * kept * inner, src + (o * length + first) * inner,
                static_cast<size_t>(held * inner));
    std::memset(dst + (o * kept + held) * inner, 0, static_cast<size_t>((kept - held) * inner));
  }
  recordCollective(ctx, op, Collective::AllSlice, start, 0);
}

} // extern "C"
