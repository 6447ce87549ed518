// .npy headers: a Python dict literal after a magic string and a length,
// e.g. {'descr': '<f4', 'fortran_order': False, 'shape': (7, 4), }.
#include "runtime/Npy.h"

#include "runtime/Context.h"
#include "runtime/ProgramText.h"

#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <vector>

namespace shardrt {

const char *npyDescr(int64_t dtype) {
  static const char *const descrs[] = {"<f4", "<f8", "<i4", "<i8", "|b1"};
  return dtype >= 0 && dtype <= SHARDRT_I1 ? descrs[dtype] : "?";
}

namespace {

/// The three entries of a header dict, parsed strictly.
struct HeaderDict {
  std::string descr;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
};

class DictParser {
public:
  explicit DictParser(const std::string &text) : text_(text) {}

  /// Parses the whole dict; returns "" or what is wrong.
  std::string parse(HeaderDict &dict) {
    bool haveDescr = false, haveOrder = false, haveShape = false;
    if (!eat('{'))
      return "expected '{'";
    while (!eat('}')) {
      std::string key;
      if (!readString(key) || !eat(':'))
        return "expected 'key': value";
      bool valid = false;
      if (key == "descr" && !haveDescr)
        valid = haveDescr = readString(dict.descr);
      else if (key == "fortran_order" && !haveOrder)
        valid = haveOrder = readBool(dict.fortranOrder);
      else if (key == "shape" && !haveShape)
        valid = haveShape = readShape(dict.shape);
      else
        return "unexpected or repeated key '" + key + "'";
      if (!valid)
        return "bad value for '" + key + "'";
      if (!eat(',') && !peek('}'))
        return "expected ',' or '}'";
    }
    skipSpace();
    if (pos_ != text_.size())
      return "text after the dict";
    if (!haveDescr || !haveOrder || !haveShape)
      return "missing 'descr', 'fortran_order' or 'shape'";
    return "";
  }

private:
  void skipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_])))
      ++pos_;
  }
  bool peek(char c) {
    skipSpace();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  bool eat(char c) {
    if (!peek(c))
      return false;
    ++pos_;
    return true;
  }
  bool readString(std::string &out) {
    skipSpace();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"'))
      return false;
    size_t end = text_.find(text_[pos_], pos_ + 1);
    if (end == std::string::npos)
      return false;
    out = text_.substr(pos_ + 1, end - pos_ - 1);
    pos_ = end + 1;
    return true;
  }
  bool readBool(bool &out) {
    skipSpace();
    for (const char *word : {"True", "False"}) {
      size_t n = std::strlen(word);
      if (text_.compare(pos_, n, word) == 0) {
        out = word[0] == 'T';
        pos_ += n;
        return true;
      }
    }
    return false;
  }
  bool readShape(std::vector<int64_t> &shape) {
    if (!eat('('))
      return false;
    while (!eat(')')) {
      skipSpace();
      size_t begin = pos_;
      int64_t value = 0;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        if (value > (INT64_MAX - 9) / 10)
          return false;
        value = value * 10 + (text_[pos_++] - '0');
      }
      if (pos_ == begin)
        return false;
      if (pos_ < text_.size() && text_[pos_] == 'L') // Python 2 longs
        ++pos_;
      shape.push_back(value);
      if (!eat(',') && !peek(')'))
        return false;
    }
    return true;
  }

  const std::string &text_;
  size_t pos_ = 0;
};

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

int64_t readNpyHeader(int fd, int64_t fileSize, const shardrt_tensor &expected,
                      std::string &error) {
  unsigned char prefix[12];
  if (fileSize < 10 || !readExactly(fd, 0, prefix, 10) ||
      std::memcmp(prefix, "\x93NUMPY", 6) != 0) {
    error = "not a .npy file (no \\x93NUMPY magic string)";
    return -1;
  }
  int major = prefix[6], minor = prefix[7];
  if (major < 1 || major > 3 || minor != 0) {
    error = format("unsupported .npy version %d.%d (1.0, 2.0 and 3.0 are read)", major, minor);
    return -1;
  }
  int64_t headerLength = prefix[8] | prefix[9] << 8, dataOffset = 10;
  if (major >= 2) {
    if (fileSize < 12 || !readExactly(fd, 10, prefix + 10, 2)) {
      error = "truncated .npy header";
      return -1;
    }
    headerLength |= static_cast<int64_t>(prefix[10]) << 16 | static_cast<int64_t>(prefix[11]) << 24;
    dataOffset = 12;
  }
  std::string text(static_cast<size_t>(headerLength), '\0');
  if (dataOffset + headerLength > fileSize ||
      !readExactly(fd, dataOffset, text.data(), text.size())) {
    error = "truncated .npy header";
    return -1;
  }
  dataOffset += headerLength;
  HeaderDict dict;
  std::string problem = DictParser(text).parse(dict);
  if (!problem.empty()) {
    error = "malformed .npy header: " + problem;
    return -1;
  }
  const char *want = npyDescr(expected.dtype);
  if (dict.descr != want) {
    error = format("element type is %s, expected '%s' (%s)", descrName(dict.descr).c_str(), want,
                   dtypeName(expected.dtype));
    return -1;
  }
  if (dict.fortranOrder) {
    error = "array is in Fortran order, expected C order (numpy.ascontiguousarray)";
    return -1;
  }
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
  std::string dict = format("{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                            npyDescr(tensor.dtype), shapeText(tensor.shape, tensor.ndims).c_str());
  // magic (6) + version (2) + length (2) + dict + padding + '\n' = k * 64.
  size_t total = (10 + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - 10 - dict.size() - 1, ' ');
  dict += '\n';
  std::string header("\x93NUMPY\x01\x00", 8);
  header += static_cast<char>(dict.size() & 0xff);
  header += static_cast<char>(dict.size() >> 8);
  return header + dict;
}

} // namespace shardrt
