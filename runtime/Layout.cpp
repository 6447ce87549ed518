// Blocks of sharded tensors (Layout.h).
#include "runtime/Layout.h"

#include "support/BlockLayout.h"

#include <algorithm>

namespace shardrt {

std::vector<int64_t> coordinatesOf(const shardrt_mesh &mesh, int64_t position) {
  std::vector<int64_t> coords(static_cast<size_t>(mesh.num_axes));
  shardc::support::rowMajorDigits(mesh.axis_sizes, coords.size(), position, coords.data());
  return coords;
}

int64_t positionOfRank(const shardrt_mesh &mesh, int64_t rank) {
  if (mesh.num_axes == 0 && !mesh.device_ids)
    return 0; // the empty mesh: every device holds the whole value
  for (int64_t p = 0; p < meshDevices(mesh); ++p)
    if (meshDeviceAt(mesh, p) == rank)
      return p;
  return -1;
}

Block blockOf(const shardrt_context *ctx, const shardrt_tensor &tensor) {
  return blockAt(*ctx->program, tensor, ctx->positions[tensor.mesh], ctx->rank);
}

Block blockAt(const shardrt_program &program, const shardrt_tensor &tensor, int64_t position,
              int64_t rank) {
  const shardrt_mesh &mesh = program.meshes[tensor.mesh];
  const std::vector<int64_t> coords =
      position < 0 ? std::vector<int64_t>() : coordinatesOf(mesh, position);
  Block block;
  block.holds = position >= 0;
  std::vector<int64_t> uncovered = coords;
  const shardrt_axis_ref *axis = tensor.dim_axes;
  for (int64_t d = 0; d < tensor.ndims; ++d) {
    int64_t shards = 1, index = 0;
    for (int64_t i = 0; i < tensor.dim_num_axes[d]; ++i, ++axis) {
      shards *= axis->size;
      if (!block.holds)
        continue;
      int64_t digit = axisDigit(mesh, *axis, coords[axis->axis]);
      index = index * axis->size + digit;
      uncovered[axis->axis] -= digit * axisStride(mesh, *axis);
    }
    int64_t size = tensor.shape[d];
    block.global.push_back(size);
    block.local.push_back(shardc::support::blockSize(size, shards));
    block.start.push_back(shardc::support::blockStart(size, shards, index));
    block.extent.push_back(block.holds ? shardc::support::blockExtent(size, shards, index) : 0);
  }
  bool emptyMesh = mesh.num_axes == 0 && !mesh.device_ids;
  block.writes = block.holds && (emptyMesh ? rank == 0
                                           : std::all_of(uncovered.begin(), uncovered.end(),
                                                         [](int64_t c) { return c == 0; }));
  return block;
}

} // namespace shardrt

extern "C" int64_t shardrt_local_elements(const shardrt_context *ctx,
                                          const shardrt_tensor *tensor) {
  return shardrt::blockOf(ctx, *tensor).localElements();
}
