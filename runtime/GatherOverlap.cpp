// An all_gather that a contraction consumes block by block, so that its
// exchange overlaps the contraction's compute (a collective matmul; the
// backend's GatherContraction.cpp emits the calls). Point-to-point messages,
// one per pair of members, rather than MPI_Iallgather: each block completes
// on its own, so the compute can take a block as soon as it is there, and in
// the order the members compute (member m takes m, m+1, ..., m-1), each
// member sends its block first to the member that needs it soonest.
#include "runtime/Communicators.h"

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
  // A test drives MPI's progress engine for every pending request; which of
  // them completed does not matter here (MPI_Testall frees none until all
  // have, and then later waits return at once).
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

void shardrt_gather_wait(shardrt_context *ctx, int64_t member) {
  GatherInFlight &g = inFlight(ctx);
  if (member < 0 || member >= g.members)
    internalError(ctx, format("all_gather block %lld of %lld members",
                              static_cast<long long>(member), static_cast<long long>(g.members)));
  double start = now();
  waitAll(ctx, 1, &g.receives[static_cast<size_t>(member)], "MPI_Irecv");
  g.waited += now() - start;
}

void shardrt_gather_finish(shardrt_context *ctx) {
  GatherInFlight &g = inFlight(ctx);
  double start = now();
  waitAll(ctx, static_cast<int>(g.receives.size()), g.receives.data(), "MPI_Irecv");
  waitAll(ctx, static_cast<int>(g.sends.size()), g.sends.data(), "MPI_Isend");
  double end = now();
  g.waited += end - start;
  g.active = false;
  recordOverlappedCollective(ctx, g.op, Collective::AllGather, g.start, end, g.waited, g.bytes);
}

} // extern "C"
