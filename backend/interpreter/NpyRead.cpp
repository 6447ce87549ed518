// Reading .npy files: every way a file can be wrong is an Error that names
// the file and says what was expected.
#include "backend/interpreter/Npy.h"

#include <fmt/format.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace shardc::interp {
namespace {

static_assert(sizeof(float) == 4 && sizeof(double) == 8, ".npy floats are IEEE 754");

/// The header dict, e.g. `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }`.
struct Header {
  std::string descr;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
};

/// A recursive-descent reader for the Python literal subset .npy headers use.
class HeaderParser {
public:
  HeaderParser(const std::string &text, const std::string &file) : text_(text), file_(file) {}

  Header parse() {
    Header header;
    bool seenDescr = false, seenOrder = false, seenShape = false;
    expect('{');
    while (!peek('}')) {
      std::string key = quoted();
      expect(':');
      if (key == "descr") {
        header.descr = quoted();
        seenDescr = true;
      } else if (key == "fortran_order") {
        header.fortranOrder = boolean();
        seenOrder = true;
      } else if (key == "shape") {
        header.shape = tuple();
        seenShape = true;
      } else {
        fail(fmt::format("unknown key '{}'", key));
      }
      if (!peek('}'))
        expect(',');
    }
    expect('}');
    if (!seenDescr || !seenOrder || !seenShape)
      fail(fmt::format("missing key '{}'", !seenDescr   ? "descr"
                                           : !seenOrder ? "fortran_order"
                                                        : "shape"));
    return header;
  }

private:
  [[noreturn]] void fail(const std::string &what) {
    throw Error(fmt::format("{}: bad .npy header: {}", file_, what));
  }
  void skipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_])))
      ++pos_;
  }
  bool peek(char c) {
    skipSpace();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  void expect(char c) {
    if (!peek(c))
      fail(fmt::format("expected '{}' at offset {} of the header", c, pos_));
    ++pos_;
  }
  std::string quoted() {
    skipSpace();
    char q = pos_ < text_.size() ? text_[pos_] : 0;
    if (q != '\'' && q != '"')
      fail(fmt::format("expected a quoted string at offset {} of the header", pos_));
    size_t end = text_.find(q, pos_ + 1);
    if (end == std::string::npos)
      fail("unterminated string");
    std::string s = text_.substr(pos_ + 1, end - pos_ - 1);
    pos_ = end + 1;
    return s;
  }
  bool boolean() {
    skipSpace();
    for (auto [word, value] : {std::pair{"True", true}, {"False", false}})
      if (text_.compare(pos_, std::strlen(word), word) == 0) {
        pos_ += std::strlen(word);
        return value;
      }
    fail(fmt::format("expected True or False at offset {} of the header", pos_));
  }
  std::vector<int64_t> tuple() {
    std::vector<int64_t> values;
    expect('(');
    while (!peek(')')) {
      size_t start = pos_;
      int64_t v = 0;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        if (v > (INT64_C(1) << 62) / 10)
          fail("dimension too large");
        v = v * 10 + (text_[pos_++] - '0');
      }
      if (pos_ == start)
        fail(fmt::format("expected a dimension at offset {} of the header", pos_));
      values.push_back(v);
      if (!peek(')'))
        expect(',');
    }
    expect(')');
    return values;
  }

  const std::string &text_;
  const std::string &file_;
  size_t pos_ = 0;
};

std::string shapeText(const std::vector<int64_t> &shape) {
  return shape.size() == 1 ? fmt::format("({},)", shape[0])
                           : fmt::format("({})", fmt::join(shape, ", "));
}

std::optional<DType> dtypeOfDescr(const std::string &descr) {
  for (DType t : {DType::F32, DType::F64, DType::I32, DType::I64, DType::I1})
    if (descr == npyDescr(t) || (descr.size() == 3 && descr[0] == '=' &&
                                 descr.substr(1) == std::string(npyDescr(t)).substr(1)))
      return t;
  if (descr == "<b1" || descr == "=b1")
    return DType::I1;
  return std::nullopt;
}

uint32_t littleEndian(const std::string &bytes, size_t offset, size_t n) {
  uint32_t v = 0;
  for (size_t i = n; i-- > 0;)
    v = v << 8 | static_cast<unsigned char>(bytes[offset + i]);
  return v;
}

} // namespace

const char *npyDescr(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "<f4";
  case DType::F64:
    return "<f8";
  case DType::I32:
    return "<i4";
  case DType::I64:
    return "<i8";
  case DType::I1:
    return "|b1";
  }
  return "?";
}

