// Source text -> IR: runs the ANTLR parser, then builds the IR from the parse
// tree. The builder resolves SSA names, decodes tensor types, shardings,
// priorities, literals and attributes, and reports each error at its token.
//
// When the text has syntax errors the builder does not run: a tree that the
// parser repaired would only produce follow-on errors. All syntax errors are
// still reported (the parser recovers at the next statement).
#include "frontend/Parser.h"
#include "frontend/SyntaxErrors.h"

#include "ShdLexer.h"
#include "ShdParser.h"

#include <charconv>
#include <fmt/format.h>
#include <map>

namespace shardc {
namespace {

using P = shd::ShdParser;

/// Byte offset of the first invalid UTF-8 sequence, or npos. ANTLR's input
/// stream throws on invalid UTF-8, so this is checked first.
size_t firstInvalidUtf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    size_t width = c < 0x80           ? 1
                   : (c >> 5) == 0x6  ? 2
                   : (c >> 4) == 0xE  ? 3
                   : (c >> 3) == 0x1E ? 4
                                      : 0;
    if (width == 0 || i + width > text.size())
      return i;
    for (size_t k = 1; k < width; ++k)
      if ((static_cast<unsigned char>(text[i + k]) >> 6) != 0x2)
        return i;
    i += width;
  }
  return std::string_view::npos;
}

class IRBuilder {
public:
  IRBuilder(const SourceFile &file, DiagnosticEngine &diags, Module &module)
      : file_(file), diags_(diags), module_(module) {}

  void build(P::ModuleContext *ctx);

private:
  // ---- locations and literals -------------------------------------------------
  Loc loc(antlr4::Token *t) const { return tokenLoc(file_, t); }
  Loc loc(antlr4::tree::TerminalNode *n) const { return n ? loc(n->getSymbol()) : Loc{}; }
  Loc loc(antlr4::ParserRuleContext *c) const { return ruleLoc(file_, c); }

  std::optional<int64_t> parseInt(antlr4::Token *t);
  std::optional<int64_t> parseInt(antlr4::tree::TerminalNode *n) {
    return parseInt(n->getSymbol());
  }
  static std::string unquote(const std::string &s) { return s.substr(1, s.size() - 2); }

  // ---- pieces -------------------------------------------------------------------
  void buildMesh(P::MeshDefContext *ctx);
  std::optional<TensorType> buildType(P::TensorTypeContext *ctx);
  Sharding buildSharding(P::ShardingContext *ctx);
  AxisRef buildAxisRef(P::AxisRefContext *ctx);
  std::vector<AxisRef> buildAxisSet(P::AxisSetContext *ctx);
  Attribute buildAttrValue(P::AttrValueContext *ctx);
  std::vector<NamedAttribute> buildAttrDict(P::AttrDictContext *ctx);
  bool buildLiteral(P::LiteralContext *ctx, DenseLiteral &out, size_t depth);

  /// An annotated type: the type, and a sharding written either way
  /// (`T sharding<...>`, `sharding<...> : T`, `T {sdy.sharding=...}`).
  struct Annotated {
    std::optional<TensorType> type;
    std::optional<Sharding> sharding;
    Loc typeLoc;
    bool typeInvalid = false; // written, but not decoded (reported)
  };
  template <typename AnnotatedCtx> Annotated buildAnnotated(AnnotatedCtx *ctx);

  /// The part after `:` in a statement: result types, and operand types when
  /// written in the functional form `(T, T) -> T`.
  struct TypeSpec {
    bool present = false;
    bool invalid = false; // some type failed to decode (reported)
    bool functional = false;
    std::vector<Annotated> operands;
    std::vector<Annotated> results;
    Loc loc;
  };
  template <typename SpecCtx> TypeSpec buildTypeSpec(SpecCtx *ctx);

  // ---- functions, blocks and statements -------------------------------------------
  void buildFunction(P::FuncDefContext *ctx);
  void buildBlock(P::BlockContext *ctx, Block &block, bool allowMissingReturn);
  Value *addParam(Block &block, antlr4::tree::TerminalNode *name, Annotated a);
  void buildStatement(const std::vector<antlr4::tree::TerminalNode *> &resultNames,
                      P::OpExprContext *expr, TypeSpec typeSpec, Block &block);
  /// Looks a value up; null (after reporting) when it is not defined, and
  /// null silently when its statement failed to build.
  Value *lookup(antlr4::tree::TerminalNode *name);
  /// Marks the results of a statement that was not built: uses of them are
  /// silently null, so one mistake gives one error.
  void poison(const std::vector<antlr4::tree::TerminalNode *> &names);
  void define(Value *value);
  void addOperands(Op &op, const std::vector<antlr4::tree::TerminalNode *> &names);
  void applyTypeSpec(Op &op, TypeSpec spec);
  void applySdyShardings(Op &op, std::vector<NamedAttribute> &attrs);
  /// Reports a wrong operand count; false when it is wrong.
  bool checkOperandCount(Op &op);

