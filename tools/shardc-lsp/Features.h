// The editor features, one file each, all reading an Analysis (or, for
// completion, the text and the meshes of the last version that parsed).
// Each returns the LSP result object of its request.
#pragma once

#include "tools/shardc-lsp/Analysis.h"
#include "tools/shardc-lsp/TextDocument.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace shardc::lsp {

/// The compiler's diagnostics as LSP `Diagnostic`s: ir/Diagnostics.h's JSON
/// rendering (the CLI's --diagnostics-format=json), with its byte columns
/// turned into UTF-16 ones and notes pointing into `doc`. Diagnostics.cpp.
nlohmann::json publishedDiagnostics(const Analysis &analysis, const TextDocument &doc);

/// textDocument/hover: a value, parameter or op (type, sharding in seed and
/// JAX syntax, per-device shape, each axis's origin), a mesh or axis, a
/// function. Null when nothing is under `at`. Hover.cpp.
nlohmann::json hover(const Analysis &analysis, const TextDocument &doc, Position at);

/// textDocument/definition and textDocument/references for meshes, axes,
/// functions and values; textDocument/documentSymbol. Navigation.cpp.
nlohmann::json definition(const Analysis &analysis, const TextDocument &doc, Position at);
nlohmann::json references(const Analysis &analysis, const TextDocument &doc, Position at,
                          bool includeDeclaration);
nlohmann::json documentSymbols(const Analysis &analysis, const TextDocument &doc);

/// A mesh as completion needs it, kept from the last version that parsed
/// (while typing, the text usually does not).
struct MeshNames {
  std::string name;
  std::vector<std::pair<std::string, int64_t>> axes;
};
std::vector<MeshNames> meshNames(const Module &module);

/// textDocument/completion: mesh names after `@`, axis names inside
/// `sharding<@mesh, [...]>` (and its replicated={...}). Completion.cpp.
nlohmann::json completion(const TextDocument &doc, Position at,
                          const std::vector<MeshNames> &meshes);

/// textDocument/codeAction: for each of the analysis's diagnostics on the
/// lines of `range` with a "did you mean X?" note, a quick fix that writes
/// X. CodeActions.cpp.
nlohmann::json codeActions(const Analysis &analysis, const TextDocument &doc,
                           const nlohmann::json &range);

/// textDocument/inlayHint: the propagated sharding after each value the
/// user left unannotated, in lines [firstLine, lastLine] (0-based).
/// InlayHints.cpp.
nlohmann::json inlayHints(const Analysis &analysis, const TextDocument &doc, int firstLine,
                          int lastLine);

/// textDocument/semanticTokens/full, with the legend semanticTokensLegend().
/// SemanticTokens.cpp.
nlohmann::json semanticTokensLegend();
nlohmann::json semanticTokens(const Analysis &analysis, const TextDocument &doc);

} // namespace shardc::lsp
