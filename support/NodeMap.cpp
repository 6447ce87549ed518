// Mesh axes against the nodes of a launch (NodeMap.h).
#include "support/NodeMap.h"

#include <cstddef>

namespace shardc::support {

std::vector<bool> axesCrossingNodes(const std::vector<int64_t> &axisSizes,
                                    const std::vector<int64_t> &deviceAt,
                                    const std::vector<int64_t> &nodeOfRank) {
  int64_t positions = 1;
  for (int64_t size : axisSizes)
    positions *= size;
  auto nodeAt = [&](int64_t position) {
    int64_t rank = deviceAt.empty() ? position : deviceAt[static_cast<size_t>(position)];
    bool known = rank >= 0 && rank < static_cast<int64_t>(nodeOfRank.size());
    // A rank the map does not cover gets an id no listed rank has.
    return known ? nodeOfRank[static_cast<size_t>(rank)] * 2 : rank * 2 + 1;
  };
  std::vector<bool> crossing(axisSizes.size(), false);
  int64_t stride = positions;
  for (size_t a = 0; a < axisSizes.size(); ++a) {
    stride /= axisSizes[a] > 0 ? axisSizes[a] : 1;
    // Each position whose coordinate along `a` is not 0 against its
    // neighbour one step back along `a`: a chain covers the whole axis.
    for (int64_t p = 0; p < positions && !crossing[a]; ++p) {
      int64_t coord = (p / stride) % axisSizes[a];
      if (coord > 0 && nodeAt(p) != nodeAt(p - stride))
        crossing[a] = true;
    }
  }
  return crossing;
}

std::vector<int64_t> blockNodes(int64_t ranks, int64_t ranksPerNode) {
  std::vector<int64_t> nodes;
  for (int64_t r = 0; r < ranks; ++r)
    nodes.push_back(ranksPerNode > 0 ? r / ranksPerNode : r);
  return nodes;
}

} // namespace shardc::support
