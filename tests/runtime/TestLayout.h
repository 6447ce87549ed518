// The contract's layout worked out independently of the runtime (whose own
// is runtime/Layout.h), for the runtime tests: which block of a tensor a rank
// holds, and the global index of each element of its local buffer.
#pragma once

#include "TestProgram.h"
#include "TestTensors.h"

#include <algorithm>
#include <vector>

namespace shardrt_test {

/// This rank's block of `t`, worked out here from the contract (Layout.h has
/// the runtime's own): start and extent per dim, the padded local shape, and
/// whether this rank is the replica at coordinate 0 of the uncovered digits.
struct TestBlock {
  bool holds = false, canonical = false;
  std::vector<int64_t> local, start, extent;
};

inline TestBlock testBlock(const shardrt_program &program, const shardrt_tensor &t, int rank) {
  const shardrt_mesh &mesh = program.meshes[t.mesh];
  int64_t devices = 1, position = -1;
  for (int64_t a = 0; a < mesh.num_axes; ++a)
    devices *= mesh.axis_sizes[a];
  bool emptyMesh = mesh.num_axes == 0 && !mesh.device_ids;
  for (int64_t p = 0; p < devices; ++p)
    if ((mesh.device_ids ? mesh.device_ids[p] : p) == rank || emptyMesh)
      position = p;
  TestBlock block;
  block.holds = position >= 0;
  std::vector<int64_t> coords = block.holds ? coordinates(mesh, position) : std::vector<int64_t>();
  std::vector<int64_t> uncovered = coords;
  const shardrt_axis_ref *axis = t.dim_axes;
  for (int64_t d = 0; d < t.ndims; ++d) {
    int64_t shards = 1, index = 0;
    for (int64_t i = 0; i < t.dim_num_axes[d]; ++i, ++axis) {
      shards *= axis->size;
      int64_t c = block.holds ? digit(mesh, *axis, coords[axis->axis]) : 0;
      index = index * axis->size + c;
      if (block.holds)
        uncovered[axis->axis] -= c * (mesh.axis_sizes[axis->axis] / (axis->pre_size * axis->size));
    }
    int64_t local = (t.shape[d] + shards - 1) / shards;
    int64_t start = std::min(index * local, t.shape[d]);
    block.local.push_back(local);
    block.start.push_back(start);
    block.extent.push_back(block.holds ? std::min(local, t.shape[d] - start) : 0);
  }
  block.canonical = block.holds && (emptyMesh ? rank == 0
                                              : std::all_of(uncovered.begin(), uncovered.end(),
                                                            [](int64_t c) { return c == 0; }));
  return block;
}

/// For each local element: its global index, or -1 for padding.
inline std::vector<int64_t> globalIndices(const shardrt_tensor &t, const TestBlock &block) {
  std::vector<int64_t> indices(static_cast<size_t>(elementCount(block.local)));
  for (size_t l = 0; l < indices.size(); ++l) {
    int64_t rest = static_cast<int64_t>(l), global = 0, stride = 1;
    bool padding = !block.holds;
    for (int64_t d = t.ndims - 1; d >= 0; --d) {
      int64_t i = rest % block.local[d];
      rest /= block.local[d];
      padding = padding || i >= block.extent[d];
      global += (block.start[d] + i) * stride;
      stride *= t.shape[d];
    }
    indices[l] = padding ? -1 : global;
  }
  return indices;
}

} // namespace shardrt_test
