// Block layout arithmetic of sharded dims (ceil-sized blocks, the last ones
// short or empty) and mesh coordinates: used by ir/ (Sharding, ShardingLayout),
// the interpreter's all_slice and the runtime's blocks and collectives.
#pragma once

#include <algorithm>
#include <cstdint>

namespace shardc::support {

/// The elements of each block of a dim of `dim` elements split `shards`
/// ways: ceil(dim / shards), and `dim` itself for shards <= 1. Every device
/// holds a block of this size, padded where it holds fewer.
constexpr int64_t blockSize(int64_t dim, int64_t shards) {
  return shards <= 1 ? dim : (dim + shards - 1) / shards;
}

/// Where block `index` starts: index * blockSize, clamped to `dim` (an
/// empty block starts at the end). index < shards, so no overflow for any
/// dim below 2^62.
constexpr int64_t blockStart(int64_t dim, int64_t shards, int64_t index) {
  return std::min(index * blockSize(dim, shards), dim);
}

/// How many of the dim's elements block `index` holds (its valid length):
/// blockSize for all but the last blocks of a dim shards does not divide,
/// which are shorter or empty. E.g. 7 on 4: 2, 2, 2, 1; 5 on 4: 2, 2, 1, 0.
constexpr int64_t blockExtent(int64_t dim, int64_t shards, int64_t index) {
  int64_t size = blockSize(dim, shards);
  return std::clamp<int64_t>(dim - index * size, 0, size);
}

/// The row-major digits of mesh position `position` for axis sizes
/// `sizes[0..rank)` (the last axis fastest), into `coords`. A size below 1
/// counts as 1.
inline void rowMajorDigits(const int64_t *sizes, size_t rank, int64_t position, int64_t *coords) {
  for (size_t i = rank; i-- > 0;) {
    int64_t size = std::max<int64_t>(sizes[i], 1);
    coords[i] = position % size;
    position /= size;
  }
}

/// The digit a sub-axis (pre-size `preSize`, size `size`) of an axis of
/// `axisSize` devices takes at coordinate `coord` along that axis: reshape
/// the axis into [preSize, size, axisSize / (preSize * size)] and take the
/// middle digit. A full axis is preSize 1, size axisSize: the coordinate.
constexpr int64_t subAxisStride(int64_t axisSize, int64_t preSize, int64_t size) {
  return axisSize / (preSize * size);
}
constexpr int64_t subAxisDigit(int64_t coord, int64_t axisSize, int64_t preSize, int64_t size) {
  return coord / subAxisStride(axisSize, preSize, size) % size;
}

} // namespace shardc::support
