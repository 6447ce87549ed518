// textDocument/inlayHint: after each value the user left unannotated, the
// sharding propagation gave it. "Unannotated" is read off propagation's
// origins: a value whose sharding has axes, none of them written on it. In
// explicit mode nothing records origins and there are no hints. With
// auto-shard (shardc-lsp --auto-shard), a value or result of @main written
// without a sharding shows the one the solver chose, replicated included.
#include "tools/shardc-lsp/Features.h"

#include "ir/Printer.h"
#include "ir/ShardingLayout.h"

#include <algorithm>
#include <utility>

namespace shardc::lsp {
namespace {

constexpr int kTypeHint = 1; // LSP InlayHintKind.Type

/// Whether every axis of `sharding` reached it by propagation.
bool allPropagated(const Sharding &sharding, const std::vector<DimOrigins> *dims) {
  bool anyAxis = false;
  for (size_t d = 0; d < sharding.dims.size(); ++d)
    for (const AxisRef &a : sharding.dims[d].axes) {
      anyAxis = true;
      if (!dims || d >= dims->size())
        return false;
      auto it = (*dims)[d].find(originKey(a));
      if (it == (*dims)[d].end() || !it->second.propagated)
        return false;
    }
  return anyAxis;
}

class HintCollector {
public:
  HintCollector(const Analysis &analysis, const TextDocument &doc, int firstLine, int lastLine)
      : analysis_(analysis), origins_(*analysis.origins()), doc_(doc), firstLine_(firstLine),
        lastLine_(lastLine) {}

  nlohmann::json run(const Module &module) {
    function(module.snippet);
    for (const auto &f : module.functions)
      function(*f);
    // Function results are visited after the body: put hints in text order.
    std::stable_sort(hints_.begin(), hints_.end(), [](const auto &a, const auto &b) {
      return std::make_pair(a["position"]["line"].template get<int>(),
                            a["position"]["character"].template get<int>()) <
             std::make_pair(b["position"]["line"].template get<int>(),
                            b["position"]["character"].template get<int>());
    });
    return hints_;
  }

private:
  void function(const Function &f) {
    // auto-shard decides @main's own values (not those of nested bodies).
    const bool solved = analysis_.autoSharded() && !f.isSnippet() && f.name == "main";
    block(f.body, solved);
    for (const ResultSpec &spec : f.results) {
      const ResultSpec *after = analysis_.propagatedResult(spec);
      if (!after || !after->sharding)
        continue;
      if (solved && !spec.sharding)
        chosen(spec.loc, after->type, *after->sharding);
      else if (auto it = origins_.results.find(after); it != origins_.results.end())
        hint(spec.loc, after->type, *after->sharding, &it->second);
    }
  }

  void block(const Block &b, bool solved) {
    for (const auto &arg : b.args)
      value(*arg, solved);
    for (const auto &op : b.ops) {
      for (const auto &r : op->results)
        value(*r, solved);
      for (Block *region : op->regions())
        block(*region, solved && isControlFlow(op->kind));
    }
  }

  void value(const Value &v, bool solved) {
    const Value *after = analysis_.propagatedValue(v);
    if (!after || !after->sharding)
      return;
    if (solved && !v.sharding)
      return chosen(v.loc, after->type, *after->sharding);
    auto it = origins_.values.find(after);
    hint(v.loc, after->type, *after->sharding, it == origins_.values.end() ? nullptr : &it->second);
  }

  /// A propagated sharding: only when every axis reached the value by
  /// propagation.
  void hint(const Loc &at, const TensorType &type, const Sharding &sharding,
            const std::vector<DimOrigins> *dims) {
    if (allPropagated(sharding, dims))
      add(at, sharding, "propagated: " + jaxType(type, &sharding));
  }

  /// The solver's choice for a value written without a sharding.
  void chosen(const Loc &at, const TensorType &type, const Sharding &sharding) {
    add(at, sharding, "auto-shard: " + jaxType(type, &sharding));
  }

  void add(const Loc &at, const Sharding &sharding, const std::string &tooltip) {
    if (!at.known() || at.line - 1 < firstLine_ || at.line - 1 > lastLine_)
      return;
    Position end = doc_.lines().position(at.line, at.col + at.length);
    hints_.push_back({{"position", toJson(end)},
                      {"label", printSharding(sharding)},
                      {"kind", kTypeHint},
                      {"paddingLeft", true},
                      {"tooltip", tooltip}});
  }

  const Analysis &analysis_;
  const ShardingOrigins &origins_;
  const TextDocument &doc_;
  int firstLine_, lastLine_;
  nlohmann::json hints_ = nlohmann::json::array();
};

} // namespace

nlohmann::json inlayHints(const Analysis &analysis, const TextDocument &doc, int firstLine,
                          int lastLine) {
  if (!analysis.module() || !analysis.propagated() || !analysis.origins())
    return nlohmann::json::array();
  return HintCollector(analysis, doc, firstLine, lastLine).run(*analysis.module());
}

} // namespace shardc::lsp
