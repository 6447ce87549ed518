// Element types and ranked tensor types.
#pragma once

#include "ir/Diagnostics.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace shardc {

enum class DType { F32, F64, I32, I64, I1 };

const char *dtypeName(DType t);
std::optional<DType> parseDType(std::string_view name);
bool isFloat(DType t);
bool isInteger(DType t); // i32, i64 (not i1)
/// Bytes one element occupies in memory (i1 is stored as one byte).
int64_t dtypeBytes(DType t);

/// `tensor<4x8xf32>`; rank 0 is `tensor<f32>`.
struct TensorType {
  std::vector<int64_t> shape;
  DType dtype = DType::F32;

  size_t rank() const { return shape.size(); }
  int64_t numElements() const;
  /// The bytes of a dense row-major buffer of this type.
  int64_t bytes() const { return numElements() * dtypeBytes(dtype); }
  std::string str() const;
  bool operator==(const TensorType &o) const { return shape == o.shape && dtype == o.dtype; }
  bool operator!=(const TensorType &o) const { return !(*this == o); }
};

/// Decodes the text of a `tensor<...>` token. On failure returns nullopt and
/// sets `errorMessage` and `errorOffset` (byte offset into `text`).
std::optional<TensorType> parseTensorType(std::string_view text, std::string &errorMessage,
                                          size_t &errorOffset);

} // namespace shardc
