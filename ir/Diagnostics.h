// One diagnostics engine for every stage: the parser, the IR builder, the
// verifier, type inference, the CLI and (later) the language server.
//
// Diagnostics are collected, not printed, so that the same list renders as
// clang-style text (`file:line:col: error: msg`, source line, caret), as JSON
// in the LSP Diagnostic shape, or is matched by --verify-diagnostics.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace shardc {

/// A source buffer: its display name and its text, split into lines on demand.
class SourceFile {
public:
  SourceFile(std::string name, std::string text);

  const std::string &name() const { return name_; }
  const std::string &text() const { return text_; }
  /// Line `line` (1-based) without its newline; empty when out of range.
  std::string_view line(int line) const;
  int lineCount() const { return static_cast<int>(lineStarts_.size()); }
  /// Byte offset of 1-based (line, col); clamps to the buffer.
  size_t offset(int line, int col) const;

private:
  std::string name_;
  std::string text_;
  std::vector<size_t> lineStarts_;
};

/// A place in a source file. Lines and columns are 1-based, columns count
/// bytes; `length` is the number of bytes the caret underlines (at least 1).
/// A location with line 0 is unknown.
struct Loc {
  const SourceFile *file = nullptr;
  int line = 0;
  int col = 0;
  int length = 1;

  bool known() const { return file != nullptr && line > 0; }
  /// This location moved `bytes` to the right on the same line.
  Loc shifted(int bytes, int newLength = 1) const {
    return Loc{file, line, col + bytes, newLength};
  }
};

enum class Severity { Error, Warning, Note, Remark };

const char *severityName(Severity s);

struct Diagnostic {
  Severity severity = Severity::Error;
  Loc loc;
  std::string message;
  /// Related places (`note:` lines), each with its own location.
  std::vector<Diagnostic> notes;
};

/// Collects diagnostics from every stage. `emit*` returns a handle that can
/// attach notes: `diags.error(loc, "...").note(other, "declared here")`.
class DiagnosticEngine {
public:
  class Builder {
  public:
    Builder(Diagnostic &d) : d_(d) {}
    /// Adds a related note; an unknown `loc` prints without a location.
    Builder &note(Loc loc, std::string message);

  private:
    Diagnostic &d_;
  };

  Builder error(Loc loc, std::string message);
  Builder warning(Loc loc, std::string message);
  Builder remark(Loc loc, std::string message);
  Builder emit(Severity severity, Loc loc, std::string message);

  const std::deque<Diagnostic> &diagnostics() const { return diags_; }
  /// Errors reported, and errors left out past the error limit.
  size_t errorCount() const { return errors_; }
  size_t droppedErrorCount() const { return droppedErrors_; }
  bool hasErrors() const { return errors_ > 0; }
  void clear();
  /// Reports `other`'s diagnostics here, in order, as if emitted here (this
  /// engine's error limit applies).
  void append(const DiagnosticEngine &other);

  /// Stops collecting errors after `n` of them (0 = unlimited); a cascade of
  /// errors after a bad token helps nobody.
  void setErrorLimit(size_t n) { errorLimit_ = n; }

private:
  // A deque keeps Builder references stable while more are appended.
  std::deque<Diagnostic> diags_;
  size_t errors_ = 0;
  size_t errorLimit_ = 0;
  size_t droppedErrors_ = 0;
  Diagnostic dropped_;
};

/// How to render: plain text with or without ANSI colour.
struct RenderOptions {
  bool color = false;
};

/// Renders one diagnostic clang-style: `file:line:col: error: msg`, the source
/// line, and a caret (with `~` under the rest of the token); notes follow.
std::string renderText(const Diagnostic &d, const RenderOptions &opts);

/// Renders all diagnostics as a JSON array of LSP `Diagnostic` objects
/// (0-based line/character ranges, severity 1-4, source "shardc",
/// relatedInformation for notes).
std::string renderJson(const std::deque<Diagnostic> &diags);

/// "did you mean" helper: the candidate closest to `word` by edit distance,
/// or empty when none is close enough to be a plausible typo.
std::string closestMatch(std::string_view word, const std::vector<std::string> &candidates);

/// A compiler bug met while compiling a valid program (Halide's
/// internal_assert, as opposed to a user error): a stage that cannot handle
/// what the checks accepted throws it, and the driver prints
/// `shardc: internal error: FILE:LINE:COL: MESSAGE` and exits 3. Never a
/// diagnostic of the program, whose exit 1 would blame the user.
struct InternalError : std::logic_error {
  InternalError(Loc loc, const std::string &message)
      : std::logic_error(loc.known() ? loc.file->name() + ":" + std::to_string(loc.line) + ":" +
                                           std::to_string(loc.col) + ": " + message
                                     : message),
        loc(loc) {}
  Loc loc;
};

} // namespace shardc
