// Which mesh axes cross node boundaries: given the node each rank runs on, an
// axis crosses nodes when two devices that differ only in their coordinate
// along it sit on different nodes (their collectives over it leave the node).
#pragma once

#include <cstdint>
#include <vector>

namespace shardc::support {

/// For each axis of a mesh of `axisSizes` (row-major), whether it crosses
/// nodes. deviceAt[p] is the rank at mesh position p (empty: rank p);
/// nodeOfRank[r] names rank r's node (any id; equal ids = same node).
/// A rank beyond nodeOfRank counts as a node of its own.
std::vector<bool> axesCrossingNodes(const std::vector<int64_t> &axisSizes,
                                    const std::vector<int64_t> &deviceAt,
                                    const std::vector<int64_t> &nodeOfRank);

/// Node ids for `ranks` ranks placed in blocks of `ranksPerNode` (the
/// launchers' default by-slot mapping): rank r on node r / ranksPerNode.
std::vector<int64_t> blockNodes(int64_t ranks, int64_t ranksPerNode);

} // namespace shardc::support
