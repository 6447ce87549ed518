// An all_gather that a contraction consumes block by block, so that its
// exchange overlaps the contraction's compute (a collective matmul; the
// backend's GatherContraction.cpp emits the calls). Member m computes with
// the blocks in the order m, m+1, ..., m-1. Two ways, chosen per call:
//   - direct reads, when the group shares a node, the kernel copies between
//     its processes and the node has a core per rank (SharedWindows.h, as
//     all_to_all's direct exchange): each member posts its operand's address
//     in the group's window and reads the others' blocks with
//     process_vm_readv, in the progress calls between pieces of compute or,
//     at the latest, when it needs the block. No MPI message: MPICH moves a
//     large message only while both sides are inside MPI calls, which a
//     compute of BLAS pieces reaches a few times only (measured on 2 ranks,
//     16 MiB: the messages' blocks were still missing after 55 ms of
//     compute with four progress calls, and the final waits took 2-17 ms).
//   - point-to-point messages otherwise (MPI_Isend/Irecv, each block on its
//     own; member m sends first to m-1, who needs its block soonest), driven
//     by MPI_Testall in the progress calls.
#include "runtime/Communicators.h"
#include "runtime/SharedWindows.h"

#include <sched.h>

namespace shardrt {
namespace {

/// Tag of the gather's messages on the group's communicator: apart from the
/// pipelined reductions' tag 0.
constexpr int kGatherTag = 7;

GatherInFlight &inFlight(shardrt_context *ctx) {
  if (!ctx->gather.active)
    internalError(ctx, "no all_gather is in flight");
  return ctx->gather;
}

bool posted(const GatherInFlight &g, int64_t k) {
  return g.window->header(k).posted.load(std::memory_order_acquire) >= g.epoch;
}

/// Copies member k's block (it has posted) into its place, and counts the
/// read in k's header: k's operand is free again once every member has.
void readBlock(shardrt_context *ctx, GatherInFlight &g, int64_t k) {
  SegmentHeader &peer = g.window->header(k);
  readFar(ctx, static_cast<pid_t>(peer.pid), g.result + k * g.blockBytes,
          peer.operand.load(std::memory_order_relaxed), g.blockBytes, "all_gather", k);
  g.read[static_cast<size_t>(k)] = true;
  peer.accessed.fetch_add(1, std::memory_order_release);
}

/// Direct reads: the blocks that have been posted, in compute order, up to
/// (and waiting for) member `upTo`'s when it is not -1.
void readPosted(shardrt_context *ctx, GatherInFlight &g, int64_t upTo) {
  for (int64_t j = 1; j < g.members; ++j) {
    int64_t k = (g.me + j) % g.members;
    if (!g.read[static_cast<size_t>(k)]) {
      if (k == upTo)
        while (!posted(g, k))
          sched_yield(); // let the member we wait for run
      else if (!posted(g, k))
        return;
      readBlock(ctx, g, k);
    }
    if (k == upTo)
      return;
  }
}

} // namespace
} // namespace shardrt

using namespace shardrt;

