// Unit tests for .npy I/O (backend/interpreter/Npy.h): round trips for every
// element type and rank, atomic multi-file writes, every malformed file.
#include "InterpreterTestHelpers.h"
#include "backend/interpreter/Npy.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>

using namespace shardc;
using namespace shardc::interp;
using namespace shardc::testing;

// ---- .npy ------------------------------------------------------------------------

namespace {

/// The Error message decoding `bytes` (named "t.npy") as `expected` gives.
std::string npyError(const std::string &bytes, const TensorType &expected) {
  try {
    decodeNpy(bytes, "t.npy", expected);
  } catch (const Error &e) {
    return e.what();
  }
  return "(no error)";
}

/// `bytes` with the first occurrence of `from` replaced by `to`.
std::string patched(std::string bytes, const std::string &from, const std::string &to) {
  bytes.replace(bytes.find(from), from.size(), to);
  return bytes;
}

} // namespace

TEST_CASE("npy round trip for every element type and rank", "[interpreter][npy]") {
  std::vector<Tensor> tensors = {
      f32({2, 3}, {1.5, -2, 3e-8, NAN, INFINITY, -0.0}),       f64({3}, {0.1, -1e300, 5}),
      i32({1, 2, 2}, {INT32_MIN, INT32_MAX, 0, -1}),           i64({}, {INT64_MIN}),
      makeIntTensor(TensorType{{4}, DType::I1}, {1, 0, 0, 1}), f32({0, 3}, {}),
  };
  for (const Tensor &t : tensors) {
    std::string bytes = encodeNpy(t);
    CHECK((bytes.size() - t.size() * dtypeBytes(t.dtype())) % 64 == 0); // aligned data
    Tensor back = decodeNpy(bytes, "t.npy", t.type());
    CHECK(back.type() == t.type());
    CHECK(allClose(back, t, 0, 0));
  }
  CHECK(encodeNpy(f32({3}, {1, 2, 3})).find("'shape': (3,)") != std::string::npos);
  CHECK(encodeNpy(i64({}, {1})).find("'descr': '<i8', 'fortran_order': False, 'shape': ()") !=
        std::string::npos);
}

TEST_CASE("npy files are written atomically and read back", "[interpreter][npy]") {
  std::string dir = "npy_test_dir";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directory(dir);
  Tensor t = i32({2}, {7, 8});
  writeNpyFiles({{dir + "/a.npy", t}, {dir + "/b.npy", t}});
  CHECK(allClose(readNpy(dir + "/a.npy", t.type()), t, 0, 0));
  // One unwritable path: nothing is written, no temporary is left.
  CHECK_THROWS_AS(writeNpyFiles({{dir + "/c.npy", t}, {dir + "/missing/d.npy", t}}), Error);
  CHECK_FALSE(std::filesystem::exists(dir + "/c.npy"));
  size_t files = 0;
  for (const auto &entry : std::filesystem::directory_iterator(dir))
    files += entry.is_regular_file();
  CHECK(files == 2);
  CHECK_THROWS_WITH(readNpy(dir + "/nope.npy", t.type()),
                    "cannot open 'npy_test_dir/nope.npy': No such file or directory");
  CHECK_THROWS_WITH(readNpy(dir, t.type()), "cannot open 'npy_test_dir': Is a directory");
  std::filesystem::remove_all(dir);
}

TEST_CASE("npy in Fortran order is read into row-major order", "[interpreter][npy]") {
  // numpy saves an F-contiguous array (np.save(f, a.T)) with fortran_order
  // True: the file holds the elements first index fastest.
  std::string bytes = encodeNpy(f32({2, 3}, {1, 2, 3, 4, 5, 6}));
  Tensor t = decodeNpy(patched(bytes, "False", "True "), "t.npy", TensorType{{2, 3}, DType::F32});
  CHECK(values(t) == std::vector<double>{1, 3, 5, 2, 4, 6});
  bytes = encodeNpy(makeIntTensor(TensorType{{2, 1, 2}, DType::I64}, {1, 2, 3, 4}));
  t = decodeNpy(patched(bytes, "False", "True "), "t.npy", TensorType{{2, 1, 2}, DType::I64});
  CHECK(values(t) == std::vector<double>{1, 3, 2, 4});
}

TEST_CASE("every malformed npy file is a clear error", "[interpreter][npy]") {
  TensorType type{{2, 3}, DType::F32};
  std::string good = encodeNpy(f32({2, 3}, {1, 2, 3, 4, 5, 6}));
  REQUIRE(npyError(good, type) == "(no error)");
  CHECK(npyError("hello", type) == "t.npy: not a .npy file: it does not start with \"\\x93NUMPY\"");
  CHECK(npyError(good.substr(0, 8), type) ==
        "t.npy: truncated .npy file: 8 bytes, no complete header");
  CHECK(npyError(patched(good, std::string("NUMPY\x01", 6), std::string("NUMPY\x04", 6)), type) ==
        "t.npy: unsupported .npy version 4.0 (1.0, 2.0 and 3.0 are read)");
  CHECK(npyError(good.substr(0, 50), type) ==
        "t.npy: truncated .npy file: the header is 118 bytes, 40 are left");
  CHECK(npyError(good.substr(0, good.size() - 1), type) ==
        "t.npy: truncated .npy file: (2, 3) <f4 elements need 24 bytes of data, the file has 23");
  CHECK(npyError(good + "xx", type) == "t.npy: 2 bytes of unexpected data after the 6 elements");
  CHECK(npyError(patched(good, "<f4", ">f4"), type) ==
        "t.npy: unsupported element type '>f4' (f32 <f4, f64 <f8, i32 <i4, i64 <i8, i1 |b1 are "
        "read)");
  CHECK(npyError(patched(good, "<f4", "<i4"), type) ==
        "t.npy: element type doesn't match: expected <f4 (f32), got <i4 (i32)");
  CHECK(npyError(patched(good, "(2, 3)", "(3, 2)"), type) ==
        "t.npy: shape doesn't match: expected (2, 3) for tensor<2x3xf32>, got (3, 2)");
  CHECK(npyError(patched(good, "'shape'", "'shope'"), type) ==
        "t.npy: bad .npy header: unknown key 'shope'");
  CHECK(npyError(patched(good, "(2, 3)", "(2, x)"), type) ==
        "t.npy: bad .npy header: expected a dimension at offset 54 of the header");
  CHECK(npyError(patched(good, "'fortran_order': False, ", "                        "), type) ==
        "t.npy: bad .npy header: missing key 'fortran_order'");
  std::string bools = encodeNpy(makeIntTensor(TensorType{{2}, DType::I1}, {1, 0}));
  bools[bools.size() - 1] = 2;
  CHECK(npyError(bools, TensorType{{2}, DType::I1}) == "t.npy: element 1 is not a bool: byte 2");
  // Version 2.0: a 4-byte header length.
  std::string v2 =
      std::string("\x93NUMPY\x02\x00", 8) + std::string("\x76\x00\x00\x00", 4) + good.substr(10);
  CHECK(npyError(v2, type) == "(no error)");
}
