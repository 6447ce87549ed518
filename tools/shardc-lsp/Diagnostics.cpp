// Publishing the compiler's diagnostics: the CLI's LSP-shaped JSON
// (renderJson), with LSP's UTF-16 columns and the document's URI.
#include "tools/shardc-lsp/Features.h"

namespace shardc::lsp {
namespace {

/// renderJson counts columns in bytes; the editor counts UTF-16 units.
void convertRange(nlohmann::json &range, const TextDocument &doc) {
  for (const char *end : {"start", "end"}) {
    nlohmann::json &p = range[end];
    int line = p["line"].get<int>();
    int byteCol = p["character"].get<int>() + 1;
    p = toJson(doc.lines().position(line + 1, byteCol));
  }
}

} // namespace

nlohmann::json publishedDiagnostics(const Analysis &analysis, const TextDocument &doc) {
  nlohmann::json all = nlohmann::json::parse(renderJson(analysis.diagnostics()));
  for (nlohmann::json &d : all) {
    d.erase("file");
    convertRange(d["range"], doc);
    if (d.contains("relatedInformation"))
      for (nlohmann::json &related : d["relatedInformation"]) {
        related["location"]["uri"] = doc.uri();
        convertRange(related["location"]["range"], doc);
      }
  }
  return all;
}

} // namespace shardc::lsp
