// .npy headers: the preamble, a strict parser of the header dict and the
// version 1.0 writer, shared by the interpreter and the runtime (Npy.h).
#include "support/Npy.h"

#include <cctype>
#include <cstring>

namespace shardc::support {

const char *npyDescr(NpyDType dtype) {
  switch (dtype) {
  case NpyDType::F32:
    return "<f4";
  case NpyDType::F64:
    return "<f8";
  case NpyDType::I32:
    return "<i4";
  case NpyDType::I64:
    return "<i8";
  case NpyDType::I1:
    return "|b1";
  }
  return "?";
}

std::optional<NpyDType> npyDTypeOfDescr(std::string_view descr) {
  for (NpyDType t : {NpyDType::F32, NpyDType::F64, NpyDType::I32, NpyDType::I64, NpyDType::I1}) {
    std::string_view own = npyDescr(t);
    if (descr == own || (descr.size() == 3 && descr[0] == '=' && descr.substr(1) == own.substr(1)))
      return t;
  }
  if (descr == "<b1" || descr == "=b1")
    return NpyDType::I1;
  return std::nullopt;
}

std::string npyShapeText(const int64_t *shape, size_t rank) {
  std::string text = "(";
  for (size_t d = 0; d < rank; ++d)
    text += (d ? ", " : "") + std::to_string(shape[d]);
  return text + (rank == 1 ? ",)" : ")");
}

NpyPreamble parseNpyPreamble(std::string_view prefix) {
  NpyPreamble p;
  using Status = NpyPreamble::Status;
  if (prefix.size() < 6 || prefix.substr(0, 6) != std::string_view("\x93NUMPY", 6)) {
    p.status = Status::NotNpy;
    return p;
  }
  if (prefix.size() < 10) {
    p.status = Status::Truncated;
    return p;
  }
  p.major = static_cast<unsigned char>(prefix[6]);
  p.minor = static_cast<unsigned char>(prefix[7]);
  if (p.major < 1 || p.major > 3 || p.minor != 0) {
    p.status = Status::BadVersion;
    return p;
  }
  // The header length: 2 bytes little-endian in version 1.0, 4 after.
  size_t lengthBytes = p.major == 1 ? 2 : 4;
  if (prefix.size() < 8 + lengthBytes) {
    p.status = Status::NoHeaderLength;
    return p;
  }
  for (size_t i = lengthBytes; i-- > 0;)
    p.headerLength = p.headerLength << 8 | static_cast<unsigned char>(prefix[8 + i]);
  p.headerOffset = 8 + lengthBytes;
  p.status = Status::Ok;
  return p;
}

namespace {

/// A recursive-descent reader for the Python literal subset .npy headers
/// use; each step returns false with error_ set on the first problem.
class HeaderParser {
public:
  explicit HeaderParser(std::string_view text) : text_(text) {}

  std::string parse(NpyHeader &header) {
    if (!dict(header))
      return error_;
    skipSpace();
    if (pos_ != text_.size())
      return "text after the dict at offset " + std::to_string(pos_) + " of the header";
    return "";
  }

private:
  bool dict(NpyHeader &header) {
    bool seenDescr = false, seenOrder = false, seenShape = false;
    if (!expect('{'))
      return false;
    while (!peek('}')) {
      std::string key;
      if (!quoted(key) || !expect(':'))
        return false;
      bool *seen = key == "descr"           ? &seenDescr
                   : key == "fortran_order" ? &seenOrder
                   : key == "shape"         ? &seenShape
                                            : nullptr;
      if (!seen)
        return fail("unknown key '" + key + "'");
      if (*seen)
        return fail("repeated key '" + key + "'");
      *seen = true;
      bool valid = key == "descr"           ? quoted(header.descr)
                   : key == "fortran_order" ? boolean(header.fortranOrder)
                                            : tuple(header.shape);
      if (!valid || (!peek('}') && !expect(',')))
        return false;
    }
    if (!expect('}'))
      return false;
    if (!seenDescr || !seenOrder || !seenShape)
      return fail(std::string("missing key '") +
                  (!seenDescr   ? "descr"
                   : !seenOrder ? "fortran_order"
                                : "shape") +
                  "'");
    return true;
  }

  bool fail(std::string what) {
    error_ = std::move(what);
    return false;
  }
  std::string at() const { return " at offset " + std::to_string(pos_) + " of the header"; }
  void skipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_])))
      ++pos_;
  }
  bool peek(char c) {
    skipSpace();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  bool expect(char c) {
    if (!peek(c))
      return fail(std::string("expected '") + c + "'" + at());
    ++pos_;
    return true;
  }
  bool quoted(std::string &out) {
    skipSpace();
    char q = pos_ < text_.size() ? text_[pos_] : 0;
    if (q != '\'' && q != '"')
      return fail("expected a quoted string" + at());
    size_t end = text_.find(q, pos_ + 1);
    if (end == std::string_view::npos)
      return fail("unterminated string");
    out = std::string(text_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return true;
  }
  bool boolean(bool &out) {
    skipSpace();
    for (const char *word : {"True", "False"}) {
      size_t n = std::strlen(word);
      if (text_.substr(pos_, n) == word) {
        out = word[0] == 'T';
        pos_ += n;
        return true;
      }
    }
    return fail("expected True or False" + at());
  }
  bool tuple(std::vector<int64_t> &values) {
    values.clear();
    if (!expect('('))
      return false;
    while (!peek(')')) {
      size_t start = pos_;
      int64_t v = 0;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        if (v > (INT64_MAX - 9) / 10)
          return fail("dimension too large");
        v = v * 10 + (text_[pos_++] - '0');
      }
      if (pos_ == start)
        return fail("expected a dimension" + at());
      if (pos_ < text_.size() && text_[pos_] == 'L') // Python 2 longs
        ++pos_;
      values.push_back(v);
      if (!peek(')') && !expect(','))
        return false;
    }
    return expect(')');
  }

  std::string_view text_;
  size_t pos_ = 0;
  std::string error_;
};

} // namespace

std::string parseNpyHeader(std::string_view text, NpyHeader &header) {
  return HeaderParser(text).parse(header);
}

std::string npyHeaderBytes(const char *descr, const int64_t *shape, size_t rank) {
  std::string dict = std::string("{'descr': '") + descr +
                     "', 'fortran_order': False, 'shape': " + npyShapeText(shape, rank) + ", }";
  // magic (6) + version (2) + length (2) + dict + padding + '\n' = k * 64.
  size_t total = (10 + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - 10 - dict.size() - 1, ' ');
  dict += '\n';
  std::string header("\x93NUMPY\x01\x00", 8);
  header += static_cast<char>(dict.size() & 0xff);
  header += static_cast<char>(dict.size() >> 8);
  return header + dict;
}

} // namespace shardc::support
