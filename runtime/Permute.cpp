// collective_permute (point-to-point: Isend/Irecv on the runtime's private
// communicator) and axis_index (local arithmetic).
#include "runtime/Communicators.h"

#include <cstring>

namespace shardrt {
namespace {

/// The rank of mesh position `position` (mesh -1: `position` is a device id).
int64_t rankAt(shardrt_context *ctx, int64_t mesh, int64_t position) {
  int64_t count = mesh < 0 ? ctx->program->num_devices : meshDevices(ctx->program->meshes[mesh]);
  if (position < 0 || position >= count)
    internalError(ctx, format("collective_permute: position %lld out of range (%lld)",
                              static_cast<long long>(position), static_cast<long long>(count)));
  return mesh < 0 ? position : meshDeviceAt(ctx->program->meshes[mesh], position);
}

} // namespace
} // namespace shardrt

using namespace shardrt;

extern "C" {

void shardrt_collective_permute(shardrt_context *ctx, int64_t op, int64_t mesh, int64_t num_pairs,
                                const int64_t *pairs, int64_t dtype, int64_t count, const void *in,
                                void *out) {
  if (mesh < -1 || mesh >= ctx->program->num_meshes || num_pairs < 0)
    internalError(ctx, format("collective_permute on mesh %lld", static_cast<long long>(mesh)));
  double start = now();
  int64_t size = elementSize(ctx, dtype);
  int64_t me = mesh < 0 ? ctx->rank : ctx->positions[mesh];
  std::vector<MPI_Request> requests;
  bool received = false;
  int64_t sent = 0;
  const int tag = 1;
  for (int64_t i = 0; i < num_pairs; ++i) {
    int64_t source = pairs[2 * i], target = pairs[2 * i + 1];
    int64_t sourceRank = rankAt(ctx, mesh, source), targetRank = rankAt(ctx, mesh, target);
    if (target == me) {
      if (received)
        internalError(ctx, format("collective_permute: position %lld is the target of two pairs",
                                  static_cast<long long>(target)));
      received = true;
      if (source == me) {
        std::memcpy(out, in, static_cast<size_t>(count * size));
        continue;
      }
      requests.emplace_back();
      checkMpi(ctx,
               MPI_Irecv(out, mpiCount(ctx, count), mpiType(dtype), static_cast<int>(sourceRank),
                         tag, ctx->world, &requests.back()),
               "MPI_Irecv");
    }
    if (source == me && target != me) {
      requests.emplace_back();
      checkMpi(ctx,
               MPI_Isend(in, mpiCount(ctx, count), mpiType(dtype), static_cast<int>(targetRank),
                         tag, ctx->world, &requests.back()),
               "MPI_Isend");
      sent += count * size;
    }
  }
  if (!received) // no pair targets this device: zeros (the contract)
    std::memset(out, 0, static_cast<size_t>(count * size));
  waitAll(ctx, static_cast<int>(requests.size()), requests.data(), "collective_permute");
  recordCollective(ctx, op, Collective::Permute, start, static_cast<double>(sent));
}

int32_t shardrt_axis_index(shardrt_context *ctx, int64_t mesh, const shardrt_axis_ref *axis) {
  if (mesh < 0 || mesh >= ctx->program->num_meshes)
    internalError(ctx, format("axis_index on mesh %lld", static_cast<long long>(mesh)));
  std::string problem = axisRefsProblem(*ctx->program, mesh, axis, 1);
  if (!problem.empty())
    internalError(ctx, "axis_index - " + problem);
  if (ctx->positions[mesh] < 0)
    return 0;
  const shardrt_mesh &m = ctx->program->meshes[mesh];
  return static_cast<int32_t>(axisDigit(m, *axis, ctx->coords[mesh][axis->axis]));
}

} // extern "C"
