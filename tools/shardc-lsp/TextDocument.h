// An open document: its text, kept in step with the editor's full and
// incremental changes, and the conversion between LSP positions (0-based
// line, column in UTF-16 code units) and the compiler's (1-based line,
// 1-based column in bytes of UTF-8).
#pragma once

#include "ir/Diagnostics.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace shardc::lsp {

/// An LSP Position.
struct Position {
  int line = 0;      // 0-based
  int character = 0; // UTF-16 code units from the start of the line
};

/// Lines of a UTF-8 text, split at '\n' (a '\r' before it belongs to no
/// line), with the UTF-16 <-> byte conversion LSP needs.
class LineIndex {
public:
  explicit LineIndex(std::string_view text);

  int lineCount() const { return static_cast<int>(starts_.size()); }
  /// The byte offset of an LSP position; a position past the end of its
  /// line clamps to the line's end, a line past the end to the text's end.
  size_t offset(Position p) const;
  /// The LSP position of a byte offset (clamped to the text).
  Position position(size_t offset) const;
  /// The compiler's 1-based byte column of an LSP position (its line is
  /// `p.line + 1`).
  int byteColumn(Position p) const;
  /// The LSP position of a compiler location's start (1-based line, 1-based
  /// byte column).
  Position position(int line, int byteCol) const;

private:
  std::string_view lineText(int line) const;

  std::string_view text_;
  std::vector<size_t> starts_;
};

/// UTF-16 code units in `bytes` of UTF-8 (invalid bytes count one each).
int utf16Length(std::string_view bytes);
/// The byte length of the prefix of `bytes` that is `units` UTF-16 code units
/// long (a position inside a surrogate pair rounds up to the whole character).
size_t bytesForUtf16(std::string_view bytes, int units);

nlohmann::json toJson(Position p);
/// Reads {"line":..,"character":..}; throws nlohmann::json::exception when
/// malformed (the server answers InvalidParams).
Position positionFromJson(const nlohmann::json &j);

class TextDocument {
public:
  TextDocument(std::string uri, int64_t version, std::string text);
  // The line index points into text_: the document stays where it is.
  TextDocument(const TextDocument &) = delete;
  TextDocument &operator=(const TextDocument &) = delete;

  const std::string &uri() const { return uri_; }
  int64_t version() const { return version_; }
  const std::string &text() const { return text_; }
  const LineIndex &lines() const { return lines_; }

  /// Applies one `TextDocumentContentChangeEvent`: with a `range`, replaces
  /// that range; without one, replaces the whole text. Throws
  /// nlohmann::json::exception when malformed.
  void applyChange(const nlohmann::json &change);
  void setVersion(int64_t version) { version_ = version; }

  /// The LSP range of a compiler location (its start and `length` bytes).
  nlohmann::json range(const Loc &loc) const;

private:
  std::string uri_;
  int64_t version_;
  std::string text_;
  LineIndex lines_;
};

} // namespace shardc::lsp