Tensor decodeNpy(const std::string &bytes, const std::string &name,
                 const std::optional<TensorType> &expected) {
  static const char kMagic[] = "\x93NUMPY";
  if (bytes.size() < 6 || bytes.compare(0, 6, kMagic, 6) != 0)
    throw Error(fmt::format("{}: not a .npy file: it does not start with \"\\x93NUMPY\"", name));
  if (bytes.size() < 10)
    throw Error(
        fmt::format("{}: truncated .npy file: {} bytes, no complete header", name, bytes.size()));
  int major = static_cast<unsigned char>(bytes[6]), minor = static_cast<unsigned char>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    throw Error(fmt::format("{}: unsupported .npy version {}.{} (1.0, 2.0 and 3.0 are read)", name,
                            major, minor));
  size_t lengthBytes = major == 1 ? 2 : 4;
  if (bytes.size() < 8 + lengthBytes)
    throw Error(fmt::format("{}: truncated .npy file: no header length", name));
  size_t headerLength = littleEndian(bytes, 8, lengthBytes);
  size_t dataStart = 8 + lengthBytes + headerLength;
  if (bytes.size() < dataStart)
    throw Error(fmt::format("{}: truncated .npy file: the header is {} bytes, {} are left", name,
                            headerLength, bytes.size() - 8 - lengthBytes));
  Header header = HeaderParser(bytes.substr(8 + lengthBytes, headerLength), name).parse();

  std::optional<DType> dtype = dtypeOfDescr(header.descr);
  if (!dtype)
    throw Error(fmt::format("{}: unsupported element type '{}' (f32 <f4, f64 <f8, i32 <i4, "
                            "i64 <i8, i1 |b1 are read)",
                            name, header.descr));
  if (header.fortranOrder)
    throw Error(fmt::format("{}: Fortran order is not supported: save the array in C order "
                            "(numpy.ascontiguousarray)",
                            name));
  if (expected && *dtype != expected->dtype)
    throw Error(fmt::format("{}: element type doesn't match: expected {} ({}), got {} ({})", name,
                            npyDescr(expected->dtype), dtypeName(expected->dtype), header.descr,
                            dtypeName(*dtype)));
  if (expected && header.shape != expected->shape)
    throw Error(fmt::format("{}: shape doesn't match: expected {} for {}, got {}", name,
                            shapeText(expected->shape), expected->str(), shapeText(header.shape)));

  int64_t count = 1;
  for (int64_t d : header.shape)
    if (__builtin_mul_overflow(count, d, &count) || count > (INT64_C(1) << 40))
      throw Error(fmt::format("{}: shape {} is too large", name, shapeText(header.shape)));
  TensorType type{header.shape, *dtype};
  uint64_t width = static_cast<uint64_t>(dtypeBytes(*dtype));
  uint64_t dataBytes = static_cast<uint64_t>(count) * width;
  uint64_t have = bytes.size() - dataStart;
  if (have < dataBytes)
    throw Error(fmt::format("{}: truncated .npy file: {} {} elements need {} bytes of data, "
                            "the file has {}",
                            name, shapeText(header.shape), header.descr, dataBytes, have));
  if (have > dataBytes)
    throw Error(fmt::format("{}: {} bytes of unexpected data after the {} elements", name,
                            have - dataBytes, count));

  Tensor t(type);
  const char *data = bytes.data() + dataStart;
  for (int64_t i = 0; i < count; ++i) {
    const char *p = data + i * width;
    switch (*dtype) {
    case DType::F32: {
      float f;
      std::memcpy(&f, p, 4);
      t.setFloat(i, f);
      break;
    }
    case DType::F64: {
      double f;
      std::memcpy(&f, p, 8);
      t.setFloat(i, f);
      break;
    }
    case DType::I32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      t.setInt(i, static_cast<uint64_t>(static_cast<int64_t>(v)));
      break;
    }
    case DType::I64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      t.setInt(i, static_cast<uint64_t>(v));
      break;
    }
    case DType::I1: {
      unsigned char b = static_cast<unsigned char>(*p);
      if (b > 1)
        throw Error(fmt::format("{}: element {} is not a bool: byte {}", name, i, int(b)));
      t.setInt(i, b);
      break;
    }
    }
  }
  return t;
}

namespace {

std::string readFile(const std::string &path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw Error(fmt::format("cannot open '{}': Is a directory", path));
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad())
    throw Error(fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
  return content.str();
}

} // namespace

Tensor readNpy(const std::string &path, const TensorType &expected) {
  return decodeNpy(readFile(path), path, expected);
}

Tensor readNpyAnyType(const std::string &path) {
  return decodeNpy(readFile(path), path, std::nullopt);
}

} // namespace shardc::interp