  const SourceFile &file_;
  DiagnosticEngine &diags_;
  Module &module_;
  /// Visible values, innermost scope last. A manual_computation body is
  /// isolated: it starts a fresh stack and sees only its own arguments.
  std::vector<std::map<std::string, Value *>> scopes_;
  std::vector<std::map<std::string, Value *>> hiddenScopes_;
};

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

void IRBuilder::build(P::ModuleContext *ctx) {
  module_.file = &file_;
  module_.snippet.loc = Loc{&file_, 1, 1, 1};
  // Top-level snippets share one scope; each function opens its own.
  scopes_.emplace_back();
  std::map<std::string, Loc> functionNames;
  for (P::TopItemContext *item : ctx->topItem()) {
    if (item->meshDef()) {
      buildMesh(item->meshDef());
    } else if (P::FuncDefContext *f = item->funcDef()) {
      std::string name = f->SYMBOL()->getText().substr(1);
      auto [it, inserted] = functionNames.emplace(name, loc(f->SYMBOL()));
      if (!inserted)
        diags_.error(loc(f->SYMBOL()), fmt::format("redefinition of function @{}", name))
            .note(it->second, "previous definition is here");
      buildFunction(f);
    } else if (P::ValueDeclContext *d = item->valueDecl()) {
      Annotated a;
      if (d->topAnnotatedType())
        a = buildAnnotated(d->topAnnotatedType());
      else
        a.sharding = buildSharding(d->sharding());
      addParam(module_.snippet.body, d->VALUE(), std::move(a));
    } else if (P::TopStatementContext *s = item->topStatement()) {
      buildStatement(s->VALUE(), s->opExpr(), buildTypeSpec(s->topTypeSpec()),
                     module_.snippet.body);
    } else if (P::ShardedTypeDeclContext *t = item->shardedTypeDecl()) {
      ShardedTypeDecl decl;
      decl.sharding = buildSharding(t->sharding());
      decl.loc = loc(t);
      decl.typeLoc = loc(t->tensorType());
      if (auto type = buildType(t->tensorType())) {
        decl.type = *type;
        module_.typeDecls.push_back(std::move(decl));
      }
    }
  }
  scopes_.clear();
}

// ---- meshes ------------------------------------------------------------------------

