// Go to definition, find references and the document outline, all read off
// the occurrence index of Analysis.h.
#include "tools/shardc-lsp/Features.h"

#include "ir/Printer.h"

#include <fmt/format.h>

namespace shardc::lsp {
namespace {

// LSP SymbolKind values.
namespace symbol_kind {
constexpr int kNamespace = 3, kFunction = 12, kVariable = 13, kEnumMember = 22;
} // namespace symbol_kind

nlohmann::json location(const TextDocument &doc, const Loc &loc) {
  return {{"uri", doc.uri()}, {"range", doc.range(loc)}};
}

const Occurrence *under(const Analysis &analysis, const TextDocument &doc, Position at) {
  return analysis.occurrenceAt(at.line + 1, doc.lines().byteColumn(at));
}

nlohmann::json symbol(const TextDocument &doc, const std::string &name, int kind, const Loc &loc,
                      const std::string &detail = {}) {
  nlohmann::json s = {{"name", name},
                      {"kind", kind},
                      {"range", doc.range(loc)},
                      {"selectionRange", doc.range(loc)}};
  if (!detail.empty())
    s["detail"] = detail;
  return s;
}

nlohmann::json valueSymbol(const TextDocument &doc, const Value &v) {
  return symbol(doc, "%" + v.name, symbol_kind::kVariable, v.loc,
                v.typeKnown ? printType(v.type) : "");
}

/// The values a block defines, manual_computation bodies nested in their op's result.
nlohmann::json blockSymbols(const TextDocument &doc, const Block &b) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto &arg : b.args)
    if (arg->loc.known())
      out.push_back(valueSymbol(doc, *arg));
  for (const auto &op : b.ops)
    for (const auto &r : op->results) {
      if (!r->loc.known())
        continue;
      nlohmann::json s = valueSymbol(doc, *r);
      if (r->resultIndex == 0 && !op->regions().empty()) {
        nlohmann::json children = nlohmann::json::array();
        for (Block *region : op->regions())
          for (nlohmann::json &c : blockSymbols(doc, *region))
            children.push_back(std::move(c));
        s["children"] = std::move(children);
      }
      out.push_back(s);
    }
  return out;
}

} // namespace

nlohmann::json definition(const Analysis &analysis, const TextDocument &doc, Position at) {
  const Occurrence *o = under(analysis, doc, at);
  if (!o || !o->target)
    return nullptr;
  nlohmann::json out = nlohmann::json::array();
  for (const Occurrence *def : analysis.occurrencesOf(o->target))
    if (def->definition)
      out.push_back(location(doc, def->loc));
  return out;
}

nlohmann::json references(const Analysis &analysis, const TextDocument &doc, Position at,
                          bool includeDeclaration) {
  const Occurrence *o = under(analysis, doc, at);
  if (!o || !o->target)
    return nullptr;
  nlohmann::json out = nlohmann::json::array();
  for (const Occurrence *ref : analysis.occurrencesOf(o->target))
    if (includeDeclaration || !ref->definition)
      out.push_back(location(doc, ref->loc));
  return out;
}

nlohmann::json documentSymbols(const Analysis &analysis, const TextDocument &doc) {
  nlohmann::json out = nlohmann::json::array();
  const Module *module = analysis.module();
  if (!module)
    return out;
  for (const auto &mesh : module->meshes) {
    if (!mesh->loc.known())
      continue;
    nlohmann::json s = symbol(
        doc, "@" + mesh->name, symbol_kind::kNamespace, mesh->loc,
        fmt::format("{} device{}", mesh->deviceCount(), mesh->deviceCount() == 1 ? "" : "s"));
    s["children"] = nlohmann::json::array();
    for (const MeshAxis &a : mesh->axes)
      if (a.loc.known())
        s["children"].push_back(symbol(doc, "\"" + a.name + "\"", symbol_kind::kEnumMember, a.loc,
                                       std::to_string(a.size)));
    out.push_back(s);
  }
  for (const nlohmann::json &s : blockSymbols(doc, module->snippet.body))
    out.push_back(s);
  for (const auto &f : module->functions) {
    if (!f->loc.known())
      continue;
    nlohmann::json s = symbol(doc, "@" + f->name, symbol_kind::kFunction, f->loc, "func");
    // The whole function, from its name to its closing brace.
    if (f->body.endLoc.known() && f->body.endLoc.line >= f->loc.line) {
      nlohmann::json range = doc.range(f->loc);
      range["end"] = doc.range(f->body.endLoc)["end"];
      s["range"] = range;
    }
    s["children"] = blockSymbols(doc, f->body);
    out.push_back(s);
  }
  return out;
}

} // namespace shardc::lsp
