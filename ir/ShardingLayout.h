// The exact data layout of a sharded tensor: which block of the global tensor
// each device holds. The partitioner, the runtime's I/O, the language server's
// hover and `shardc --visualize` all read layouts through this one library.
//
// Semantics (Shardy, ../shared/seeds/sharding_representation.md):
//   1. The mesh is a row-major reshape of its device ids: the device at mesh
//      position p is Mesh::deviceAt(p), and p's coordinates along the axes
//      are the row-major digits of p.
//   2. A sub-axis "x":(m)k of an axis of size n is the middle dim of reshaping
//      n into [m, k, n/(m*k)]: a device's coordinate along it is
//      (coord_x / (n/(m*k))) % k. A full axis is (1)n: its coordinate is coord_x.
//   3. A dim sharded on axes [a1, a2, ...] (major to minor) is split into
//      size(a1)*size(a2)*... shards; a device's shard index along it is the
//      mixed-radix number of its coordinates along a1, a2, ... (a1 most
//      significant).
//   4. Every shard has ceil(dim/shards) elements (localDimSize); shard i holds
//      [i*b, min((i+1)*b, dim)). When dim is not divisible the last shards are
//      shorter, or empty, and padded up to b on the device.
//   5. Axes no dim uses are replicated: devices that differ only along them
//      hold the same block.
//
// Worked example: mesh <["x"=2, "y"=2]>, tensor<7x4xf32> sharded
// [{"y"}, {}]: dim 0 has 2 shards of ceil(7/2) = 4 rows. Device 1 is at
// position 1 = (x=0, y=1), so its shard index is 1: rows [4, 7), 3 of them
// (1 padded), all 4 columns. Device 3 (x=1, y=1) holds the same block.
#pragma once

#include "ir/Sharding.h"
#include "ir/Types.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace shardc {

/// The coordinates of mesh position `position` (0 <= position <
/// mesh.deviceCount()) along the mesh's axes: its row-major digits.
std::vector<int64_t> meshCoordinates(const Mesh &mesh, int64_t position);

/// The mesh position of device `deviceId` (the inverse of Mesh::deviceAt), or
/// nullopt when the mesh does not contain it.
std::optional<int64_t> meshPosition(const Mesh &mesh, int64_t deviceId);

/// The coordinate along `axis` (a full axis or a sub-axis) of the device with
/// mesh coordinates `coords`. 0 for an axis the mesh does not have.
int64_t axisCoordinate(const Mesh &mesh, const AxisRef &axis, const std::vector<int64_t> &coords);

/// The shard index along a dim sharded as `dim` of the device with mesh
/// coordinates `coords`: the mixed-radix number of its coordinates along the
/// dim's axes, the first (major) axis most significant. 0 for an unsharded dim.
int64_t shardIndex(const Mesh &mesh, const DimSharding &dim, const std::vector<int64_t> &coords);

/// Where shard `index` of a dim of global size `dimSize` split `shards` ways
/// starts: index * localDimSize(dimSize, shards), clamped to `dimSize` (an
/// empty shard starts at the end).
int64_t shardStart(int64_t dimSize, int64_t shards, int64_t index);

/// How many elements of the global dim shard `index` holds: localDimSize for
/// all but the last shards of a non-divisible dim, which are shorter or 0.
/// E.g. 7 on 4 shards: 2, 2, 2, 1; 5 on 4: 2, 2, 1, 0.
int64_t shardExtent(int64_t dimSize, int64_t shards, int64_t index);

/// The block of the global tensor one device holds.
struct DeviceBlock {
  int64_t device = 0;
  /// Per dim: first global index, and number of elements held (0 for an
  /// empty, all-padding shard). The device's buffer has the padded
  /// localShape(); elements past `extent` are padding.
  std::vector<int64_t> start, extent;
  /// Per dim: the device's shard index along that dim.
  std::vector<int64_t> index;
};

/// Every device's block of a tensor of global `shape` sharded as `sharding`
/// on `mesh`, one entry per device, sorted by device id. Dims the sharding
/// does not cover (it has fewer dims than `shape`) are unsharded. A maximal
/// mesh gives one block (its device); an empty mesh, which has no devices of
/// its own, gives one block for device 0 (the sharding is a replicated
/// placeholder: every device of the program holds the whole tensor).
/// O(devices * rank): the caller bounds the mesh.
std::vector<DeviceBlock> deviceBlocks(const Mesh &mesh, const std::vector<int64_t> &shape,
                                      const Sharding &sharding);

/// The JAX-style type, e.g. `f32[8@x, 16@{y,z}]`, `f32[8, 16]` without a
/// sharding, `f32[8@x:(2)2]` for a sub-axis, `f32[]` for rank 0.
std::string jaxType(const TensorType &type, const Sharding *sharding);

} // namespace shardc
