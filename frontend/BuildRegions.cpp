// IR builder, part 4: the axis-type regions auto_axes and explicit_axes
// (LANGUAGE.md section 10). Their body is isolated from above, like a
// manual_computation's; which sharding list each needs is the verifier's.
#include "frontend/IRBuilder.h"

namespace shardc::frontend {

void IRBuilder::buildAxesRegion(Op &op, P::AxesOpContext *ctx) {
  op.kind = ctx->name->getType() == P::KW_AUTO_AXES ? OpKind::AutoAxes : OpKind::ExplicitAxes;
  op.loc = loc(ctx->name);
  addOperands(op, ctx->VALUE());
  Attribute axes;
  axes.kind = Attribute::Kind::AxisSet;
  axes.loc = loc(ctx->axisSet());
  axes.axes = buildAxisSet(ctx->axisSet());
  op.attrs.push_back({"axes", axes, loc(ctx->KW_AXES())});
  auto shardingList = [&](const char *name, antlr4::tree::TerminalNode *key,
                          P::ShardingListContext *list) {
    if (!list)
      return;
    Attribute a;
    a.kind = Attribute::Kind::ShardingList;
    a.loc = loc(list);
    for (P::ShardingContext *sc : list->sharding())
      a.shardings.push_back(buildSharding(sc));
    op.attrs.push_back({name, a, loc(key)});
  };
  shardingList("in_shardings", ctx->KW_IN_SHARDINGS(), ctx->ins);
  shardingList("out_shardings", ctx->KW_OUT_SHARDINGS(), ctx->outs);
  op.body = std::make_unique<Block>();
  std::vector<Scope> outer;
  std::swap(outer, scopes_);
  for (const Scope &scope : outer)
    hiddenScopes_.push_back(&scope);
  scopes_.emplace_back();
  for (P::ParamContext *p : ctx->param())
    addParam(*op.body, p->VALUE(), buildAnnotated(p->annotatedType()));
  buildBlock(ctx->block(), *op.body, /*allowMissingReturn=*/false);
  hiddenScopes_.resize(hiddenScopes_.size() - outer.size());
  std::swap(outer, scopes_);
}

} // namespace shardc::frontend
