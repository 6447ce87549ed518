// Reading .npy files: every way a file can be wrong is an Error that names
// the file and says what was expected.
#include "backend/interpreter/Npy.h"

#include "support/Npy.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace shardc::interp {
namespace {

static_assert(sizeof(float) == 4 && sizeof(double) == 8, ".npy floats are IEEE 754");

std::string shapeText(const std::vector<int64_t> &shape) {
  return support::npyShapeText(shape.data(), shape.size());
}

// DType and support::NpyDType list the same types in the same order.
static_assert(static_cast<int>(DType::F32) == static_cast<int>(support::NpyDType::F32) &&
              static_cast<int>(DType::F64) == static_cast<int>(support::NpyDType::F64) &&
              static_cast<int>(DType::I32) == static_cast<int>(support::NpyDType::I32) &&
              static_cast<int>(DType::I64) == static_cast<int>(support::NpyDType::I64) &&
              static_cast<int>(DType::I1) == static_cast<int>(support::NpyDType::I1));

support::NpyDType npyDType(DType dtype) { return static_cast<support::NpyDType>(dtype); }

} // namespace

const char *npyDescr(DType dtype) { return support::npyDescr(npyDType(dtype)); }

Tensor decodeNpy(const std::string &bytes, const std::string &name,
                 const std::optional<TensorType> &expected) {
  using Status = support::NpyPreamble::Status;
  support::NpyPreamble preamble = support::parseNpyPreamble(bytes);
  switch (preamble.status) {
  case Status::Ok:
    break;
  case Status::NotNpy:
    throw Error(fmt::format("{}: not a .npy file: it does not start with \"\\x93NUMPY\"", name));
  case Status::Truncated:
    throw Error(
        fmt::format("{}: truncated .npy file: {} bytes, no complete header", name, bytes.size()));
  case Status::BadVersion:
    throw Error(fmt::format("{}: unsupported .npy version {}.{} (1.0, 2.0 and 3.0 are read)", name,
                            preamble.major, preamble.minor));
  case Status::NoHeaderLength:
    throw Error(fmt::format("{}: truncated .npy file: no header length", name));
  }
  size_t headerLength = preamble.headerLength;
  size_t dataStart = preamble.headerOffset + headerLength;
  if (bytes.size() < dataStart)
    throw Error(fmt::format("{}: truncated .npy file: the header is {} bytes, {} are left", name,
                            headerLength, bytes.size() - preamble.headerOffset));
  support::NpyHeader header;
  std::string problem = support::parseNpyHeader(
      std::string_view(bytes).substr(preamble.headerOffset, headerLength), header);
  if (!problem.empty())
    throw Error(fmt::format("{}: bad .npy header: {}", name, problem));

  std::optional<support::NpyDType> npyType = support::npyDTypeOfDescr(header.descr);
  if (!npyType)
    throw Error(fmt::format("{}: unsupported element type '{}' (f32 <f4, f64 <f8, i32 <i4, "
                            "i64 <i8, i1 |b1 are read)",
                            name, header.descr));
  DType dtype = static_cast<DType>(*npyType);
  if (expected && dtype != expected->dtype)
    throw Error(fmt::format("{}: element type doesn't match: expected {} ({}), got {} ({})", name,
                            npyDescr(expected->dtype), dtypeName(expected->dtype), header.descr,
                            dtypeName(dtype)));
  if (expected && header.shape != expected->shape)
    throw Error(fmt::format("{}: shape doesn't match: expected {} for {}, got {}", name,
                            shapeText(expected->shape), expected->str(), shapeText(header.shape)));

  int64_t count = 1;
  for (int64_t d : header.shape)
    if (__builtin_mul_overflow(count, d, &count) || count > (INT64_C(1) << 40))
      throw Error(fmt::format("{}: shape {} is too large", name, shapeText(header.shape)));
  TensorType type{header.shape, dtype};
  uint64_t width = static_cast<uint64_t>(dtypeBytes(dtype));
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
  // In Fortran order (numpy's np.save of an F-contiguous array, such as a
  // transposed one) the file's first index varies fastest: file element
  // `file` goes to its row-major position.
  std::vector<int64_t> strides = stridesOf(header.shape);
  auto positionOf = [&](int64_t file) {
    if (!header.fortranOrder)
      return file;
    int64_t position = 0;
    for (size_t d = 0; d < header.shape.size(); ++d) {
      position += file % header.shape[d] * strides[d];
      file /= header.shape[d];
    }
    return position;
  };
  for (int64_t file = 0; file < count; ++file) {
    const char *p = data + file * width;
    int64_t i = positionOf(file);
    switch (dtype) {
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
        throw Error(fmt::format("{}: element {} is not a bool: byte {}", name, file, int(b)));
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
