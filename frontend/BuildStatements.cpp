// IR builder, part 3: functions, blocks and statements: SSA scopes (a
// manual_computation body is isolated from above), operand and result
// counts, written types and the seed's sdy.sharding spellings.
#include "frontend/IRBuilder.h"

#include <algorithm>
#include <fmt/format.h>

namespace shardc::frontend {

// ---- functions, blocks, statements ------------------------------------------------------------

std::string_view IRBuilder::text(antlr4::tree::TerminalNode *n) const {
  const antlr4::Token *t = n->getSymbol();
  std::string_view source = file_.text();
  if (t->getStartIndex() >= source.size() || t->getStopIndex() < t->getStartIndex())
    throw InternalError(loc(n), "the IR builder met a token that is not in the file");
  return source.substr(t->getStartIndex(), t->getStopIndex() + 1 - t->getStartIndex());
}

Value *IRBuilder::addParam(Block &block, antlr4::tree::TerminalNode *name, Annotated a) {
  auto v = std::make_unique<Value>();
  v->name = nameOf(name);
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

const IRBuilder::Scope *IRBuilder::topLevelScope() const {
  if (!function_)
    return nullptr;
  // In a manual_computation body the module's scopes are hidden, the first
  // of them first.
  if (!hiddenScopes_.empty())
    return hiddenScopes_.front();
  return scopes_.empty() ? nullptr : &scopes_.front();
}

void IRBuilder::define(Value *value) {
  const Scope *topLevel = topLevelScope();
  for (auto &scope : scopes_) {
    if (&scope == topLevel)
      continue;
    auto it = scope.find(value->name);
    if (it != scope.end()) {
      auto diag = diags_.error(value->loc, fmt::format("redefinition of value %{}", value->name));
      if (it->second)
        diag.note(it->second->loc, "previous definition is here");
      return;
    }
  }
  scopes_.back().emplace(value->name, value);
}

void IRBuilder::poison(const std::vector<antlr4::tree::TerminalNode *> &names) {
  for (antlr4::tree::TerminalNode *name : names)
    scopes_.back().emplace(nameOf(name), nullptr);
}

Value *IRBuilder::lookup(antlr4::tree::TerminalNode *name) {
  std::string_view n = nameOf(name);
  const Scope *topLevel = topLevelScope();
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
    if (&*it == topLevel)
      continue;
    auto found = it->find(n);
    if (found != it->end())
      return found->second;
  }
  for (const Scope *scope : hiddenScopes_)
    if (auto hidden = scope->find(n); scope != topLevel && hidden != scope->end()) {
      if (!hidden->second) // its statement failed to build (reported)
        return nullptr;
      diags_
          .error(loc(name), fmt::format("use of value %{} from outside a "
                                        "manual_computation body",
                                        n))
          .note(hidden->second->loc, "defined here; pass it in as an operand instead");
      return nullptr;
    }
  if (topLevel)
    if (auto outside = topLevel->find(n); outside != topLevel->end()) {
      if (!outside->second) // its statement failed to build (reported)
        return nullptr;
      diags_
          .error(loc(name),
                 fmt::format("use of top-level value %{} inside function @{}", n, function_->name))
          .note(outside->second->loc, "defined here, outside every function; pass it in as a "
                                      "parameter instead");
      return nullptr;
    }
  // Each scope's names in sorted order, so that a tie in closestMatch does
  // not depend on the hash order.
  std::vector<std::string> candidates;
  for (auto &scope : scopes_) {
    if (&scope == topLevel)
      continue;
    size_t first = candidates.size();
    for (auto &[k, v] : scope)
      if (v)
        candidates.emplace_back(k);
    std::sort(candidates.begin() + first, candidates.end());
  }
  auto builder = diags_.error(loc(name), fmt::format("use of undefined value %{}", n));
  std::string guess = closestMatch(n, candidates);
  if (!guess.empty())
    builder.note(Loc{}, fmt::format("did you mean %{}?", guess));
  return nullptr;
}

void IRBuilder::beginFunction(P::FuncDefContext *ctx, size_t statements) {
  std::string name = ctx->SYMBOL()->getText().substr(1);
  auto [it, inserted] = functionNames_.emplace(name, loc(ctx->SYMBOL()));
  if (!inserted)
    diags_.error(loc(ctx->SYMBOL()), fmt::format("redefinition of function @{}", name))
        .note(it->second, "previous definition is here");
  function_ = std::make_unique<Function>();
  Function &fn = *function_;
  fn.name = std::move(name);
  fn.loc = loc(ctx->SYMBOL());
  scopes_.emplace_back();
  // A name per statement, about: sized once rather than rehashed as it grows.
  scopes_.back().reserve(ctx->param().size() + statements);
  for (P::ParamContext *p : ctx->param())
    addParam(fn.body, p->VALUE(), buildAnnotated(p->annotatedType()));
  if (P::ResultTypesContext *r = ctx->resultTypes()) {
    fn.resultsWritten = true;
    for (P::AnnotatedTypeContext *t : r->types) {
      Annotated a = buildAnnotated(t);
      ResultSpec spec;
      spec.loc = loc(t);
      spec.sharding = std::move(a.sharding);
      spec.typeInvalid = a.typeInvalid;
      if (a.type)
        spec.type = *a.type;
      fn.results.push_back(std::move(spec));
    }
  }
  // The body's `{` is parsed: the parser entered the block with it next.
  fn.body.loc = loc(ctx->block()->getStart());
}

void IRBuilder::buildBodyItem(antlr4::tree::ParseTree *item) {
  buildBlockItem(item, function_->body);
}

void IRBuilder::endFunction(P::FuncDefContext *ctx) {
  Function &fn = *function_;
  fn.body.endLoc = loc(ctx->block()->getStop());
  finishBlock(fn.body, /*allowMissingReturn=*/fn.results.empty());
  scopes_.pop_back();
  module_.functions.push_back(std::move(function_));
}

void IRBuilder::buildBlock(P::BlockContext *ctx, Block &block, bool allowMissingReturn) {
  block.loc = loc(ctx->getStart());
  block.endLoc = loc(ctx->getStop());
  for (antlr4::tree::ParseTree *child : ctx->children)
    buildBlockItem(child, block);
  finishBlock(block, allowMissingReturn);
}

void IRBuilder::buildBlockItem(antlr4::tree::ParseTree *child, Block &block) {
  if (auto *s = nodeAs<P::StatementContext>(child)) {
    if (block.hasReturn) {
      diags_.error(loc(s), "statement after return");
      return;
    }
    if (auto *op = firstRuleChild<P::OpExprContext>(s, P::RuleOpExpr))
      buildStatement(tokensOf(s, P::VALUE), op, buildTypeSpec(firstChild<P::TypeSpecContext>(s)),
                     block);
    else
      buildControl(tokensOf(s, P::VALUE), s->controlExpr(), firstChild<P::TypeSpecContext>(s),
                   block);
  } else if (auto *c = nodeAs<P::ControlStmtContext>(child)) {
    if (block.hasReturn) {
      diags_.error(loc(c), "statement after return");
      return;
    }
    buildControl({}, c->controlExpr(), c->typeSpec(), block);
  } else if (auto *r = nodeAs<P::ReturnStmtContext>(child)) {
    if (block.hasReturn) {
      diags_.error(loc(r), "statement after return");
      return;
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

void IRBuilder::finishBlock(Block &block, bool allowMissingReturn) {
  if (!block.hasReturn && !allowMissingReturn)
    diags_.error(block.endLoc, "missing return at the end of the body");
}

void IRBuilder::addOperands(Op &op, const std::vector<antlr4::tree::TerminalNode *> &names) {
  for (antlr4::tree::TerminalNode *n : names) {
    op.operands.push_back(lookup(n));
    op.operandLocs.push_back(loc(n));
  }
}

void IRBuilder::addResults(Op &op, const std::vector<antlr4::tree::TerminalNode *> &names) {
  for (antlr4::tree::TerminalNode *name : names) {
    auto r = std::make_unique<Value>();
    r->name = nameOf(name);
    r->loc = loc(name);
    r->definingOp = &op;
    r->resultIndex = static_cast<int>(op.results.size());
    r->typeKnown = false;
    op.results.push_back(std::move(r));
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

  if (auto *e = nodeAs<P::EinsumOpContext>(expr)) {
    op->kind = OpKind::Einsum;
    op->loc = loc(e->KW_EINSUM());
    addOperands(*op, e->VALUE());
    Attribute eq;
    eq.kind = Attribute::Kind::String;
    eq.s = unquote(e->STRING()->getText());
    eq.loc = loc(e->STRING());
    op->attrs.push_back({"equation", eq, eq.loc});
    attrDict = e->attrDict();
  } else if (auto *c = nodeAs<P::ConstantOpContext>(expr)) {
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
  } else if (auto *s = nodeAs<P::ShardingOpContext>(expr)) {
    op->kind = s->name->getType() == P::KW_RESHARD ? OpKind::Reshard : OpKind::ShardingConstraint;
    op->loc = loc(s->name);
    addOperands(*op, {s->VALUE()});
    Attribute sh;
    sh.kind = Attribute::Kind::Sharding;
    sh.loc = loc(s->sharding());
    sh.shardings.push_back(buildSharding(s->sharding()));
    op->attrs.push_back({"sharding", sh, sh.loc});
    attrDict = s->attrDict();
  } else if (auto *m = nodeAs<P::ManualOpContext>(expr)) {
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
    std::vector<Scope> outer;
    std::swap(outer, scopes_);
    for (const Scope &scope : outer)
      hiddenScopes_.push_back(&scope);
    scopes_.emplace_back();
    for (P::ParamContext *p : m->param())
      addParam(*op->body, p->VALUE(), buildAnnotated(p->annotatedType()));
    buildBlock(m->block(), *op->body, /*allowMissingReturn=*/false);
    hiddenScopes_.resize(hiddenScopes_.size() - outer.size());
    std::swap(outer, scopes_);
  } else if (auto *a = nodeAs<P::AxesOpContext>(expr)) {
    buildAxesRegion(*op, a);
  } else if (auto *g = nodeAs<P::GenericOpContext>(expr)) {
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
    addOperands(*op, tokensOf(g, P::VALUE));
    attrDict = firstChild<P::AttrDictContext>(g);
  }

  // An op with the wrong number of operands or results is not added: every
  // op in the IR has the shape its kind promises, so passes can index
  // operands freely.
  bool wellFormed = checkOperandCount(*op);
  if (opInfo(op->kind).group != OpGroup::Manual && resultNames.size() != 1) {
    diags_.error(loc(resultNames[1]),
                 fmt::format("{} - has one result, {} written", op->name(), resultNames.size()));
    wellFormed = false;
  }
  if (!wellFormed) {
    poison(resultNames);
    return;
  }
  addResults(*op, resultNames);
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

} // namespace shardc::frontend
