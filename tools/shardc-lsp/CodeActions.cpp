// textDocument/codeAction: quick fixes from the compiler's "did you mean X?"
// notes (unknown axis, mesh, value or op names). The fix replaces the name
// the error points at with X; for an axis only the quoted name, so a
// sub-axis's `:(m)k` stays.
#include "tools/shardc-lsp/Features.h"

#include <fmt/format.h>

namespace shardc::lsp {
namespace {

/// X of a note `did you mean X?`; empty for any other note.
std::string suggestion(const std::string &note) {
  static const std::string kPrefix = "did you mean ";
  if (note.compare(0, kPrefix.size(), kPrefix) != 0 || note.size() <= kPrefix.size() + 1 ||
      note.back() != '?')
    return {};
  return note.substr(kPrefix.size(), note.size() - kPrefix.size() - 1);
}

/// The part of the error's location that the suggestion replaces.
Loc replacedSpan(const Loc &loc, const std::string &fix) {
  if (fix.empty() || fix[0] != '"')
    return loc;
  // An axis: from its opening quote to its closing one.
  std::string_view line = loc.file ? loc.file->line(loc.line) : std::string_view{};
  size_t begin = static_cast<size_t>(loc.col - 1);
  if (begin >= line.size() || line[begin] != '"')
    return loc;
  size_t close = line.find('"', begin + 1);
  if (close == std::string_view::npos)
    return loc;
  return Loc{loc.file, loc.line, loc.col, static_cast<int>(close - begin + 1)};
}

bool overlaps(const Loc &loc, int firstLine, int lastLine) {
  return loc.line - 1 >= firstLine && loc.line - 1 <= lastLine;
}

} // namespace

nlohmann::json codeActions(const Analysis &analysis, const TextDocument &doc,
                           const nlohmann::json &range) {
  int firstLine = range.at("start").at("line").get<int>();
  int lastLine = range.at("end").at("line").get<int>();
  nlohmann::json published = publishedDiagnostics(analysis, doc);
  nlohmann::json actions = nlohmann::json::array();
  size_t i = 0;
  for (const Diagnostic &d : analysis.diagnostics()) {
    const nlohmann::json &asPublished = published.at(i++);
    if (!d.loc.known() || !overlaps(d.loc, firstLine, lastLine))
      continue;
    for (const Diagnostic &note : d.notes) {
      std::string fix = suggestion(note.message);
      if (fix.empty())
        continue;
      Loc span = replacedSpan(d.loc, fix);
      nlohmann::json edit = {{"range", doc.range(span)}, {"newText", fix}};
      actions.push_back({{"title", fmt::format("change to {}", fix)},
                         {"kind", "quickfix"},
                         {"isPreferred", true},
                         {"diagnostics", nlohmann::json::array({asPublished})},
                         {"edit", {{"changes", {{doc.uri(), nlohmann::json::array({edit})}}}}}});
    }
  }
  return actions;
}

} // namespace shardc::lsp
