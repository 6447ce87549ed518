// Slice chains (SliceChain.cpp): consecutive ops of a block that are all
// parallel over the same leading dims, run slice by slice so that the
// values only they read stay in cache between them. Attention's scores
// (einsum, softmax, einsum) are the case in point: run head by head, each
// head's scores are written, read and written again, and read within the
// second level cache instead of making three trips through memory.
#pragma once

#include "backend/llvm/Lowering.h"

#include <memory>
#include <utility>
#include <vector>

namespace shardc::llvmgen {

/// A chain and the block of its ops on one slice's types (the shadow),
/// which the kernel calls once per slice.
struct SliceChain {
  /// The chain's ops in the block, consecutive and in program order.
  std::vector<const Op *> ops;
  /// The sliced axes: the leading dims of every value the chain defines.
  std::vector<int64_t> axes;
  /// The slice's extent along each axis: 1 for all but the last, which is
  /// split into axes.back() / tile.back() parts.
  std::vector<int64_t> tile;
  /// The chain's ops on slice types. Its arguments are views of values
  /// defined before the chain; it returns the views of the chain's values
  /// read after it; every other value it materializes lives in storage one
  /// slice big, reused by every slice.
  Block shadow;
  FusionPlan fusion; ///< of `shadow`
  /// A view: the slice of `original` at the slice's position, whose element
  /// offset is sum over axes a of (index a * tile a) * strides[a].
  struct View {
    const Value *original;
    std::vector<int64_t> strides; ///< per axis; 0 when the view does not move along it
  };
  /// Each shadow argument or returned value with its view, in the order the
  /// chain met them (program order: what iterates them, the buffer plan and
  /// the emitted code, must not depend on where the allocator put them).
  std::vector<std::pair<const Value *, View>> views;

  /// How many slices the chain runs, per axis.
  std::vector<int64_t> sliceCounts() const;
};

/// The slice chains of `block` under its fusion plan (whose materialized
/// values are the ones in memory), in program order.
std::vector<std::unique_ptr<SliceChain>> planSliceChains(const Block &block,
                                                         const FusionPlan &fusion);

} // namespace shardc::llvmgen
