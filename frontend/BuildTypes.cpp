// IR builder, part 2: tensor types, shardings, attributes and literals,
// each decoded from its parse-tree rule and checked at its token.
#include "frontend/IRBuilder.h"

#include <charconv>
#include <fmt/format.h>

namespace shardc::frontend {

std::optional<int64_t> IRBuilder::parseInt(antlr4::Token *t) {
  std::string text = t->getText();
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) {
    diags_.error(loc(t), fmt::format("integer out of range: {}", text));
    return std::nullopt;
  }
  return value;
}

// ---- types and shardings ----------------------------------------------------------------

std::optional<TensorType> IRBuilder::buildType(P::TensorTypeContext *ctx) {
  antlr4::Token *token = ctx->TENSOR_TYPE()->getSymbol();
  std::string message;
  size_t offset = 0;
  auto type = parseTensorType(token->getText(), message, offset);
  if (!type)
    diags_.error(loc(token).shifted(static_cast<int>(offset)), message);
  return type;
}

AxisRef IRBuilder::buildAxisRef(P::AxisRefContext *ctx) {
  AxisRef ref;
  ref.name = unquote(ctx->STRING()->getText());
  ref.loc = loc(ctx);
  if (ctx->pre) {
    // A pre-size below 1 is reported here and replaced by 1, so the IR
    // keeps a sub-axis (preSize > 0) and the verifier sees no second error.
    ref.preSize = parseInt(ctx->pre).value_or(0);
    ref.size = parseInt(ctx->size).value_or(0);
    if (ref.preSize <= 0) {
      diags_.error(loc(ctx->pre), fmt::format("sub-axis {} - pre-size must be at least 1: {}",
                                              ref.name, ctx->pre->getText()));
      ref.preSize = 1;
    }
  }
  return ref;
}

std::vector<AxisRef> IRBuilder::buildAxisSet(P::AxisSetContext *ctx) {
  std::vector<AxisRef> axes;
  for (P::AxisRefContext *a : ctx->axisRef())
    axes.push_back(buildAxisRef(a));
  return axes;
}

Sharding IRBuilder::buildSharding(P::ShardingContext *ctx) {
  P::ShardingBodyContext *body = firstChild<P::ShardingBodyContext>(ctx);
  Sharding s;
  s.loc = loc(ctx);
  s.meshName = body->SYMBOL()->getText().substr(1);
  s.meshLoc = loc(body->SYMBOL());
  for (P::DimShardingContext *d : childrenOf<P::DimShardingContext>(body)) {
    DimSharding dim;
    dim.loc = loc(d);
    const auto entries = childrenOf<P::DimEntryContext>(d);
    for (size_t i = 0; i < entries.size(); ++i) {
      if (P::AxisRefContext *axis = firstChild<P::AxisRefContext>(entries[i])) {
        if (dim.open)
          diags_.error(loc(entries[i]), "'?' must come after the axes of a dimension");
        dim.axes.push_back(buildAxisRef(axis));
      } else if (dim.open) {
        diags_.error(loc(entries[i]), "'?' written twice in one dimension");
      } else {
        dim.open = true;
      }
    }
    if (d->priority) {
      dim.priorityLoc = loc(d->priority);
      std::string text = d->priority->getText();
      int64_t value = -1;
      bool ok = text.size() > 1 && text[0] == 'p';
      if (ok) {
        auto [ptr, ec] = std::from_chars(text.data() + 1, text.data() + text.size(), value);
        ok = ec == std::errc() && ptr == text.data() + text.size();
      }
      if (ok && text.size() > 2 && text[1] == '0')
        // Shardy's parser: `p01` would print back as `p1`.
        diags_.error(dim.priorityLoc,
                     fmt::format("priorities with leading zeros are not allowed, got: {}", text));
      else if (ok)
        dim.priority = value;
      else
        diags_.error(dim.priorityLoc,
                     fmt::format("expected a priority such as p0 or p1, got: {}", text));
    }
    s.dims.push_back(std::move(dim));
  }
  if (body->axisSet())
    s.replicated = buildAxisSet(body->axisSet());
  if (body->stray) {
    s.strayBrace = true;
    diags_.warning(loc(body->stray), "stray '}' before '>' in a sharding; remove it");
  }
  return s;
}

// ---- attributes and literals ---------------------------------------------------------------

