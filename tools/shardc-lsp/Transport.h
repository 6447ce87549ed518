// JSON-RPC 2.0 over a byte stream, as LSP frames it: `Content-Length: N`
// headers, a blank line, then N bytes of JSON. Two readers share one
// interface: the real framing on a file descriptor (stdin), and the
// `--lit-test` reader (mlir-lsp-server's): messages written one after another
// and separated by `// -----` lines, with the Content-Length computed here.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>

namespace shardc::lsp {

/// What a read returned.
struct Incoming {
  enum class Kind {
    Message, // `message` holds the parsed JSON
    Invalid, // framing or JSON was broken; `error` says how
    Timeout, // nothing arrived before the deadline
    End,     // the input is closed
  };
  Kind kind = Kind::End;
  nlohmann::json message;
  std::string error;
};

class Transport {
public:
  virtual ~Transport() = default;
  /// The next message. `timeoutMs` < 0 waits for ever; otherwise Timeout
  /// when no complete message arrived in that time.
  virtual Incoming read(int timeoutMs) = 0;
  /// Sends one message.
  virtual void write(const nlohmann::json &message) = 0;
};

/// Content-Length framing on a file descriptor, written to `out`.
std::unique_ptr<Transport> makeStreamTransport(int inFd, std::FILE *out);

/// `--lit-test`: the whole of `text` split at `// -----` lines, one message
/// per chunk; replies framed with their Content-Length, the JSON pretty
/// printed with sorted keys (so FileCheck sees one field per line).
std::unique_ptr<Transport> makeLitTestTransport(std::string text, std::FILE *out);

} // namespace shardc::lsp
