// Unit tests for the shared block layout arithmetic (support/BlockLayout.h),
// checked against a brute-force split of each dim into blocks.
#include "support/BlockLayout.h"

#include <catch2/catch.hpp>

#include <vector>

using namespace shardc::support;

TEST_CASE("support layout: block size, start and extent", "[support][layout]") {
  CHECK(blockSize(7, 4) == 2);
  CHECK(blockSize(8, 4) == 2);
  CHECK(blockSize(0, 4) == 0);
  CHECK(blockSize(5, 1) == 5);
  CHECK(blockSize(5, 0) == 5);
  std::vector<int64_t> seven, five;
  for (int64_t i = 0; i < 4; ++i) {
    seven.push_back(blockExtent(7, 4, i));
    five.push_back(blockExtent(5, 4, i));
  }
  CHECK(seven == std::vector<int64_t>{2, 2, 2, 1});
  CHECK(five == std::vector<int64_t>{2, 2, 1, 0});
  CHECK(blockStart(5, 4, 3) == 5); // an empty block starts at the end

  // Every element of every dim lands in exactly one block, at its start + offset.
  for (int64_t dim = 0; dim <= 40; ++dim)
    for (int64_t shards = 1; shards <= 9; ++shards) {
      INFO(dim << " on " << shards);
      std::vector<int> owners(static_cast<size_t>(dim), 0);
      for (int64_t i = 0; i < shards; ++i) {
        int64_t start = blockStart(dim, shards, i), extent = blockExtent(dim, shards, i);
        REQUIRE(extent >= 0);
        REQUIRE(extent <= blockSize(dim, shards));
        REQUIRE(start + extent <= dim);
        for (int64_t e = start; e < start + extent; ++e)
          ++owners[static_cast<size_t>(e)];
        // The block is the elements e with e / blockSize == i.
        for (int64_t e = 0; e < dim; ++e)
          REQUIRE((e >= start && e < start + extent) == (e / blockSize(dim, shards) == i));
      }
      for (int owner : owners)
        REQUIRE(owner == 1);
    }
}

TEST_CASE("support layout: mesh digits and sub-axes", "[support][layout]") {
  int64_t sizes[] = {2, 3, 4};
  int64_t coords[3];
  rowMajorDigits(sizes, 3, 23, coords);
  CHECK(std::vector<int64_t>(coords, coords + 3) == std::vector<int64_t>{1, 2, 3});
  rowMajorDigits(sizes, 3, 5, coords);
  CHECK(std::vector<int64_t>(coords, coords + 3) == std::vector<int64_t>{0, 1, 1});
  for (int64_t p = 0; p < 24; ++p) {
    rowMajorDigits(sizes, 3, p, coords);
    CHECK((coords[0] * 3 + coords[1]) * 4 + coords[2] == p);
  }
  // "x":(2)2 of an axis of 8: reshape 8 into [2, 2, 2], the middle digit.
  CHECK(subAxisStride(8, 2, 2) == 2);
  std::vector<int64_t> digits;
  for (int64_t c = 0; c < 8; ++c)
    digits.push_back(subAxisDigit(c, 8, 2, 2));
  CHECK(digits == std::vector<int64_t>{0, 0, 1, 1, 0, 0, 1, 1});
  // A full axis is its coordinate.
  for (int64_t c = 0; c < 8; ++c)
    CHECK(subAxisDigit(c, 8, 1, 8) == c);
}
