// Shardings as keys of memo tables: written out as 64-bit words that two
// different shardings never share (strings with their length first), hashed
// as words. Propagation replays repeated edge visits and partitioning
// repeated factor assignments with them (a program repeats its layers).
#pragma once

#include "ir/Sharding.h"
#include "ir/Types.h"

#include <cstdint>
#include <string>
#include <vector>

namespace shardc {

using KeyWords = std::vector<uint64_t>;

struct KeyWordsHash {
  size_t operator()(const KeyWords &words) const;
};

void appendKey(KeyWords &out, const std::string &text);
/// Each axis's name, pre-size and size; with `withLoc`, also where it was
/// written (a result that copies the axes copies their locations too).
void appendKey(KeyWords &out, const std::vector<AxisRef> &axes, bool withLoc);
/// The mesh name, each dim (open, priority, axes) and the replicated axes.
void appendKey(KeyWords &out, const Sharding &sharding, bool withLoc);
/// What a reshard plan on one mesh depends on: the tensor's dtype and shape,
/// the source sharding, the partial axes and their reduction, the target.
/// Partitioning and the auto-shard pricer key their plans with it.
void appendReshardKey(KeyWords &out, const TensorType &type, const Sharding &source,
                      const std::string &partialKind, const std::vector<AxisRef> &partialAxes,
                      const Sharding &target);

} // namespace shardc
