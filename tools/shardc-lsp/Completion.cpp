// textDocument/completion from the text before the cursor: while typing,
// the document rarely parses, so the context is read lexically and the
// names come from the last version that did parse.
//   1. the word being typed: identifier characters back from the cursor;
//   2. `@` before it: mesh names;
//   3. else, inside `<@mesh, [ ... ` (or its `replicated={ ... `) with no `>`
//      closing it yet: the axis names of that mesh, quoted unless the quote
//      is already typed.
#include "tools/shardc-lsp/Features.h"

#include <fmt/format.h>

#include <cctype>

namespace shardc::lsp {
namespace {

// LSP CompletionItemKind values.
namespace completion_kind {
constexpr int kModule = 9, kEnumMember = 20;
} // namespace completion_kind
/// How far back a sharding may start (a sharding fits on a few lines).
constexpr size_t kLookBehind = 4096;

bool isWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '$';
}

/// The mesh of the unfinished sharding that ends at `end`, if the cursor is
/// inside its dims or replicated axes; empty otherwise.
std::string shardingMeshAt(const std::string &text, size_t end) {
  size_t from = end > kLookBehind ? end - kLookBehind : 0;
  size_t open = text.rfind("<@", end == 0 ? 0 : end - 1);
  if (open == std::string::npos || open < from || end < open + 2)
    return {};
  size_t nameEnd = open + 2;
  while (nameEnd < end && isWordChar(text[nameEnd]))
    ++nameEnd;
  int brackets = 0, braces = 0;
  for (size_t i = nameEnd; i < end; ++i) {
    char c = text[i];
    if (c == '"') { // skip a quoted axis name
      size_t close = text.find('"', i + 1);
      if (close == std::string::npos || close >= end)
        return braces + brackets > 0 ? text.substr(open + 2, nameEnd - open - 2) : "";
      i = close;
    } else if (c == '[') {
      ++brackets;
    } else if (c == ']') {
      --brackets;
    } else if (c == '{') {
      ++braces;
    } else if (c == '}') {
      --braces;
    } else if (c == '>' && brackets <= 0 && braces <= 0) {
      return {}; // the sharding is closed
    } else if (c == '/' && i + 1 < end && text[i + 1] == '/') {
      return {}; // a comment: no sharding continues through it
    }
  }
  return brackets + braces > 0 ? text.substr(open + 2, nameEnd - open - 2) : "";
}

nlohmann::json item(const std::string &label, int kind, const std::string &detail,
                    const nlohmann::json &range, const std::string &newText) {
  return {{"label", label},
          {"kind", kind},
          {"detail", detail},
          {"textEdit", {{"range", range}, {"newText", newText}}}};
}

} // namespace

std::vector<MeshNames> meshNames(const Module &module) {
  std::vector<MeshNames> out;
  for (const auto &mesh : module.meshes) {
    MeshNames m{mesh->name, {}};
    for (const MeshAxis &a : mesh->axes)
      m.axes.emplace_back(a.name, a.size);
    out.push_back(std::move(m));
  }
  return out;
}

nlohmann::json completion(const TextDocument &doc, Position at,
                          const std::vector<MeshNames> &meshes) {
  const std::string &text = doc.text();
  size_t cursor = doc.lines().offset(at);
  size_t start = cursor;
  while (start > 0 && isWordChar(text[start - 1]))
    --start;
  nlohmann::json range = {{"start", toJson(doc.lines().position(start))},
                          {"end", toJson(doc.lines().position(cursor))}};
  nlohmann::json items = nlohmann::json::array();

  if (start > 0 && text[start - 1] == '@') {
    for (const MeshNames &m : meshes) {
      std::string axes;
      for (const auto &[name, size] : m.axes)
        axes += fmt::format("{}\"{}\"={}", axes.empty() ? "" : ", ", name, size);
      items.push_back(
          item(m.name, completion_kind::kModule, fmt::format("mesh <[{}]>", axes), range, m.name));
    }
  } else if (std::string mesh = shardingMeshAt(text, start); !mesh.empty()) {
    bool quoted = start > 0 && text[start - 1] == '"';
    bool closed = cursor < text.size() && text[cursor] == '"';
    for (const MeshNames &m : meshes) {
      if (m.name != mesh)
        continue;
      for (const auto &[name, size] : m.axes) {
        std::string insert = quoted ? name + (closed ? "" : "\"") : "\"" + name + "\"";
        items.push_back(item(name, completion_kind::kEnumMember,
                             fmt::format("axis of @{}, size {}", m.name, size), range, insert));
      }
    }
  }
  return {{"isIncomplete", false}, {"items", items}};
}

} // namespace shardc::lsp
