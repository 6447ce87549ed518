// Device blocks of sharded tensors: mesh coordinates, sub-axis coordinates,
// shard indices and the (padded) block each device holds.
#include "ir/ShardingLayout.h"

#include "support/BlockLayout.h"

#include <algorithm>

namespace shardc {

std::vector<int64_t> meshCoordinates(const Mesh &mesh, int64_t position) {
  std::vector<int64_t> sizes, coords(mesh.axes.size(), 0);
  for (const MeshAxis &axis : mesh.axes)
    sizes.push_back(axis.size);
  support::rowMajorDigits(sizes.data(), sizes.size(), position, coords.data());
  return coords;
}

std::optional<int64_t> meshPosition(const Mesh &mesh, int64_t deviceId) {
  if (mesh.deviceIds.empty()) {
    if (deviceId >= 0 && deviceId < mesh.deviceCount())
      return deviceId;
    return std::nullopt;
  }
  auto it = std::find(mesh.deviceIds.begin(), mesh.deviceIds.end(), deviceId);
  if (it == mesh.deviceIds.end())
    return std::nullopt;
  return it - mesh.deviceIds.begin();
}

int64_t axisCoordinate(const Mesh &mesh, const AxisRef &axis, const std::vector<int64_t> &coords) {
  int index = mesh.axisIndex(axis.name);
  if (index < 0 || static_cast<size_t>(index) >= coords.size())
    return 0;
  int64_t coord = coords[index];
  if (!axis.isSubAxis())
    return coord;
  // "x":(m)k of an axis of size n: reshape n into [m, k, n/(m*k)] and take
  // the middle digit. The guards only matter for unverified IR.
  int64_t n = mesh.axes[index].size;
  int64_t k = std::max<int64_t>(axis.size, 1);
  bool divides = n > 0 && axis.preSize > 0 && n % axis.preSize == 0 && (n / axis.preSize) % k == 0;
  return divides ? support::subAxisDigit(coord, n, axis.preSize, k) : coord % k;
}

int64_t shardIndex(const Mesh &mesh, const DimSharding &dim, const std::vector<int64_t> &coords) {
  int64_t index = 0;
  for (const AxisRef &axis : dim.axes) {
    const MeshAxis *full = mesh.findAxis(axis.name);
    int64_t size = std::max<int64_t>(axis.effectiveSize(full ? full->size : 1), 1);
    index = index * size + axisCoordinate(mesh, axis, coords);
  }
  return index;
}

int64_t shardStart(int64_t dimSize, int64_t shards, int64_t index) {
  return support::blockStart(dimSize, shards, index);
}

int64_t shardExtent(int64_t dimSize, int64_t shards, int64_t index) {
  return support::blockExtent(dimSize, shards, index);
}

std::vector<DeviceBlock> deviceBlocks(const Mesh &mesh, const std::vector<int64_t> &shape,
                                      const Sharding &sharding) {
  const size_t rank = shape.size();
  std::vector<int64_t> shards(rank, 1);
  for (size_t d = 0; d < rank && d < sharding.dims.size(); ++d)
    shards[d] = shardCount(sharding.dims[d], mesh);

  std::vector<DeviceBlock> blocks;
  const int64_t devices = mesh.deviceCount();
  blocks.reserve(static_cast<size_t>(devices));
  for (int64_t position = 0; position < devices; ++position) {
    std::vector<int64_t> coords = meshCoordinates(mesh, position);
    DeviceBlock block;
    block.device = mesh.deviceAt(position);
    for (size_t d = 0; d < rank; ++d) {
      int64_t index = d < sharding.dims.size() ? shardIndex(mesh, sharding.dims[d], coords) : 0;
      block.index.push_back(index);
      block.start.push_back(shardStart(shape[d], shards[d], index));
      block.extent.push_back(shardExtent(shape[d], shards[d], index));
    }
    blocks.push_back(std::move(block));
  }
  std::stable_sort(blocks.begin(), blocks.end(),
                   [](const DeviceBlock &a, const DeviceBlock &b) { return a.device < b.device; });
  return blocks;
}

std::string jaxType(const TensorType &type, const Sharding *sharding) {
  std::string dims = sharding ? sharding->jaxDims(type.shape) : Sharding().jaxDims(type.shape);
  return std::string(dtypeName(type.dtype)) + "[" + dims + "]";
}

} // namespace shardc
