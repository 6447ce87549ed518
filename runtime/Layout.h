// Which block of a global tensor this rank holds (ir/ShardingLayout.h
// computes the same for the compiler; both do the arithmetic with
// support/BlockLayout.h, which libshardrt compiles in):
//   a dim of size D sharded on axes [a1, a2, ...] splits into n = |a1|*|a2|*...
//   shards of b = ceil(D/n) elements; shard i (mixed-radix digits of the
//   rank's coordinates, a1 major) holds [i*b, min((i+1)*b, D)), zero-padded
//   to b on the device.
#pragma once

#include "runtime/Context.h"

#include <vector>

namespace shardrt {

struct Block {
  std::vector<int64_t> global; // global shape
  std::vector<int64_t> local;  // padded local shape (the device buffer)
  std::vector<int64_t> start;  // first global index held, per dim
  std::vector<int64_t> extent; // elements held per dim (0 for an all-padding shard)
  bool holds = false;          // the rank is on the tensor's mesh
  bool writes = false;         // among the ranks holding this same block, the one that writes it
  int64_t localElements() const { return product(local.data(), 0, local.size()); }
};

/// This rank's block of `tensor`. The writer of a block is the holder whose
/// coordinates are 0 in every digit the sharding leaves uncovered (a
/// replicated axis, or the rest of a sub-axis); on the empty mesh, rank 0.
Block blockOf(const shardrt_context *ctx, const shardrt_tensor &tensor);
/// The block of `tensor` held by the device at `position` of its mesh (-1:
/// none) running on MPI rank `rank`.
Block blockAt(const shardrt_program &program, const shardrt_tensor &tensor, int64_t position,
              int64_t rank);
/// Row-major coordinates of `position` on `mesh`.
std::vector<int64_t> coordinatesOf(const shardrt_mesh &mesh, int64_t position);
/// The position of MPI rank `rank` on `mesh`, -1 when it has none (every
/// rank is at 0 of the empty mesh).
int64_t positionOfRank(const shardrt_mesh &mesh, int64_t rank);

/// Calls fn(globalOffset, localOffset, count) (in elements, row-major) for
/// each contiguous run of the block: trailing dims held whole merge into one
/// run, so a block of whole rows is one call.
template <typename Fn> void forEachRun(const Block &block, Fn &&fn) {
  int64_t ndims = static_cast<int64_t>(block.global.size());
  for (int64_t d = 0; d < ndims; ++d)
    if (block.extent[d] == 0)
      return;
  // Dims after `split` are held whole, so each run spans them all.
  int64_t split = ndims - 1;
  while (split >= 0 && block.start[split] == 0 && block.extent[split] == block.global[split] &&
         block.local[split] == block.global[split])
    --split;
  if (split < 0) {
    fn(int64_t(0), int64_t(0), product(block.global.data(), 0, ndims));
    return;
  }
  int64_t runLength = block.extent[split] * product(block.global.data(), split + 1, ndims);
  std::vector<int64_t> index(static_cast<size_t>(split), 0); // over dims [0, split)
  for (;;) {
    int64_t globalOffset = 0, localOffset = 0;
    for (int64_t d = 0; d <= split; ++d) {
      int64_t i = d < split ? index[d] : 0;
      globalOffset = globalOffset * block.global[d] + block.start[d] + i;
      localOffset = localOffset * block.local[d] + i;
    }
    int64_t inner = product(block.global.data(), split + 1, ndims);
    fn(globalOffset * inner, localOffset * inner, runLength);
    int64_t d = split - 1;
    while (d >= 0 && ++index[d] == block.extent[d])
      index[d--] = 0;
    if (d < 0)
      return;
  }
}

} // namespace shardrt
