// Element and tensor types, and the decoder for `tensor<...>` tokens.
#include "ir/Types.h"

#include <cctype>
#include <fmt/format.h>
#include <limits>

namespace shardc {

const char *dtypeName(DType t) {
  switch (t) {
  case DType::F32:
    return "f32";
  case DType::F64:
    return "f64";
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  case DType::I1:
    return "i1";
  }
  return "?";
}

std::optional<DType> parseDType(std::string_view name) {
  if (name == "f32")
    return DType::F32;
  if (name == "f64")
    return DType::F64;
  if (name == "i32")
    return DType::I32;
  if (name == "i64")
    return DType::I64;
  if (name == "i1" || name == "bool")
    return DType::I1;
  return std::nullopt;
}

bool isFloat(DType t) { return t == DType::F32 || t == DType::F64; }
bool isInteger(DType t) { return t == DType::I32 || t == DType::I64; }

int64_t dtypeBytes(DType t) {
  switch (t) {
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::I1:
    return 1;
  }
  return 1;
}

int64_t TensorType::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string TensorType::str() const {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += fmt::format("{}x", d);
  return s + dtypeName(dtype) + ">";
}

std::optional<TensorType> parseTensorType(std::string_view text, std::string &errorMessage,
                                          size_t &errorOffset) {
  // text is the whole token: `tensor<` DIMS `x` DTYPE `>`.
  const std::string_view prefix = "tensor<";
  size_t pos = prefix.size();
  size_t end = text.size() - 1; // the closing '>'
  auto fail = [&](size_t at, std::string msg) -> std::optional<TensorType> {
    errorOffset = at;
    errorMessage = std::move(msg);
    return std::nullopt;
  };
  auto skipSpaces = [&] {
    while (pos < end && (text[pos] == ' ' || text[pos] == '\t'))
      ++pos;
  };
  TensorType type;
  // Element count of the whole tensor must stay representable: shapes of
  // more than 2^62 elements are rejected here rather than overflowing later.
  const int64_t kMaxElements = int64_t(1) << 62;
  int64_t elements = 1;
  skipSpaces();
  while (pos < end && std::isdigit(static_cast<unsigned char>(text[pos]))) {
    size_t start = pos;
    int64_t value = 0;
    while (pos < end && std::isdigit(static_cast<unsigned char>(text[pos]))) {
      if (value > (std::numeric_limits<int64_t>::max() - 9) / 10)
        return fail(start, "tensor dimension is too large");
      value = value * 10 + (text[pos] - '0');
      ++pos;
    }
    if (value > 0 && elements > kMaxElements / value)
      return fail(start, "tensor has too many elements");
    elements *= value > 0 ? value : 1;
    type.shape.push_back(value);
    if (pos >= end || text[pos] != 'x')
      return fail(pos, "expected 'x' after a tensor dimension");
    ++pos;
  }
  if (pos < end && text[pos] == '?')
    return fail(pos, "dynamic dimensions are not supported: write a static size");
  size_t dtypeStart = pos;
  while (pos < end && std::isalnum(static_cast<unsigned char>(text[pos])))
    ++pos;
  std::string_view name = text.substr(dtypeStart, pos - dtypeStart);
  if (name.empty())
    return fail(dtypeStart, "expected an element type (f32, f64, i32, i64, i1)");
  auto dtype = parseDType(name);
  if (!dtype)
    return fail(dtypeStart, fmt::format("unknown element type: {} (expected f32, "
                                        "f64, i32, i64 or i1)",
                                        name));
  type.dtype = *dtype;
  skipSpaces();
  if (pos != end)
    return fail(pos, "unexpected text in tensor type");
  return type;
}

} // namespace shardc
