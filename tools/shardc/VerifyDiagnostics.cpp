// --verify-diagnostics: read `expected-*` comments, match them against the
// diagnostics of a run (MLIR semantics, see VerifyDiagnostics.h).
#include "tools/shardc/VerifyDiagnostics.h"

#include <fmt/format.h>

#include <cctype>
#include <optional>
#include <string_view>
#include <vector>

namespace shardc {
namespace {

struct Expectation {
  Severity severity;
  std::string text; // a substring of the expected message
  int line;         // 0: a diagnostic without a location (@unknown)
  Loc loc;          // the directive itself, for "was not produced"
  bool matched = false;
};

std::optional<Severity> severityNamed(std::string_view word) {
  for (Severity s : {Severity::Error, Severity::Warning, Severity::Note, Severity::Remark})
    if (word == severityName(s))
      return s;
  return std::nullopt;
}

std::string_view trimRight(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  return s;
}

/// Reads the expectations of `file`. Malformed directives are reported into
/// `out`. Line designators follow MLIR: @+N/@-N are relative to the
/// directive's line, @above is the last line without a directive, @below the
/// next one.
std::vector<Expectation> parseExpectations(const SourceFile &file, DiagnosticEngine &out) {
  std::vector<Expectation> expectations;
  std::vector<size_t> forNextLine; // @below directives waiting for a line
  int lastPlainLine = 0;
  for (int lineNo = 1; lineNo <= file.lineCount(); ++lineNo) {
    std::string_view line = trimRight(file.line(lineNo));
    size_t comment = line.find("//");
    size_t start = comment == std::string_view::npos ? comment : line.find("expected-", comment);
    std::optional<Severity> severity;
    size_t pos = 0;
    if (start != std::string_view::npos) {
      pos = start + 9;
      size_t wordEnd = pos;
      while (wordEnd < line.size() && std::isalpha(static_cast<unsigned char>(line[wordEnd])))
        ++wordEnd;
      severity = severityNamed(line.substr(pos, wordEnd - pos));
      pos = wordEnd;
      // Prose such as "(an expected-note)" is not a directive; a designator
      // or a message, even a malformed one, is.
      size_t next = line.find_first_not_of(" \t", pos);
      if (next == std::string_view::npos ||
          std::string_view("@{\"").find(line[next]) == std::string_view::npos)
        severity.reset();
    }
    if (!severity) { // not a directive line
      for (size_t index : forNextLine)
        expectations[index].line = lineNo;
      forNextLine.clear();
      lastPlainLine = lineNo;
      continue;
    }

    Loc loc{&file, lineNo, static_cast<int>(start) + 1, static_cast<int>(line.size() - start)};
    std::string directive = fmt::format("expected-{}", severityName(*severity));
    auto skipBlanks = [&] {
      while (pos < line.size() && (line[pos] == ' ' || line[pos] == '\t'))
        ++pos;
    };
    skipBlanks();
    std::string_view designator;
    if (pos < line.size() && line[pos] == '@') {
      size_t end = line.find_first_of(" \t{", pos);
      designator = line.substr(pos + 1, end == std::string_view::npos ? end : end - pos - 1);
      pos = end == std::string_view::npos ? line.size() : end;
      skipBlanks();
    }
    size_t close = line.rfind("}}");
    if (line.substr(pos, 2) != "{{" || close == std::string_view::npos || close < pos + 2) {
      out.error(loc, fmt::format("{} - expected the message as {{{{text}}}}", directive));
      continue;
    }

    Expectation e{*severity, std::string(line.substr(pos + 2, close - pos - 2)), lineNo, loc};
    bool relative = !designator.empty() && (designator[0] == '+' || designator[0] == '-');
    std::string_view digits = relative ? designator.substr(1) : std::string_view();
    if (relative && !digits.empty() && digits.size() <= 6 &&
        digits.find_first_not_of("0123456789") == std::string_view::npos) {
      int offset = std::stoi(std::string(digits));
      e.line += designator[0] == '+' ? offset : -offset;
    } else if (designator == "above") {
      e.line = lastPlainLine;
    } else if (designator == "below") {
      forNextLine.push_back(expectations.size());
    } else if (designator == "unknown") {
      e.line = 0;
    } else if (!designator.empty()) {
      out.error(loc, fmt::format("{} - unknown line designator: @{}", directive, designator));
      continue;
    }
    bool lineKnown = designator != "unknown" && designator != "below";
    if (lineKnown && (e.line < 1 || e.line > file.lineCount())) {
      out.error(loc, fmt::format("{} - line designator points outside the file: @{}", directive,
                                 designator));
      continue;
    }
    expectations.push_back(std::move(e));
  }
  for (size_t index : forNextLine)
    out.error(expectations[index].loc, fmt::format("expected-{} - @below has no line below it",
                                                   severityName(expectations[index].severity)));
  return expectations;
}

/// Matches one produced diagnostic (or note) against the expectations. A
/// note without a location stands at `parentLoc`, its diagnostic's (as in
/// MLIR, where such a note takes its diagnostic's location).
void matchDiagnostic(const Diagnostic &d, std::vector<Expectation> &expectations,
                     DiagnosticEngine &out, const Loc *parentLoc = nullptr) {
  Loc loc = !d.loc.known() && parentLoc ? *parentLoc : d.loc;
  int line = loc.known() ? loc.line : 0;
  Expectation *match = nullptr;
  Expectation *nearMiss = nullptr;
  for (Expectation &e : expectations) {
    if (e.line != line || d.message.find(e.text) == std::string::npos)
      continue;
    if (e.severity != d.severity)
      nearMiss = &e;
    else if (!match || (match->matched && !e.matched))
      match = &e; // prefer an expectation not matched yet
  }
  if (match) {
    match->matched = true;
  } else if (nearMiss) {
    nearMiss->matched = true; // reported here, not again as "not produced"
    out.error(nearMiss->loc,
              fmt::format("'{}' diagnostic emitted when expecting a '{}': {}",
                          severityName(d.severity), severityName(nearMiss->severity), d.message));
  } else {
    out.error(loc, fmt::format("unexpected {}: {}", severityName(d.severity), d.message));
  }
}

} // namespace

bool verifyDiagnostics(const SourceFile &file, const std::deque<Diagnostic> &produced,
                       DiagnosticEngine &out) {
  size_t errorsBefore = out.errorCount();
  std::vector<Expectation> expectations = parseExpectations(file, out);
  bool checkNotes = false;
  for (const Expectation &e : expectations)
    checkNotes = checkNotes || e.severity == Severity::Note;

  for (const Diagnostic &d : produced) {
    matchDiagnostic(d, expectations, out);
    if (checkNotes)
      for (const Diagnostic &note : d.notes)
        matchDiagnostic(note, expectations, out, &d.loc);
  }
  for (const Expectation &e : expectations)
    if (!e.matched)
      out.error(e.loc, fmt::format("expected {} \"{}\" was not produced", severityName(e.severity),
                                   e.text));
  return out.errorCount() == errorsBefore;
}

} // namespace shardc
