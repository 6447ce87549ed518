// The diagnostics engine and its two renderings: clang-style text and LSP JSON.
#include "ir/Diagnostics.h"

#include <algorithm>
#include <cstring>
#include <fmt/color.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace shardc {

SourceFile::SourceFile(std::string name, std::string text)
    : name_(std::move(name)), text_(std::move(text)) {
  lineStarts_.push_back(0);
  const char *begin = text_.data(), *end = begin + text_.size();
  for (const char *p = begin; (p = static_cast<const char *>(std::memchr(p, '\n', end - p)));)
    lineStarts_.push_back(static_cast<size_t>(++p - begin));
}

std::string_view SourceFile::line(int line) const {
  if (line < 1 || line > lineCount())
    return {};
  size_t begin = lineStarts_[line - 1];
  size_t end = line < lineCount() ? lineStarts_[line] - 1 : text_.size();
  if (end > begin && text_[end - 1] == '\r')
    --end;
  return std::string_view(text_).substr(begin, end - begin);
}

size_t SourceFile::offset(int line, int col) const {
  if (line < 1)
    return 0;
  if (line > lineCount())
    return text_.size();
  return std::min(text_.size(), lineStarts_[line - 1] + std::max(col, 1) - 1);
}

const char *severityName(Severity s) {
  switch (s) {
  case Severity::Error:
    return "error";
  case Severity::Warning:
    return "warning";
  case Severity::Note:
    return "note";
  case Severity::Remark:
    return "remark";
  }
  return "error";
}

DiagnosticEngine::Builder &DiagnosticEngine::Builder::note(Loc loc, std::string message) {
  d_.notes.push_back(Diagnostic{Severity::Note, loc, std::move(message), {}});
  return *this;
}

DiagnosticEngine::Builder DiagnosticEngine::emit(Severity severity, Loc loc, std::string message) {
  if (severity == Severity::Error) {
    if (errorLimit_ && errors_ >= errorLimit_) {
      // Like clang: say once that the rest is cut off, and how to see it.
      if (droppedErrors_++ == 0)
        diags_.push_back(Diagnostic{Severity::Remark,
                                    Loc{loc.file, 0, 0, 1},
                                    "too many errors; stopping here (--error-limit=0 shows "
                                    "them all)",
                                    {}});
      dropped_ = Diagnostic{};
      return Builder(dropped_);
    }
    ++errors_;
  }
  diags_.push_back(Diagnostic{severity, loc, std::move(message), {}});
  return Builder(diags_.back());
}

DiagnosticEngine::Builder DiagnosticEngine::error(Loc loc, std::string message) {
  return emit(Severity::Error, loc, std::move(message));
}
DiagnosticEngine::Builder DiagnosticEngine::warning(Loc loc, std::string message) {
  return emit(Severity::Warning, loc, std::move(message));
}
DiagnosticEngine::Builder DiagnosticEngine::remark(Loc loc, std::string message) {
  return emit(Severity::Remark, loc, std::move(message));
}

void DiagnosticEngine::append(const DiagnosticEngine &other) {
  for (const Diagnostic &d : other.diags_) {
    Builder b = emit(d.severity, d.loc, d.message);
    for (const Diagnostic &n : d.notes)
      b.note(n.loc, n.message);
  }
}

void DiagnosticEngine::clear() {
  diags_.clear();
  errors_ = 0;
  droppedErrors_ = 0;
}

