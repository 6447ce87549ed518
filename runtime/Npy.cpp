// .npy headers read from an open file and checked against the tensor the
// program expects; the parsing and writing is support/Npy.h's.
#include "runtime/Npy.h"

#include "runtime/Context.h"
#include "runtime/ProgramText.h"
#include "support/Npy.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

namespace shardrt {

const char *npyDescr(int64_t dtype) {
  return dtype >= SHARDRT_F32 && dtype <= SHARDRT_I1
             ? shardc::support::npyDescr(static_cast<shardc::support::NpyDType>(dtype))
             : "?";
}

namespace {

bool readExactly(int fd, int64_t offset, void *buffer, size_t bytes) {
  auto *out = static_cast<char *>(buffer);
  while (bytes > 0) {
    ssize_t got = pread(fd, out, bytes, offset);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      return false;
    out += got;
    bytes -= static_cast<size_t>(got);
    offset += got;
  }
  return true;
}

std::string descrName(const std::string &descr) {
  for (int64_t dtype = SHARDRT_F32; dtype <= SHARDRT_I1; ++dtype)
    if (descr == npyDescr(dtype))
      return format("'%s' (%s)", descr.c_str(), dtypeName(dtype));
  return "'" + descr + "'";
}

} // namespace

int64_t readNpyHeader(int fd, int64_t fileSize, const shardrt_tensor &expected, std::string &error,
                      bool &fortranOrder) {
  using shardc::support::NpyPreamble;
  char prefix[12];
  size_t prefixBytes = static_cast<size_t>(std::clamp<int64_t>(fileSize, 0, sizeof prefix));
  NpyPreamble preamble;
  if (readExactly(fd, 0, prefix, prefixBytes))
    preamble = shardc::support::parseNpyPreamble(std::string_view(prefix, prefixBytes));
  switch (preamble.status) {
  case NpyPreamble::Status::Ok:
    break;
  case NpyPreamble::Status::NotNpy:
  case NpyPreamble::Status::Truncated:
    error = "not a .npy file (no \\x93NUMPY magic string)";
    return -1;
  case NpyPreamble::Status::BadVersion:
    error = format("unsupported .npy version %d.%d (1.0, 2.0 and 3.0 are read)", preamble.major,
                   preamble.minor);
    return -1;
  case NpyPreamble::Status::NoHeaderLength:
    error = "truncated .npy header";
    return -1;
  }
  int64_t headerLength = static_cast<int64_t>(preamble.headerLength);
  int64_t dataOffset = static_cast<int64_t>(preamble.headerOffset);
  std::string text(static_cast<size_t>(headerLength), '\0');
  if (dataOffset + headerLength > fileSize ||
      !readExactly(fd, dataOffset, text.data(), text.size())) {
    error = "truncated .npy header";
    return -1;
  }
  dataOffset += headerLength;
  shardc::support::NpyHeader dict;
  std::string problem = shardc::support::parseNpyHeader(text, dict);
  if (!problem.empty()) {
    error = "malformed .npy header: " + problem;
    return -1;
  }
  const char *want = npyDescr(expected.dtype);
  std::optional<shardc::support::NpyDType> dtype = shardc::support::npyDTypeOfDescr(dict.descr);
  if (!dtype || static_cast<int64_t>(*dtype) != expected.dtype) {
    error = format("element type is %s, expected '%s' (%s)", descrName(dict.descr).c_str(), want,
                   dtypeName(expected.dtype));
    return -1;
  }
  fortranOrder = dict.fortranOrder;
  std::vector<int64_t> wantShape(expected.shape, expected.shape + expected.ndims);
  if (dict.shape != wantShape) {
    error = format("shape is %s, expected %s",
                   shapeText(dict.shape.data(), static_cast<int64_t>(dict.shape.size())).c_str(),
                   shapeText(expected.shape, expected.ndims).c_str());
    return -1;
  }
  int64_t dataBytes = product(expected.shape, 0, expected.ndims) * dtypeSize(expected.dtype);
  if (fileSize - dataOffset != dataBytes) {
    error = format("%s: %lld bytes of data, expected %lld for shape %s",
                   fileSize - dataOffset < dataBytes ? "truncated" : "too long",
                   static_cast<long long>(fileSize - dataOffset), static_cast<long long>(dataBytes),
                   shapeText(expected.shape, expected.ndims).c_str());
    return -1;
  }
  return dataOffset;
}

std::string npyHeader(const shardrt_tensor &tensor) {
  return shardc::support::npyHeaderBytes(npyDescr(tensor.dtype), tensor.shape,
                                         static_cast<size_t>(tensor.ndims));
}

} // namespace shardrt