extern "C" {

int64_t shardrt_gather_start(shardrt_context *ctx, int64_t op, const shardrt_group *group,
                             int64_t dtype, int64_t count, const void *in, void *out) {
  GatherInFlight &g = ctx->gather;
  if (g.active)
    internalError(ctx, "an all_gather was started while another one is in flight");
  double start = now();
  const Group &members = ctx->comms->get(*group);
  int64_t size = elementSize(ctx, dtype), n = members.size, me = members.index;
  g.active = true;
  g.op = op;
  g.members = n;
  g.me = me;
  g.start = start;
  g.waited = 0;
  g.bytes = static_cast<double>((n - 1) * count * size);
  g.receives.assign(static_cast<size_t>(n), MPI_REQUEST_NULL);
  g.sends.assign(static_cast<size_t>(n > 0 ? n - 1 : 0), MPI_REQUEST_NULL);
  g.window = nullptr;
  // The window is made on the group's first use, by every member at once
  // (SPMD: all of them reach this call); SHARDRT_A2A, which forces
  // all_to_all's way for tests, leaves the gathers to messages.
  SharedWindows &windows = *ctx->windows;
  if (n > 1 && windows.forced() == AllToAllPath::Auto)
    if (SharedWindow *window = windows.get(members.comm, n);
        window && window->direct() && !windows.crowded(*window))
      g.window = window;
  if (g.window) {
    g.epoch = g.window->directExchanges + 1;
    g.blockBytes = count * size;
    g.result = static_cast<char *>(out);
    g.read.assign(static_cast<size_t>(n), false);
    g.read[static_cast<size_t>(me)] = true;
    g.window->header(me).post(in, nullptr, g.epoch);
    g.waited += now() - start;
    return me;
  }
  MPI_Datatype type = mpiType(dtype);
  int elements = mpiCount(ctx, count);
  auto *result = static_cast<char *>(out);
  for (int64_t j = 1; j < n; ++j) {
    int64_t from = (me + j) % n;
    checkMpi(ctx,
             MPI_Irecv(result + from * count * size, elements, type, static_cast<int>(from),
                       kGatherTag, members.comm, &g.receives[static_cast<size_t>(from)]),
             "MPI_Irecv");
  }
  for (int64_t j = 1; j < n; ++j) {
    int64_t to = (me - j + n) % n;
    checkMpi(ctx,
             MPI_Isend(in, elements, type, static_cast<int>(to), kGatherTag, members.comm,
                       &g.sends[static_cast<size_t>(j - 1)]),
             "MPI_Isend");
  }
  g.waited += now() - start;
  return me;
}

void shardrt_gather_progress(shardrt_context *ctx) {
  GatherInFlight &g = inFlight(ctx);
  double start = now();
  if (g.window) {
    readPosted(ctx, g, -1);
  } else {
    // A test drives MPI's progress engine for every pending request; which
    // of them completed does not matter here (MPI_Testall frees none until
    // all have, and then the later waits return at once).
    int done = 0;
    checkMpi(ctx,
             MPI_Testall(static_cast<int>(g.receives.size()), g.receives.data(), &done,
                         MPI_STATUSES_IGNORE),
             "MPI_Testall");
    checkMpi(
        ctx,
        MPI_Testall(static_cast<int>(g.sends.size()), g.sends.data(), &done, MPI_STATUSES_IGNORE),
        "MPI_Testall");
  }
  g.waited += now() - start; // the copies made in here are the exchange's work
}

void shardrt_gather_wait(shardrt_context *ctx, int64_t member) {
  GatherInFlight &g = inFlight(ctx);
  if (member < 0 || member >= g.members)
    internalError(ctx, format("all_gather block %lld of %lld members",
                              static_cast<long long>(member), static_cast<long long>(g.members)));
  double start = now();
  if (g.window)
    readPosted(ctx, g, member);
  else
    waitAll(ctx, 1, &g.receives[static_cast<size_t>(member)], "MPI_Irecv");
  g.waited += now() - start;
}

void shardrt_gather_finish(shardrt_context *ctx) {
  GatherInFlight &g = inFlight(ctx);
  double start = now();
  if (g.window) {
    // Every block read, then wait until every other member has read mine
    // (my operand is free again); the window's counts advance as for an
    // all_to_all direct exchange (same epochs on every member).
    readPosted(ctx, g, (g.me + g.members - 1) % g.members);
    g.window->finishDirect(g.me, g.epoch);
  } else {
    waitAll(ctx, static_cast<int>(g.receives.size()), g.receives.data(), "MPI_Irecv");
    waitAll(ctx, static_cast<int>(g.sends.size()), g.sends.data(), "MPI_Isend");
  }
  double end = now();
  g.waited += end - start;
  g.active = false;
  recordOverlappedCollective(ctx, g.op, Collective::AllGather, g.start, end, g.waited, g.bytes);
}

} // extern "C"
