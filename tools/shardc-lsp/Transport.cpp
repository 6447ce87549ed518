// The two transports of Transport.h. The stream reader does its own
// buffering over read(2) so that poll(2) tells the truth about what is
// pending (a stdio buffer would hide bytes already read).
#include "tools/shardc-lsp/Transport.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <poll.h>
#include <unistd.h>

namespace shardc::lsp {
namespace {

/// Headers longer than this are not LSP: give up on them.
constexpr size_t kMaxHeaderBytes = 8192;
/// A message larger than this (256 MiB) is refused rather than buffered.
constexpr size_t kMaxContentLength = size_t(256) << 20;

Incoming parseJson(const std::string &body) {
  Incoming in;
  try {
    in.message = nlohmann::json::parse(body);
    in.kind = Incoming::Kind::Message;
  } catch (const nlohmann::json::parse_error &e) {
    in.kind = Incoming::Kind::Invalid;
    in.error = std::string("invalid JSON: ") + e.what();
  }
  return in;
}

class StreamTransport : public Transport {
public:
  StreamTransport(int inFd, std::FILE *out) : fd_(inFd), out_(out) {}

  Incoming read(int timeoutMs) override {
    for (;;) {
      if (auto in = takeMessage())
        return *in;
      if (closed_) {
        if (!buffer_.empty()) {
          buffer_.clear();
          return {Incoming::Kind::Invalid, {}, "input ended inside a message"};
        }
        return {Incoming::Kind::End, {}, {}};
      }
      if (timeoutMs >= 0) {
        pollfd p{fd_, POLLIN, 0};
        int ready = ::poll(&p, 1, timeoutMs);
        if (ready == 0)
          return {Incoming::Kind::Timeout, {}, {}};
        if (ready < 0 && errno == EINTR)
          continue;
      }
      fill();
    }
  }

  void write(const nlohmann::json &message) override {
    std::string body = message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    std::fprintf(out_, "Content-Length: %zu\r\n\r\n%s", body.size(), body.c_str());
    std::fflush(out_);
  }

private:
  void fill() {
    char chunk[65536];
    ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR)
      return;
    if (n <= 0) {
      closed_ = true;
      return;
    }
    buffer_.append(chunk, static_cast<size_t>(n));
  }

  /// After a broken header: drops bytes up to the next Content-Length
  /// header. False while none has arrived yet.
  bool resynchronize() {
    static const std::string kName = "content-length";
    std::string lower;
    for (char c : buffer_)
      lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    size_t at = lower.find(kName);
    if (at == std::string::npos) {
      // Keep a tail that may be the start of the header.
      buffer_.erase(0, buffer_.size() > kName.size() ? buffer_.size() - kName.size() : 0);
      return false;
    }
    buffer_.erase(0, at);
    resync_ = false;
    return true;
  }

  /// A complete message (or a framing error) from the buffer, if there is one.
  std::optional<Incoming> takeMessage() {
    if (resync_ && !resynchronize())
      return std::nullopt;
    size_t headerEnd = buffer_.find("\r\n\r\n");
    if (headerEnd == std::string::npos) {
      if (buffer_.size() > kMaxHeaderBytes) {
        buffer_.clear();
        resync_ = true;
        return Incoming{Incoming::Kind::Invalid, {}, "header too long, input dropped"};
      }
      return std::nullopt;
    }
    std::optional<size_t> length;
    size_t pos = 0;
    while (pos < headerEnd) {
      size_t eol = buffer_.find("\r\n", pos);
      std::string line = buffer_.substr(pos, eol - pos);
      pos = eol + 2;
      static const std::string kName = "content-length:";
      std::string lower;
      for (char c : line.substr(0, kName.size()))
        lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (lower != kName)
        continue; // Content-Type and unknown headers are ignored
      char *end = nullptr;
      std::string digits = line.substr(kName.size());
      unsigned long long n = std::strtoull(digits.c_str(), &end, 10);
      bool onlySpaces = end && std::string(end).find_first_not_of(" \t") == std::string::npos;
      if (digits.find_first_of("0123456789") != std::string::npos && onlySpaces)
        length = static_cast<size_t>(n);
    }
    if (!length || *length > kMaxContentLength) {
      // Without a length the body's end is unknown: skip to the next header.
      buffer_.erase(0, headerEnd + 4);
      resync_ = true;
      return Incoming{Incoming::Kind::Invalid,
                      {},
                      length ? "Content-Length too large" : "missing or bad Content-Length header"};
    }
    if (buffer_.size() < headerEnd + 4 + *length)
      return std::nullopt;
    std::string body = buffer_.substr(headerEnd + 4, *length);
    buffer_.erase(0, headerEnd + 4 + *length);
    return parseJson(body);
  }

  int fd_;
  std::FILE *out_;
  std::string buffer_;
  bool closed_ = false;
  bool resync_ = false; // skipping to the next header after a broken one
};

class LitTestTransport : public Transport {
public:
  LitTestTransport(std::string text, std::FILE *out) : out_(out) {
    // Split at lines that are exactly `// -----` (surrounding blanks allowed).
    std::string chunk;
    size_t pos = 0;
    while (pos <= text.size()) {
      size_t eol = text.find('\n', pos);
      if (eol == std::string::npos)
        eol = text.size();
      std::string line = text.substr(pos, eol - pos);
      size_t b = line.find_first_not_of(" \t\r"), e = line.find_last_not_of(" \t\r");
      if (b != std::string::npos && line.substr(b, e - b + 1) == "// -----") {
        chunks_.push_back(chunk);
        chunk.clear();
      } else if (b == std::string::npos || line.compare(b, 2, "//") != 0) {
        // RUN and CHECK lines (`//` comments) are not part of the message.
        chunk += line + "\n";
      }
      pos = eol + 1;
    }
    chunks_.push_back(chunk);
  }

  Incoming read(int) override {
    while (next_ < chunks_.size()) {
      const std::string &chunk = chunks_[next_++];
      if (chunk.find_first_not_of(" \t\r\n") == std::string::npos)
        continue;
      return parseJson(chunk);
    }
    return {Incoming::Kind::End, {}, {}};
  }

  void write(const nlohmann::json &message) override {
    // nlohmann::json keeps object keys sorted: the pretty dump is stable.
    std::string body = message.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    std::fprintf(out_, "Content-Length: %zu\n\n%s\n", body.size(), body.c_str());
    std::fflush(out_);
  }

private:
  std::FILE *out_;
  std::vector<std::string> chunks_;
  size_t next_ = 0;
};

} // namespace

std::unique_ptr<Transport> makeStreamTransport(int inFd, std::FILE *out) {
  return std::make_unique<StreamTransport>(inFd, out);
}

std::unique_ptr<Transport> makeLitTestTransport(std::string text, std::FILE *out) {
  return std::make_unique<LitTestTransport>(std::move(text), out);
}

} // namespace shardc::lsp
