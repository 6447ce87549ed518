// Unit tests for the shared .npy header code (support/Npy.h): the preamble,
// the header dict parser's acceptances and messages, descr mapping and the
// writer's 64-byte alignment.
#include "support/Npy.h"

#include <catch2/catch.hpp>

#include <string>

using namespace shardc::support;

namespace {

/// What parseNpyHeader says about `text` ("" when it parses).
std::string problemOf(const std::string &text) {
  NpyHeader header;
  return parseNpyHeader(text, header);
}

} // namespace

TEST_CASE("support npy: the preamble", "[support][npy]") {
  using Status = NpyPreamble::Status;
  CHECK(parseNpyPreamble("hello").status == Status::NotNpy);
  CHECK(parseNpyPreamble(std::string("\x93NUMPX\x01\x00\x10\x00", 10)).status == Status::NotNpy);
  CHECK(parseNpyPreamble(std::string("\x93NUMPY\x01\x00", 8)).status == Status::Truncated);
  NpyPreamble v4 = parseNpyPreamble(std::string("\x93NUMPY\x04\x00\x10\x00", 10));
  CHECK(v4.status == Status::BadVersion);
  CHECK(v4.major == 4);
  CHECK(parseNpyPreamble(std::string("\x93NUMPY\x01\x01\x10\x00", 10)).status ==
        Status::BadVersion);
  CHECK(parseNpyPreamble(std::string("\x93NUMPY\x02\x00\x10\x00", 10)).status ==
        Status::NoHeaderLength);

  NpyPreamble v1 = parseNpyPreamble(std::string("\x93NUMPY\x01\x00\x76\x01", 10));
  CHECK(v1.status == Status::Ok);
  CHECK(v1.headerOffset == 10);
  CHECK(v1.headerLength == 0x176);
  NpyPreamble v2 = parseNpyPreamble(std::string("\x93NUMPY\x02\x00\x76\x00\x01\x02", 12));
  CHECK(v2.status == Status::Ok);
  CHECK(v2.headerOffset == 12);
  CHECK(v2.headerLength == 0x02010076);
}

TEST_CASE("support npy: header dicts", "[support][npy]") {
  NpyHeader h;
  REQUIRE(parseNpyHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }  \n", h) ==
          "");
  CHECK(h.descr == "<f4");
  CHECK_FALSE(h.fortranOrder);
  CHECK(h.shape == std::vector<int64_t>{2, 3});
  // Any key order, double quotes, no trailing comma, Python 2 longs, rank 0 and 1.
  REQUIRE(parseNpyHeader("{\"shape\": (5L,), \"fortran_order\": True, \"descr\": \"|b1\"}", h) ==
          "");
  CHECK(h.shape == std::vector<int64_t>{5});
  CHECK(h.fortranOrder);
  REQUIRE(parseNpyHeader("{'descr': '<i8', 'fortran_order': False, 'shape': ()}", h) == "");
  CHECK(h.shape.empty());

  CHECK(problemOf("{'descr': '<f4', 'fortran_order': False, 'shope': (2, 3), }") ==
        "unknown key 'shope'");
  CHECK(problemOf("{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }") ==
        "expected a dimension at offset 54 of the header");
  CHECK(problemOf("{'descr': '<f4', 'shape': (2, 3), }") == "missing key 'fortran_order'");
  CHECK(problemOf("{'descr': '<f4', 'descr': '<f4', }") == "repeated key 'descr'");
  CHECK(problemOf("{'descr': '<f4', 'fortran_order': false, 'shape': (), }") ==
        "expected True or False at offset 34 of the header");
  CHECK(problemOf("{'descr': '<f4}") == "unterminated string");
  CHECK(problemOf("('descr': '<f4')") == "expected '{' at offset 0 of the header");
  CHECK(problemOf("{descr: '<f4'}") == "expected a quoted string at offset 1 of the header");
  CHECK(problemOf("{'descr': '<f4', 'fortran_order': False, 'shape': (2 3), }") ==
        "expected ',' at offset 53 of the header");
  CHECK(problemOf("{'descr': '<f4', 'fortran_order': False, 'shape': (), } x") ==
        "text after the dict at offset 56 of the header");
  CHECK(problemOf("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}") ==
        "dimension too large");
}

TEST_CASE("support npy: descr and shape text", "[support][npy]") {
  CHECK(std::string(npyDescr(NpyDType::F32)) == "<f4");
  CHECK(std::string(npyDescr(NpyDType::I1)) == "|b1");
  CHECK(npyDTypeOfDescr("<f8") == NpyDType::F64);
  CHECK(npyDTypeOfDescr("=i4") == NpyDType::I32);
  CHECK(npyDTypeOfDescr("<b1") == NpyDType::I1);
  CHECK(npyDTypeOfDescr("|b1") == NpyDType::I1);
  CHECK_FALSE(npyDTypeOfDescr(">f4"));
  CHECK_FALSE(npyDTypeOfDescr("<u4"));
  int64_t shape[] = {7, 4, 2};
  CHECK(npyShapeText(shape, 0) == "()");
  CHECK(npyShapeText(shape, 1) == "(7,)");
  CHECK(npyShapeText(shape, 3) == "(7, 4, 2)");
}

TEST_CASE("support npy: written headers are aligned and read back", "[support][npy]") {
  for (size_t rank = 0; rank <= 6; ++rank) {
    std::vector<int64_t> shape(rank, 123456789);
    std::string bytes = npyHeaderBytes("<f8", shape.data(), rank);
    INFO("rank " << rank);
    CHECK(bytes.size() % 64 == 0);
    CHECK(bytes.back() == '\n');
    NpyPreamble p = parseNpyPreamble(bytes);
    REQUIRE(p.status == NpyPreamble::Status::Ok);
    CHECK(p.headerOffset + p.headerLength == bytes.size());
    NpyHeader h;
    REQUIRE(parseNpyHeader(bytes.substr(p.headerOffset), h) == "");
    CHECK(h.descr == "<f8");
    CHECK(h.shape == shape);
  }
  int64_t shape[] = {2, 3};
  CHECK(npyHeaderBytes("<f4", shape, 2) ==
        std::string("\x93NUMPY\x01\x00\x76\x00", 10) +
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" +
            std::string(118 - 59 - 1, ' ') + "\n");
}
