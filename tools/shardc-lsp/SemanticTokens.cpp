// textDocument/semanticTokens/full: every name the occurrence index knows,
// classified by what it names (the TextMate grammar of editors/vscode
// colours the rest: comments, keywords, types, numbers).
#include "tools/shardc-lsp/Features.h"

namespace shardc::lsp {
namespace {

// Indices into the legend's tokenTypes and tokenModifiers bits.
enum TokenType { kNamespace, kEnumMember, kFunction, kParameter, kVariable };
enum TokenModifier { kDeclaration = 1, kDefaultLibrary = 2 };

int tokenType(const Occurrence &o) {
  switch (o.kind) {
  case Occurrence::Kind::Mesh:
    return kNamespace;
  case Occurrence::Kind::Axis:
    return kEnumMember;
  case Occurrence::Kind::Function:
  case Occurrence::Kind::Op:
    return kFunction;
  case Occurrence::Kind::Value:
    return static_cast<const Value *>(o.target)->isParameter() ? kParameter : kVariable;
  }
  return kVariable;
}

} // namespace

nlohmann::json semanticTokensLegend() {
  return {{"tokenTypes", {"namespace", "enumMember", "function", "parameter", "variable"}},
          {"tokenModifiers", {"declaration", "defaultLibrary"}}};
}

nlohmann::json semanticTokens(const Analysis &analysis, const TextDocument &doc) {
  std::vector<int> data;
  Position last{0, 0};
  int lastEnd = -1, lastLine = -1;
  for (const Occurrence &o : analysis.occurrences()) {
    Position start = doc.lines().position(o.loc.line, o.loc.col);
    Position end = doc.lines().position(o.loc.line, o.loc.col + std::max(o.loc.length, 1));
    // Tokens may not overlap; the index is sorted by start.
    if (end.character <= start.character || (start.line == lastLine && start.character < lastEnd))
      continue;
    int modifiers =
        (o.definition ? kDeclaration : 0) | (o.kind == Occurrence::Kind::Op ? kDefaultLibrary : 0);
    int deltaLine = start.line - last.line;
    int deltaStart = deltaLine == 0 ? start.character - last.character : start.character;
    data.insert(data.end(),
                {deltaLine, deltaStart, end.character - start.character, tokenType(o), modifiers});
    last = start;
    lastLine = start.line;
    lastEnd = end.character;
  }
  return {{"data", data}};
}

} // namespace shardc::lsp