Attribute IRBuilder::buildAttrValue(P::AttrValueContext *ctx) {
  Attribute a;
  a.loc = loc(ctx);
  using K = Attribute::Kind;
  if (auto *n = nodeAs<P::NumberAttrContext>(ctx)) {
    if (n->number()->INT()) {
      a.kind = K::Int;
      a.i = parseInt(n->number()->INT()).value_or(0);
    } else {
      a.kind = K::Float;
      a.f = std::strtod(n->number()->FLOAT()->getText().c_str(), nullptr);
    }
  } else if (auto *s = nodeAs<P::StringAttrContext>(ctx)) {
    a.kind = K::String;
    a.s = unquote(s->STRING()->getText());
  } else if (auto *b = nodeAs<P::BoolAttrContext>(ctx)) {
    a.kind = K::Bool;
    a.b = b->KW_TRUE() != nullptr;
  } else if (auto *l = nodeAs<P::ListAttrContext>(ctx)) {
    a.kind = K::List;
    for (antlr4::tree::ParseTree *child : l->children)
      if (auto *v = ruleNodeAs<P::AttrValueContext>(child, P::RuleAttrValue))
        a.list.push_back(buildAttrValue(v));
  } else if (auto *as = nodeAs<P::AxisSetAttrContext>(ctx)) {
    a.kind = K::AxisSet;
    a.axes = buildAxisSet(as->axisSet());
  } else if (auto *sh = nodeAs<P::ShardingAttrContext>(ctx)) {
    a.kind = K::Sharding;
    a.shardings.push_back(buildSharding(sh->sharding()));
  } else if (auto *pv = nodeAs<P::ShardingPerValueAttrContext>(ctx)) {
    a.kind = K::ShardingList;
    for (P::ShardingContext *sc : pv->sharding())
      a.shardings.push_back(buildSharding(sc));
  } else if (auto *id = nodeAs<P::IdentAttrContext>(ctx)) {
    a.kind = K::Ident;
    a.s = id->IDENT()->getText();
  }
  return a;
}

std::vector<NamedAttribute> IRBuilder::buildAttrDict(P::AttrDictContext *ctx) {
  std::vector<NamedAttribute> attrs;
  std::map<std::string, Loc> seen;
  for (P::AttributeContext *a : childrenOf<P::AttributeContext>(ctx)) {
    NamedAttribute na;
    P::AttrNameContext *name = firstChild<P::AttrNameContext>(a);
    na.name = name->getStart()->getText(); // one token: an IDENT or a keyword
    na.nameLoc = loc(name);
    na.value = buildAttrValue(firstRuleChild<P::AttrValueContext>(a, P::RuleAttrValue));
    auto [it, inserted] = seen.emplace(na.name, na.nameLoc);
    if (!inserted) {
      diags_.error(na.nameLoc, fmt::format("attribute written twice: {}", na.name))
          .note(it->second, "first written here");
      continue;
    }
    attrs.push_back(std::move(na));
  }
  return attrs;
}

bool IRBuilder::buildLiteral(P::LiteralContext *ctx, DenseLiteral &out, size_t depth) {
  if (P::NumberContext *n = ctx->number()) {
    if (depth != out.shape.size()) {
      diags_.error(loc(ctx), "dense literal - ragged nesting: every row needs the same depth");
      return false;
    }
    Scalar s;
    if (n->INT()) {
      s.i = parseInt(n->INT()).value_or(0);
    } else {
      s.isFloat = true;
      s.f = std::strtod(n->FLOAT()->getText().c_str(), nullptr);
    }
    out.elements.push_back(s);
    return true;
  }
  if (ctx->KW_TRUE() || ctx->KW_FALSE()) {
    if (depth != out.shape.size()) {
      diags_.error(loc(ctx), "dense literal - ragged nesting: every row needs the same depth");
      return false;
    }
    Scalar s;
    s.isBool = true;
    s.i = ctx->KW_TRUE() ? 1 : 0;
    out.elements.push_back(s);
    return true;
  }
  // A list: the first list seen at a depth fixes that dim's size.
  auto items = ctx->literal();
  if (depth == out.shape.size() && out.elements.empty()) {
    out.shape.push_back(static_cast<int64_t>(items.size()));
  } else if (depth >= out.shape.size() || out.shape[depth] != static_cast<int64_t>(items.size())) {
    diags_.error(loc(ctx), "dense literal - ragged nesting: rows have different lengths");
    return false;
  }
  for (P::LiteralContext *item : items)
    if (!buildLiteral(item, out, depth + 1))
      return false;
  return true;
}

} // namespace shardc::frontend
