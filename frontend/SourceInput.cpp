// Reading source text (files and stdin), the binary-input check and the
// --split-input-file splitter.
#include "frontend/SourceInput.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace shardc {

std::optional<std::string> readSource(const std::string &path, std::string &error) {
  const bool isStdin = path == "-";
  int fd = isStdin ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  auto fail = [&](int err) -> std::optional<std::string> {
    error = fmt::format("cannot {} '{}': {}", isStdin ? "read" : "open", isStdin ? "<stdin>" : path,
                        std::strerror(err));
    if (!isStdin && fd >= 0)
      ::close(fd);
    return std::nullopt;
  };
  if (fd < 0)
    return fail(errno);
  // open() succeeds on a directory; reading it fails with EISDIR, but saying
  // so before reading is clearer and also covers other non-files.
  struct stat st;
  if (::fstat(fd, &st) != 0)
    return fail(errno);
  if (S_ISDIR(st.st_mode))
    return fail(EISDIR);

  std::string text;
  char buffer[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return fail(errno);
    if (n == 0)
      break;
    text.append(buffer, static_cast<size_t>(n));
  }
  if (!isStdin)
    ::close(fd);
  return text;
}

size_t skipPrintableAscii(std::string_view text, size_t from) {
  // Eight bytes at a time (SWAR): a word has a byte below 0x20 when the
  // borrow of subtracting 0x20 from each byte reaches a byte whose high bit
  // was clear, a byte 0x7f when the same holds for its xor with 0x7f.
  constexpr uint64_t kOnes = 0x0101010101010101ULL, kHighs = 0x8080808080808080ULL;
  size_t i = from;
  for (; i + 8 <= text.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, text.data() + i, 8);
    uint64_t del = w ^ (0x7f * kOnes);
    if (((w & kHighs) | ((w - 0x20 * kOnes) & ~w & kHighs) | ((del - kOnes) & ~del & kHighs)) != 0)
      break;
  }
  for (; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c >= 0x7f)
      break;
  }
  return i;
}

std::optional<NotText> findNonText(std::string_view text) {
  const auto *bytes = reinterpret_cast<const unsigned char *>(text.data());
  const size_t size = text.size();
  for (size_t i = 0; i < size;) {
    i = skipPrintableAscii(text, i);
    if (i == size)
      break;
    unsigned char c = bytes[i];
    if (c == 0)
      return NotText{i, fmt::format("NUL byte at offset {}", i)};
    if (c < 0x80) {
      bool allowedControl = c == '\t' || c == '\n' || c == '\r' || c == '\f';
      if ((c < 0x20 && !allowedControl) || c == 0x7f)
        return NotText{i, fmt::format("control character 0x{:02x} at offset {}", c, i)};
      ++i;
      continue;
    }
    // A multi-byte UTF-8 sequence: lead byte, then 1-3 continuation bytes,
    // no overlong forms, no surrogates, nothing above U+10FFFF.
    size_t extra = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;
    bool ok = extra > 0 && c >= 0xc2 && c <= 0xf4 && i + extra < size;
    for (size_t k = 1; ok && k <= extra; ++k)
      ok = (bytes[i + k] & 0xc0) == 0x80;
    if (ok && extra == 2) {
      unsigned char c1 = bytes[i + 1];
      ok = !(c == 0xe0 && c1 < 0xa0) && !(c == 0xed && c1 >= 0xa0);
    }
    if (ok && extra == 3) {
      unsigned char c1 = bytes[i + 1];
      ok = !(c == 0xf0 && c1 < 0x90) && !(c == 0xf4 && c1 >= 0x90);
    }
    if (!ok)
      return NotText{i, fmt::format("invalid UTF-8 at offset {}", i)};
    i += extra + 1;
  }
  return std::nullopt;
}

namespace {

bool isSplitMarker(std::string_view line) {
  size_t start = line.find_first_not_of(" \t");
  return start != std::string_view::npos && line.substr(start, kSplitMarker.size()) == kSplitMarker;
}

} // namespace

std::vector<std::string> splitInput(const std::string &text) {
  std::vector<std::string> chunks(1);
  int lineNo = 1;
  for (size_t begin = 0; begin < text.size(); ++lineNo) {
    size_t end = text.find('\n', begin);
    size_t next = end == std::string::npos ? text.size() : end + 1;
    std::string_view line(text.data() + begin, next - begin); // with its '\n'
    if (isSplitMarker(line))
      chunks.emplace_back(static_cast<size_t>(lineNo), '\n');
    else
      chunks.back().append(line);
    begin = next;
  }
  return chunks;
}

} // namespace shardc
