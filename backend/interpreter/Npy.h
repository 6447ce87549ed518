// NumPy's .npy format (https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html):
// the inputs and outputs of `shardc --interpret/--simulate` and of the
// executables. Versions 1.0, 2.0 and 3.0 are read; 1.0 is written.
// Element types: <f4 <f8 <i4 <i8 |b1 (f32 f64 i32 i64 i1), little-endian, C order.
#pragma once

#include "backend/interpreter/Tensor.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace shardc::interp {

/// Reads `path`, checking the magic string, version, header, element type,
/// shape, C order and data length against `expected`. Throws Error with a
/// message that starts with the file name and says what was expected.
Tensor readNpy(const std::string &path, const TensorType &expected);
/// Reads `path` whatever its type (shardc-npy-compare).
Tensor readNpyAnyType(const std::string &path);

/// The .npy encoding of `t` (version 1.0).
std::string encodeNpy(const Tensor &t);
/// Decodes .npy bytes; `name` is the file name for messages; `expected`
/// (when given) is checked. Throws Error.
Tensor decodeNpy(const std::string &bytes, const std::string &name,
                 const std::optional<TensorType> &expected);

/// Writes `t` to `path` atomically (a temporary file beside it, then
/// rename). Throws Error naming the file.
void writeNpy(const std::string &path, const Tensor &t);
/// Writes every (path, tensor) pair, all or nothing: each goes to a
/// temporary file first, and only when all of them are written are they
/// renamed into place. On failure the temporaries are removed and Error is
/// thrown naming the file.
void writeNpyFiles(const std::vector<std::pair<std::string, Tensor>> &files);

/// The .npy `descr` of an element type: `<f4`, `|b1`, ...
const char *npyDescr(DType dtype);

} // namespace shardc::interp