void IRBuilder::buildMesh(P::MeshDefContext *ctx) {
  auto mesh = std::make_unique<Mesh>();
  mesh->name = ctx->SYMBOL()->getText().substr(1);
  mesh->loc = loc(ctx->SYMBOL());
  P::MeshBodyContext *body = ctx->meshBody();
  if (P::MeshAxesContext *axes = body->meshAxes()) {
    for (P::MeshAxisContext *a : axes->meshAxis()) {
      MeshAxis axis;
      axis.name = unquote(a->STRING()->getText());
      axis.loc = loc(a->STRING());
      axis.size = parseInt(a->INT()).value_or(0);
      mesh->axes.push_back(std::move(axis));
    }
  }
  if (P::DeviceIdsContext *ids = body->deviceIds()) {
    mesh->deviceIdsWritten = true;
    mesh->deviceIdsLoc = loc(ids);
    for (antlr4::tree::TerminalNode *n : ids->INT())
      mesh->deviceIds.push_back(parseInt(n).value_or(-1));
  }
  module_.meshes.push_back(std::move(mesh));
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
  P::ShardingBodyContext *body = ctx->shardingBody();
  Sharding s;
  s.loc = loc(ctx);
  s.meshName = body->SYMBOL()->getText().substr(1);
  s.meshLoc = loc(body->SYMBOL());
  for (P::DimShardingContext *d : body->dimSharding()) {
    DimSharding dim;
    dim.loc = loc(d);
    const auto entries = d->dimEntry();
    for (size_t i = 0; i < entries.size(); ++i) {
      if (entries[i]->axisRef()) {
        if (dim.open)
          diags_.error(loc(entries[i]), "'?' must come after the axes of a dimension");
        dim.axes.push_back(buildAxisRef(entries[i]->axisRef()));
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
      if (ok)
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

template <typename AnnotatedCtx> IRBuilder::Annotated IRBuilder::buildAnnotated(AnnotatedCtx *ctx) {
  Annotated a;
  a.type = buildType(ctx->tensorType());
  a.typeLoc = loc(ctx->tensorType());
  a.typeInvalid = !a.type;
  if (ctx->sharding())
    a.sharding = buildSharding(ctx->sharding());
  if (ctx->attrDict()) {
    for (NamedAttribute &attr : buildAttrDict(ctx->attrDict())) {
      if (attr.name != "sdy.sharding") {
        diags_.error(attr.nameLoc,
                     fmt::format("unknown attribute on a type: {} (only sdy.sharding is "
                                 "allowed here)",
                                 attr.name));
      } else if (attr.value.kind != Attribute::Kind::Sharding) {
        diags_.error(attr.value.loc, "sdy.sharding - expected a sharding <@mesh, [...]>");
      } else if (a.sharding) {
        diags_.error(attr.nameLoc, "sharding written twice for one value");
      } else {
        a.sharding = attr.value.shardings.front();
      }
    }
  }
  return a;
}

template <typename SpecCtx> IRBuilder::TypeSpec IRBuilder::buildTypeSpec(SpecCtx *ctx) {
  TypeSpec spec;
  if (!ctx)
    return spec;
  spec.present = true;
  spec.loc = loc(ctx);
  auto results = ctx->types;
  if (ctx->res) {
    spec.functional = true;
    for (auto *t : results)
      spec.operands.push_back(buildAnnotated(t));
    results = ctx->res->types;
  }
  for (auto *t : results)
    spec.results.push_back(buildAnnotated(t));
  for (const auto *list : {&spec.operands, &spec.results})
    for (const Annotated &a : *list)
      spec.invalid |= a.typeInvalid;
  return spec;
}

// ---- attributes and literals ---------------------------------------------------------------

Attribute IRBuilder::buildAttrValue(P::AttrValueContext *ctx) {
  Attribute a;
  a.loc = loc(ctx);
  using K = Attribute::Kind;
  if (auto *n = dynamic_cast<P::NumberAttrContext *>(ctx)) {
    if (n->number()->INT()) {
      a.kind = K::Int;
      a.i = parseInt(n->number()->INT()).value_or(0);
    } else {
      a.kind = K::Float;
      a.f = std::strtod(n->number()->FLOAT()->getText().c_str(), nullptr);
    }
  } else if (auto *s = dynamic_cast<P::StringAttrContext *>(ctx)) {
    a.kind = K::String;
    a.s = unquote(s->STRING()->getText());
  } else if (auto *b = dynamic_cast<P::BoolAttrContext *>(ctx)) {
    a.kind = K::Bool;
    a.b = b->KW_TRUE() != nullptr;
  } else if (auto *l = dynamic_cast<P::ListAttrContext *>(ctx)) {
    a.kind = K::List;
    for (P::AttrValueContext *v : l->attrValue())
      a.list.push_back(buildAttrValue(v));
  } else if (auto *as = dynamic_cast<P::AxisSetAttrContext *>(ctx)) {
    a.kind = K::AxisSet;
    a.axes = buildAxisSet(as->axisSet());
  } else if (auto *sh = dynamic_cast<P::ShardingAttrContext *>(ctx)) {
    a.kind = K::Sharding;
    a.shardings.push_back(buildSharding(sh->sharding()));
  } else if (auto *pv = dynamic_cast<P::ShardingPerValueAttrContext *>(ctx)) {
    a.kind = K::ShardingList;
    for (P::ShardingContext *sc : pv->sharding())
      a.shardings.push_back(buildSharding(sc));
  } else if (auto *id = dynamic_cast<P::IdentAttrContext *>(ctx)) {
    a.kind = K::Ident;
    a.s = id->IDENT()->getText();
  }
  return a;
}

std::vector<NamedAttribute> IRBuilder::buildAttrDict(P::AttrDictContext *ctx) {
  std::vector<NamedAttribute> attrs;
  std::map<std::string, Loc> seen;
  for (P::AttributeContext *a : ctx->attribute()) {
    NamedAttribute na;
    na.name = a->attrName()->getText();
    na.nameLoc = loc(a->attrName());
    na.value = buildAttrValue(a->attrValue());
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

// ---- functions, blocks, statements ------------------------------------------------------------

Value *IRBuilder::addParam(Block &block, antlr4::tree::TerminalNode *name, Annotated a) {
  auto v = std::make_unique<Value>();
  v->name = name->getText().substr(1);
  v->loc = loc(name);
  v->typeKnown = a.type.has_value();
  if (a.type) {
    v->type = *a.type;
    v->writtenType = *a.type;
  }
  v->writtenTypeLoc = a.typeLoc;
  v->sharding = std::move(a.sharding);
  Value *raw = v.get();
  block.args.push_back(std::move(v));
  define(raw);
  return raw;
}

void IRBuilder::define(Value *value) {
  for (auto &scope : scopes_) {
    auto it = scope.find(value->name);
    if (it != scope.end()) {
      auto diag = diags_.error(value->loc, fmt::format("redefinition of value %{}", value->name));
      if (it->second)
        diag.note(it->second->loc, "previous definition is here");
      return;
    }
  }
  scopes_.back()[value->name] = value;
}

void IRBuilder::poison(const std::vector<antlr4::tree::TerminalNode *> &names) {
  for (antlr4::tree::TerminalNode *name : names)
    scopes_.back().emplace(name->getText().substr(1), nullptr);
}

Value *IRBuilder::lookup(antlr4::tree::TerminalNode *name) {
  std::string n = name->getText().substr(1);
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
    auto found = it->find(n);
    if (found != it->end())
      return found->second;
  }
  for (auto &scope : hiddenScopes_)
    if (scope.count(n)) {
      diags_
          .error(loc(name), fmt::format("use of value %{} from outside a "
                                        "manual_computation body",
                                        n))
          .note(scope[n]->loc, "defined here; pass it in as an operand instead");
      return nullptr;
    }
  std::vector<std::string> candidates;
  for (auto &scope : scopes_)
    for (auto &[k, v] : scope)
      if (v)
        candidates.push_back(k);
  auto builder = diags_.error(loc(name), fmt::format("use of undefined value %{}", n));
  std::string guess = closestMatch(n, candidates);
  if (!guess.empty())
    builder.note(Loc{}, fmt::format("did you mean %{}?", guess));
  return nullptr;
}

void IRBuilder::buildFunction(P::FuncDefContext *ctx) {
  auto fn = std::make_unique<Function>();
  fn->name = ctx->SYMBOL()->getText().substr(1);
  fn->loc = loc(ctx->SYMBOL());
  scopes_.emplace_back();
  for (P::ParamContext *p : ctx->param())
    addParam(fn->body, p->VALUE(), buildAnnotated(p->annotatedType()));
  if (P::ResultTypesContext *r = ctx->resultTypes()) {
    fn->resultsWritten = true;
    for (P::AnnotatedTypeContext *t : r->types) {
      Annotated a = buildAnnotated(t);
      ResultSpec spec;
      spec.loc = loc(t);
      spec.sharding = std::move(a.sharding);
      spec.typeInvalid = a.typeInvalid;
      if (a.type)
        spec.type = *a.type;
      fn->results.push_back(std::move(spec));
    }
  }
  buildBlock(ctx->block(), fn->body, /*allowMissingReturn=*/fn->results.empty());
  scopes_.pop_back();
  module_.functions.push_back(std::move(fn));
}

void IRBuilder::buildBlock(P::BlockContext *ctx, Block &block, bool allowMissingReturn) {
  block.loc = loc(ctx->getStart());
  block.endLoc = loc(ctx->getStop());
  for (antlr4::tree::ParseTree *child : ctx->children) {
    if (auto *s = dynamic_cast<P::StatementContext *>(child)) {
      if (block.hasReturn) {
        diags_.error(loc(s), "statement after return");
        continue;
      }
      buildStatement(s->VALUE(), s->opExpr(), buildTypeSpec(s->typeSpec()), block);
    } else if (auto *r = dynamic_cast<P::ReturnStmtContext *>(child)) {
      if (block.hasReturn) {
        diags_.error(loc(r), "statement after return");
        continue;
      }
      block.hasReturn = true;
      block.returnLoc = loc(r->KW_RETURN());
      for (antlr4::tree::TerminalNode *v : r->VALUE()) {
        block.returned.push_back(lookup(v));
        block.returnedLocs.push_back(loc(v));
      }
      for (P::AnnotatedTypeContext *t : r->annotatedType()) {
        Annotated a = buildAnnotated(t);
        if (a.type)
          block.returnTypes.push_back(*a.type);
        block.returnTypesInvalid |= a.typeInvalid;
      }
    }
  }
  if (!block.hasReturn && !allowMissingReturn)
    diags_.error(block.endLoc, "missing return at the end of the body");
}

void IRBuilder::addOperands(Op &op, const std::vector<antlr4::tree::TerminalNode *> &names) {
  for (antlr4::tree::TerminalNode *n : names) {
    op.operands.push_back(lookup(n));
    op.operandLocs.push_back(loc(n));
  }
}

bool IRBuilder::checkOperandCount(Op &op) {
  const OpInfo &info = opInfo(op.kind);
  int n = static_cast<int>(op.operands.size());
  if (n >= info.minOperands && (info.maxOperands < 0 || n <= info.maxOperands))
    return true;
  std::string expected = info.maxOperands < 0 ? fmt::format("at least {}", info.minOperands)
                         : info.minOperands == info.maxOperands
                             ? std::to_string(info.minOperands)
                             : fmt::format("{} to {}", info.minOperands, info.maxOperands);
  diags_.error(op.loc, fmt::format("{} - expected {} operand{}, got {}", info.name, expected,
                                   expected == "1" ? "" : "s", n));
  return false;
}

void IRBuilder::applyTypeSpec(Op &op, TypeSpec spec) {
  if (!spec.present)
    return;
  op.typeSpecInvalid = spec.invalid;
  if (spec.functional) {
    op.writtenOperandTypesLoc = spec.loc;
    for (Annotated &a : spec.operands)
      if (a.type)
        op.writtenOperandTypes.push_back(*a.type);
  }
  if (spec.results.size() != op.results.size()) {
    op.typeSpecInvalid = true;
    diags_.error(spec.loc, fmt::format("{} - {} result type{} written for {} result{}", op.name(),
                                       spec.results.size(), spec.results.size() == 1 ? "" : "s",
                                       op.results.size(), op.results.size() == 1 ? "" : "s"));
    return;
  }
  for (size_t i = 0; i < spec.results.size(); ++i) {
    Annotated &a = spec.results[i];
    Value *r = op.results[i].get();
    r->writtenType = a.type;
    r->writtenTypeLoc = a.typeLoc;
    if (a.type)
      r->type = *a.type;
    if (a.sharding) {
      if (r->sharding)
        diags_.error(a.sharding->loc, fmt::format("result {} - sharding written twice", i));
      else
        r->sharding = std::move(a.sharding);
    }
  }
}

void IRBuilder::applySdyShardings(Op &op, std::vector<NamedAttribute> &attrs) {
  for (auto it = attrs.begin(); it != attrs.end();) {
    bool perValue = it->name == "sdy.sharding_per_value";
    if (!perValue && it->name != "sdy.sharding") {
      ++it;
      continue;
    }
    const Attribute &v = it->value;
    bool kindOk =
        perValue ? v.kind == Attribute::Kind::ShardingList : v.kind == Attribute::Kind::Sharding;
    if (!kindOk) {
      diags_.error(v.loc, perValue ? "sdy.sharding_per_value - expected <[<@mesh, [...]>, ...]>"
                                   : "sdy.sharding - expected a sharding <@mesh, [...]>");
    } else if (v.shardings.size() != op.results.size()) {
      diags_.error(v.loc, fmt::format("{} - {} sharding{} for {} result{}", it->name,
                                      v.shardings.size(), v.shardings.size() == 1 ? "" : "s",
                                      op.results.size(), op.results.size() == 1 ? "" : "s"));
    } else {
      for (size_t i = 0; i < v.shardings.size(); ++i) {
        if (op.results[i]->sharding)
          diags_.error(v.loc, fmt::format("result {} - sharding written twice", i));
        else
          op.results[i]->sharding = v.shardings[i];
      }
    }
    it = attrs.erase(it);
  }
}

void IRBuilder::buildStatement(const std::vector<antlr4::tree::TerminalNode *> &resultNames,
                               P::OpExprContext *expr, TypeSpec typeSpec, Block &block) {
  auto op = std::make_unique<Op>();
  P::AttrDictContext *attrDict = nullptr;

  if (auto *e = dynamic_cast<P::EinsumOpContext *>(expr)) {
    op->kind = OpKind::Einsum;
    op->loc = loc(e->KW_EINSUM());
    addOperands(*op, e->VALUE());
    Attribute eq;
    eq.kind = Attribute::Kind::String;
    eq.s = unquote(e->STRING()->getText());
    eq.loc = loc(e->STRING());
    op->attrs.push_back({"equation", eq, eq.loc});
    attrDict = e->attrDict();
  } else if (auto *c = dynamic_cast<P::ConstantOpContext *>(expr)) {
    op->kind = OpKind::Constant;
    op->loc = loc(c->KW_CONSTANT());
    Attribute value;
    value.kind = Attribute::Kind::Dense;
    value.loc = loc(c->denseLiteral());
    P::LiteralContext *lit = c->denseLiteral()->literal();
    value.dense.splat = lit->number() || lit->KW_TRUE() || lit->KW_FALSE();
    buildLiteral(lit, value.dense, 0);
    op->attrs.push_back({"value", value, value.loc});
    attrDict = c->attrDict();
  } else if (auto *s = dynamic_cast<P::ShardingOpContext *>(expr)) {
    op->kind = s->name->getType() == P::KW_RESHARD ? OpKind::Reshard : OpKind::ShardingConstraint;
    op->loc = loc(s->name);
    addOperands(*op, {s->VALUE()});
    Attribute sh;
    sh.kind = Attribute::Kind::Sharding;
    sh.loc = loc(s->sharding());
    sh.shardings.push_back(buildSharding(s->sharding()));
    op->attrs.push_back({"sharding", sh, sh.loc});
    attrDict = s->attrDict();
  } else if (auto *m = dynamic_cast<P::ManualOpContext *>(expr)) {
    op->kind = OpKind::ManualComputation;
    op->loc = loc(m->KW_MANUAL_COMPUTATION());
    addOperands(*op, m->VALUE());
    auto shardingList = [&](P::ShardingListContext *list) {
      Attribute a;
      a.kind = Attribute::Kind::ShardingList;
      a.loc = loc(list);
      for (P::ShardingContext *sc : list->sharding())
        a.shardings.push_back(buildSharding(sc));
      return a;
    };
    Attribute in = shardingList(m->shardingList(0));
    Attribute out = shardingList(m->shardingList(1));
    Attribute axes;
    axes.kind = Attribute::Kind::AxisSet;
    axes.loc = loc(m->axisSet());
    axes.axes = buildAxisSet(m->axisSet());
    op->attrs.push_back({"in_shardings", in, loc(m->KW_IN_SHARDINGS())});
    op->attrs.push_back({"out_shardings", out, loc(m->KW_OUT_SHARDINGS())});
    op->attrs.push_back({"manual_axes", axes, loc(m->KW_MANUAL_AXES())});
    // The body is isolated from above: it sees only its own arguments.
    op->body = std::make_unique<Block>();
    std::vector<std::map<std::string, Value *>> outer;
    std::swap(outer, scopes_);
    for (auto &scope : outer)
      hiddenScopes_.push_back(scope);
    scopes_.emplace_back();
    for (P::ParamContext *p : m->param())
      addParam(*op->body, p->VALUE(), buildAnnotated(p->annotatedType()));
    buildBlock(m->block(), *op->body, /*allowMissingReturn=*/false);
    hiddenScopes_.resize(hiddenScopes_.size() - outer.size());
    std::swap(outer, scopes_);
  } else if (auto *g = dynamic_cast<P::GenericOpContext *>(expr)) {
    std::string name = g->IDENT()->getText();
    op->loc = loc(g->IDENT());
    auto kind = lookupOp(name);
    if (!kind) {
      std::vector<std::string> names;
      for (std::string_view n : allOpNames())
        names.emplace_back(n);
      auto b = diags_.error(op->loc, fmt::format("unknown op: {}", name));
      std::string guess = closestMatch(name, names);
      if (!guess.empty())
        b.note(Loc{}, fmt::format("did you mean {}?", guess));
      poison(resultNames);
      return;
    }
    op->kind = *kind;
    OpGroup group = opInfo(op->kind).group;
    if (op->kind == OpKind::Einsum || op->kind == OpKind::Constant ||
        group == OpGroup::ShardingOp || group == OpGroup::Manual) {
      diags_.error(op->loc, fmt::format("{} - written in its own form, see the language "
                                        "reference",
                                        name));
      poison(resultNames);
      return;
    }
    addOperands(*op, g->VALUE());
    attrDict = g->attrDict();
  }

  // An op with the wrong number of operands or results is not added: every
  // op in the IR has the shape its kind promises, so passes can index
  // operands freely.
  bool wellFormed = checkOperandCount(*op);
  if (op->kind != OpKind::ManualComputation && resultNames.size() != 1) {
    diags_.error(loc(resultNames[1]),
                 fmt::format("{} - has one result, {} written", op->name(), resultNames.size()));
    wellFormed = false;
  }
  if (!wellFormed) {
    poison(resultNames);
    return;
  }
  // Results: one per written name.
  for (antlr4::tree::TerminalNode *name : resultNames) {
    auto r = std::make_unique<Value>();
    r->name = name->getText().substr(1);
    r->loc = loc(name);
    r->definingOp = op.get();
    r->resultIndex = static_cast<int>(op->results.size());
    r->typeKnown = false;
    op->results.push_back(std::move(r));
  }
  if (attrDict) {
    std::vector<NamedAttribute> attrs = buildAttrDict(attrDict);
    applySdyShardings(*op, attrs);
    for (NamedAttribute &a : attrs) {
      if (op->namedAttr(a.name)) {
        diags_.error(a.nameLoc, fmt::format("attribute written twice: {}", a.name));
        continue;
      }
      op->attrs.push_back(std::move(a));
    }
  }
  applyTypeSpec(*op, std::move(typeSpec));
  // Results become visible after the op (SSA: no use inside its own operands).
  for (auto &r : op->results)
    define(r.get());
  block.ops.push_back(std::move(op));
}

} // namespace

std::unique_ptr<Module> parseModule(const SourceFile &file, DiagnosticEngine &diags) {
  size_t bad = firstInvalidUtf8(file.text());
  if (bad != std::string_view::npos) {
    // Find the line and column of the bad byte for the diagnostic.
    int line = 1;
    size_t lineStart = 0;
    for (size_t i = 0; i < bad; ++i)
      if (file.text()[i] == '\n') {
        ++line;
        lineStart = i + 1;
      }
    diags.error(Loc{&file, line, static_cast<int>(bad - lineStart) + 1, 1},
                fmt::format("invalid UTF-8 byte 0x{:02X}: the file is not UTF-8 text",
                            static_cast<unsigned char>(file.text()[bad])));
    return nullptr;
  }
  if (file.text().find('\0') != std::string::npos) {
    size_t at = file.text().find('\0');
    diags.error(Loc{&file, 0, 0, 1}, fmt::format("file is not text: NUL byte at offset {}", at));
    return nullptr;
  }

  antlr4::ANTLRInputStream input(file.text());
  shd::ShdLexer lexer(&input);
  antlr4::CommonTokenStream tokens(&lexer);
  shd::ShdParser parser(&tokens);
  SyntaxErrorListener listener(file, diags);
  lexer.removeErrorListeners();
  lexer.addErrorListener(&listener);
  parser.removeErrorListeners();

  // Two stages (ANTLR's recommended practice): the fast SLL prediction mode
  // with bail-out parses every valid file; only a file it rejects is parsed
  // again in full LL mode, which also gives the exact error positions.
  P::ModuleContext *tree = nullptr;
  parser.getInterpreter<antlr4::atn::ParserATNSimulator>()->setPredictionMode(
      antlr4::atn::PredictionMode::SLL);
  parser.setErrorHandler(std::make_shared<antlr4::BailErrorStrategy>());
  try {
    tree = parser.module();
  } catch (const antlr4::ParseCancellationException &) {
    tree = nullptr;
  }
  if (!tree) {
    // Tokens stay buffered, so lexer errors are not reported twice.
    tokens.seek(0);
    parser.reset();
    parser.addErrorListener(&listener);
    parser.setErrorHandler(std::make_shared<antlr4::DefaultErrorStrategy>());
    parser.getInterpreter<antlr4::atn::ParserATNSimulator>()->setPredictionMode(
        antlr4::atn::PredictionMode::LL);
    tree = parser.module();
  }
  if (listener.errorCount() > 0)
    return nullptr;

  auto module = std::make_unique<Module>();
  IRBuilder(file, diags, *module).build(tree);
  return module;
}

} // namespace shardc
