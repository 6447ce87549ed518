// `shardc FILE --visualize`: terminal pictures of which devices hold which
// block of each sharded value, like jax.debug.visualize_array_sharding.
#pragma once

#include "ir/IR.h"

#include <string>

namespace shardc {

struct VisualizeOptions {
  /// ANSI background colours, one per distinct block.
  bool color = false;
  /// Total width of a picture in columns, borders included (wider only when
  /// the device labels do not fit).
  int maxWidth = 80;
};

/// The picture of one tensor of global type `type` sharded as `sharding` on
/// `mesh`: a grid of boxes for the last two dims (rows = blocks of dim
/// rank-2, columns = blocks of dim rank-1), box sizes roughly proportional
/// to the blocks' extents, each box labelled with the devices that hold the
/// block (`0`, `0,4`, `0-3`); a box of only padding is shaded. A 1-D tensor
/// is one row, a 0-D one box; for rank N > 2 one grid per combination of
/// shard indices of the leading dims, headed `[dim0 block 1/2]`. Below,
/// one line per padded dim: `dim 0: 7 = 2+2+2+1 (1 padded)`.
std::string visualizeSharding(const Mesh &mesh, const TensorType &type, const Sharding &sharding,
                              const VisualizeOptions &options);

/// Pictures of every value of `module` that has a sharding, in program
/// order: the top-level snippet, then per function its parameters, op
/// results (manual_computation bodies included) and declared results. Each
/// is headed by the value's name and location, its global type, sharding,
/// mesh, JAX-style type and per-device (padded) shape. A module without
/// sharded values gives a one-line note.
std::string visualizeModule(const Module &module, const VisualizeOptions &options);

} // namespace shardc
