// Unit tests for which mesh axes cross node boundaries (support/NodeMap.h).
#include "support/NodeMap.h"

#include <catch2/catch.hpp>

using namespace shardc::support;
using Crossing = std::vector<bool>;

TEST_CASE("node map: axes of a 2x4 mesh on blocks of ranks", "[support][nodes]") {
  std::vector<int64_t> mesh{2, 4}; // "x"=2, "y"=4: y is minor, ranks 0-3 are x=0
  CHECK(axesCrossingNodes(mesh, {}, blockNodes(8, 8)) == Crossing{false, false});
  CHECK(axesCrossingNodes(mesh, {}, blockNodes(8, 4)) == Crossing{true, false});
  CHECK(axesCrossingNodes(mesh, {}, blockNodes(8, 2)) == Crossing{true, true});
  CHECK(axesCrossingNodes(mesh, {}, blockNodes(8, 1)) == Crossing{true, true});
  // 3 ranks per node: node boundaries fall inside both axes.
  CHECK(axesCrossingNodes(mesh, {}, blockNodes(8, 3)) == Crossing{true, true});
}

TEST_CASE("node map: the mesh's device order and round-robin nodes", "[support][nodes]") {
  std::vector<int64_t> mesh{2, 4};
  // device_ids transposed: position (x, y) runs on rank y * 2 + x, so "x"
  // pairs ranks 2k and 2k+1 and stays within nodes of 2.
  std::vector<int64_t> transposed{0, 2, 4, 6, 1, 3, 5, 7};
  CHECK(axesCrossingNodes(mesh, transposed, blockNodes(8, 2)) == Crossing{false, true});
  // Ranks dealt round-robin onto 2 nodes (--map-by node): even ranks on 0.
  std::vector<int64_t> roundRobin{0, 1, 0, 1, 0, 1, 0, 1};
  CHECK(axesCrossingNodes(mesh, {}, roundRobin) == Crossing{false, true});
  CHECK(axesCrossingNodes(mesh, transposed, roundRobin) == Crossing{true, false});
}

TEST_CASE("node map: size-1 axes, three axes, uncovered ranks", "[support][nodes]") {
  CHECK(axesCrossingNodes({1, 8}, {}, blockNodes(8, 4)) == Crossing{false, true});
  // "a"=2, "b"=2, "c"=2 on 2 nodes of 4: only the major axis leaves a node.
  CHECK(axesCrossingNodes({2, 2, 2}, {}, blockNodes(8, 4)) == Crossing{true, false, false});
  CHECK(axesCrossingNodes({2, 2, 2}, {}, blockNodes(8, 2)) == Crossing{true, true, false});
  // A mesh on no axes (one device) crosses nothing.
  CHECK(axesCrossingNodes({}, {}, blockNodes(1, 1)).empty());
  // Ranks the map lacks count as nodes of their own.
  CHECK(axesCrossingNodes({4}, {}, {0, 0}) == Crossing{true});
  CHECK(axesCrossingNodes({2}, {}, {0, 0}) == Crossing{false});
}