namespace {

fmt::text_style severityStyle(Severity s) {
  switch (s) {
  case Severity::Error:
    return fmt::emphasis::bold | fmt::fg(fmt::terminal_color::bright_red);
  case Severity::Warning:
    return fmt::emphasis::bold | fmt::fg(fmt::terminal_color::bright_magenta);
  case Severity::Note:
    return fmt::emphasis::bold | fmt::fg(fmt::terminal_color::bright_black);
  case Severity::Remark:
    return fmt::emphasis::bold | fmt::fg(fmt::terminal_color::bright_blue);
  }
  return {};
}

std::string styled(const std::string &text, fmt::text_style style, bool color) {
  return color ? fmt::format("{}", fmt::styled(text, style)) : text;
}

void renderOne(std::string &out, const Diagnostic &d, const RenderOptions &opts) {
  const bool color = opts.color;
  if (d.loc.known())
    out += styled(fmt::format("{}:{}:{}: ", d.loc.file->name(), d.loc.line, d.loc.col),
                  fmt::emphasis::bold, color);
  else if (d.loc.file)
    out += styled(d.loc.file->name() + ": ", fmt::emphasis::bold, color);
  out += styled(std::string(severityName(d.severity)) + ":", severityStyle(d.severity), color);
  out += " ";
  out += styled(d.message, fmt::emphasis::bold, color);
  out += "\n";
  if (!d.loc.known())
    return;
  std::string_view line = d.loc.file->line(d.loc.line);
  if (line.empty() && d.loc.line > d.loc.file->lineCount())
    return;
  out.append(line.data(), line.size());
  out += "\n";
  // The caret goes under byte `col`; tabs are kept so the caret lines up.
  std::string pad;
  for (int i = 1; i < d.loc.col && i - 1 < static_cast<int>(line.size()); ++i)
    pad += line[i - 1] == '\t' ? '\t' : ' ';
  int len = std::max(1, d.loc.length);
  int room = static_cast<int>(line.size()) - (d.loc.col - 1);
  if (room > 0)
    len = std::min(len, room);
  std::string caret = "^" + std::string(len - 1, '~');
  out +=
      pad + styled(caret, fmt::emphasis::bold | fmt::fg(fmt::terminal_color::bright_green), color);
  out += "\n";
}

nlohmann::json lspRange(const Loc &loc) {
  int line = std::max(loc.line - 1, 0);
  int col = std::max(loc.col - 1, 0);
  return {{"start", {{"line", line}, {"character", col}}},
          {"end", {{"line", line}, {"character", col + std::max(loc.length, 1)}}}};
}

int lspSeverity(Severity s) {
  switch (s) {
  case Severity::Error:
    return 1;
  case Severity::Warning:
    return 2;
  case Severity::Remark:
    return 3;
  case Severity::Note:
    return 4;
  }
  return 1;
}

} // namespace

std::string renderText(const Diagnostic &d, const RenderOptions &opts) {
  std::string out;
  renderOne(out, d, opts);
  for (const Diagnostic &n : d.notes)
    renderOne(out, n, opts);
  return out;
}

std::string renderJson(const std::deque<Diagnostic> &diags) {
  nlohmann::json all = nlohmann::json::array();
  for (const Diagnostic &d : diags) {
    nlohmann::json j = {{"range", lspRange(d.loc)},
                        {"severity", lspSeverity(d.severity)},
                        {"source", "shardc"},
                        {"message", d.message}};
    if (d.loc.file)
      j["file"] = d.loc.file->name();
    if (!d.notes.empty()) {
      nlohmann::json related = nlohmann::json::array();
      for (const Diagnostic &n : d.notes) {
        // A note without a place of its own ("did you mean ...") belongs to
        // the diagnostic's place: LSP needs a location for every note.
        const Loc &at = n.loc.known() ? n.loc : d.loc;
        nlohmann::json loc = {{"range", lspRange(at)}};
        loc["uri"] = at.file ? at.file->name() : "";
        related.push_back({{"location", loc}, {"message", n.message}});
      }
      j["relatedInformation"] = related;
    }
    all.push_back(j);
  }
  return all.dump(2);
}

namespace {
size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t subst = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, subst});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}
} // namespace

std::string closestMatch(std::string_view word, const std::vector<std::string> &candidates) {
  std::string best;
  size_t bestDistance = SIZE_MAX;
  bool tie = false;
  for (const std::string &c : candidates) {
    size_t d = editDistance(word, c);
    if (d < bestDistance) {
      bestDistance = d;
      best = c;
      tie = false;
    } else if (d == bestDistance && c != best) {
      tie = true;
    }
  }
  // Two equally close names ("z" among "x" and "y") make any pick a guess.
  if (tie)
    return {};
  // A typo changes at most about a third of the word (and at least one
  // character of a short name such as an axis "y" for "z").
  size_t allowed = std::max<size_t>(1, (std::max(word.size(), best.size()) + 2) / 3);
  if (best.empty() || bestDistance == 0 || bestDistance > allowed)
    return {};
  return best;
}

} // namespace shardc
