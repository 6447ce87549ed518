// IR builder, part 4: control flow (LANGUAGE.md section 9): `for`, `while`,
// `if` and `call`. Regions capture the values defined above them; what they
// define stays inside. The types of carried values are the inits', set by
// infer-types, which also checks everything that needs a type.
#include "frontend/IRBuilder.h"

#include <fmt/format.h>

namespace shardc::frontend {

namespace {

using Names = std::vector<antlr4::tree::TerminalNode *>;

Attribute intAttribute(int64_t value, Loc loc) {
  Attribute a;
  a.kind = Attribute::Kind::Int;
  a.i = value;
  a.loc = loc;
  return a;
}

} // namespace

void IRBuilder::buildRegion(P::BlockContext *ctx, Block &region, const Names &args,
                            bool allowMissingReturn) {
  scopes_.emplace_back();
  for (antlr4::tree::TerminalNode *name : args) {
    auto v = std::make_unique<Value>();
    v->name = nameOf(name);
    v->loc = loc(name);
    v->typeKnown = false;
    Value *raw = v.get();
    region.args.push_back(std::move(v));
    define(raw);
  }
  buildBlock(ctx, region, allowMissingReturn);
  scopes_.pop_back();
}

void IRBuilder::buildControl(const Names &resultNames, P::ControlExprContext *expr,
                             P::TypeSpecContext *typeSpec, Block &block) {
  auto op = std::make_unique<Op>();
  bool wellFormed = true;
  // The carried values: their names inside the regions, their inits outside.
  Names carriedNames;
  auto readCarry = [&](P::CarryListContext *carry) {
    for (P::CarryInitContext *init : carry->carryInit()) {
      carriedNames.push_back(init->VALUE(0));
      addOperands(*op, {init->VALUE(1)});
    }
  };
  auto carriedResults = [&]() {
    if (resultNames.size() == carriedNames.size())
      return;
    Loc where = resultNames.empty() ? op->loc : loc(resultNames.front());
    diags_.error(where, fmt::format("{} - carries {} value{}, {} result{} written", op->name(),
                                    carriedNames.size(), carriedNames.size() == 1 ? "" : "s",
                                    resultNames.size(), resultNames.size() == 1 ? "" : "s"));
    wellFormed = false;
  };

  if (auto *f = nodeAs<P::ForOpContext>(expr)) {
    op->kind = OpKind::For;
    op->loc = loc(f->KW_FOR());
    std::optional<int64_t> lb = parseInt(f->lb), ub = parseInt(f->ub);
    std::optional<int64_t> step = f->step ? parseInt(f->step) : std::optional<int64_t>(1);
    if (step && *step <= 0) {
      diags_.error(loc(f->step), fmt::format("for - step must be positive, got {}", *step));
      wellFormed = false;
    }
    wellFormed &= lb && ub && step;
    if (lb)
      op->attrs.push_back({"lower", intAttribute(*lb, loc(f->lb)), loc(f->lb)});
    if (ub)
      op->attrs.push_back({"upper", intAttribute(*ub, loc(f->ub)), loc(f->ub)});
    if (step && f->step)
      op->attrs.push_back({"step", intAttribute(*step, loc(f->step)), loc(f->step)});
    readCarry(f->carryList());
    Names args{f->VALUE()};
    args.insert(args.end(), carriedNames.begin(), carriedNames.end());
    op->body = std::make_unique<Block>();
    buildRegion(f->block(), *op->body, args, carriedNames.empty());
    Value &index = *op->body->args.front();
    index.type = TensorType{{}, DType::I64};
    index.typeKnown = true;
    carriedResults();
  } else if (auto *w = nodeAs<P::WhileOpContext>(expr)) {
    op->kind = OpKind::While;
    op->loc = loc(w->KW_WHILE());
    readCarry(w->carryList());
    op->cond = std::make_unique<Block>();
    buildRegion(w->cond, *op->cond, carriedNames, /*allowMissingReturn=*/false);
    op->body = std::make_unique<Block>();
    buildRegion(w->body, *op->body, carriedNames, carriedNames.empty());
    carriedResults();
  } else if (auto *i = nodeAs<P::IfOpContext>(expr)) {
    op->kind = OpKind::If;
    op->loc = loc(i->KW_IF());
    addOperands(*op, {i->VALUE()});
    bool hasResults = !resultNames.empty();
    op->body = std::make_unique<Block>();
    buildRegion(i->then, *op->body, {}, !hasResults);
    op->elseBody = std::make_unique<Block>();
    if (i->otherwise) {
      buildRegion(i->otherwise, *op->elseBody, {}, !hasResults);
    } else if (hasResults) {
      diags_.error(loc(i->then->getStop()), "if - has results, so it needs an else branch")
          .note(Loc{}, "write `} else { ... return ... }` returning the same types");
      wellFormed = false;
    }
    if (hasResults && !typeSpec) {
      diags_.error(loc(i->then->getStop()),
                   "if - write its result types after the closing brace: `} : TYPES`");
      wellFormed = false;
    }
  } else if (auto *c = nodeAs<P::CallOpContext>(expr)) {
    op->kind = OpKind::Call;
    op->loc = loc(c->KW_CALL());
    Attribute callee;
    callee.kind = Attribute::Kind::String;
    callee.s = c->SYMBOL()->getText().substr(1);
    callee.loc = loc(c->SYMBOL());
    op->attrs.push_back({"callee", callee, callee.loc});
    addOperands(*op, c->VALUE());
  }

  if (!wellFormed) {
    poison(resultNames);
    return;
  }
  addResults(*op, resultNames);
  applyTypeSpec(*op, buildTypeSpec(typeSpec));
  for (auto &r : op->results)
    define(r.get());
  block.ops.push_back(std::move(op));
}

} // namespace shardc::frontend
