// The .npy header (numpy.lib.format): preamble, header dict parser, version 1.0
// writer. Used by the interpreter's .npy I/O (backend/interpreter/Npy*.cpp) and
// the runtime's (runtime/Npy.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardc::support {

/// The element types .npy files carry here, in the order of shardrt.h's
/// SHARDRT_F32 ... SHARDRT_I1.
enum class NpyDType { F32, F64, I32, I64, I1 };

/// The `descr` shardc writes for `dtype`: "<f4", "<f8", "<i4", "<i8", "|b1".
const char *npyDescr(NpyDType dtype);
/// The element type of a `descr`: the one npyDescr gives, with '=' (native,
/// little-endian here) for '<', and "<b1" or "=b1" for "|b1"; nullopt for
/// any other (big-endian, other types).
std::optional<NpyDType> npyDTypeOfDescr(std::string_view descr);

/// A shape as a Python tuple, as .npy headers write it: "(2, 3)", "(4,)", "()".
std::string npyShapeText(const int64_t *shape, size_t rank);

/// What the first bytes of a file say (magic string, version, header length).
struct NpyPreamble {
  enum class Status {
    Ok,
    NotNpy,         ///< no "\x93NUMPY" magic string
    Truncated,      ///< fewer than 10 bytes
    BadVersion,     ///< not 1.0, 2.0 or 3.0
    NoHeaderLength, ///< a 2.0 or 3.0 file of fewer than 12 bytes
  };
  Status status = Status::NotNpy;
  int major = 0, minor = 0;
  /// Where the header dict starts (10 for version 1.0, else 12) and its length.
  size_t headerOffset = 0, headerLength = 0;
};

/// Reads the preamble from the first bytes of a file (`prefix`: at least the
/// first 12 bytes, or the whole file when it is shorter).
NpyPreamble parseNpyPreamble(std::string_view prefix);

/// The header dict, e.g. `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }`.
struct NpyHeader {
  std::string descr;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
};

/// Parses a header dict (the Python literal subset .npy files use: the three
/// keys once each, in any order; Python 2's `3L` dims are read too). Returns
/// "" or what is wrong, e.g. "unknown key 'shope'" or "expected a dimension
/// at offset 54 of the header".
std::string parseNpyHeader(std::string_view text, NpyHeader &header);

/// The version 1.0 preamble and header dict of an array of `descr` and
/// `shape`, padded with spaces and a newline so the data starts at a
/// multiple of 64 bytes, as numpy writes it.
std::string npyHeaderBytes(const char *descr, const int64_t *shape, size_t rank);

} // namespace shardc::support
