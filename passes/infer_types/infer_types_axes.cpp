// infer-types rules for auto_axes and explicit_axes (LANGUAGE.md section 10).
// Unlike manual_computation, the body sees global shapes: body argument i has
// operand i's type and result i has returned value i's. Only the shardings'
// types change across the boundary (passes/explicit, mixed_axes.cpp).
#include "passes/infer_types/InferTypesInternal.h"

#include <fmt/format.h>

namespace shardc::infer_types {

void inferAxesRegion(Op &op, InferContext &ctx) {
  Block *body = op.body.get();
  if (!body)
    return;
  size_t operands = op.operands.size();
  if (body->args.size() != operands) {
    ctx.error(body->args.size() > operands ? body->args[operands]->loc : op.loc,
              fmt::format("{} - body arguments and operands count doesn't match: {} != {}",
                          op.name(), body->args.size(), operands));
  } else {
    for (size_t i = 0; i < operands; ++i) {
      const Value *operand = op.operands[i];
      const Value &arg = *body->args[i];
      if (!operand || !operand->typeKnown || !arg.typeKnown || arg.type == operand->type)
        continue;
      ctx.error(arg.writtenTypeLoc.known() ? arg.writtenTypeLoc : arg.loc,
                fmt::format("{} - body argument {} type doesn't match operand (the body sees "
                            "global shapes): {} != {}",
                            op.name(), i, arg.type.str(), operand->type.str()));
    }
  }
  inferBlock(*body, ctx);
  if (body->returned.size() != op.results.size()) {
    Loc loc = body->hasReturn ? body->returnLoc : body->endLoc;
    ctx.error(loc.known() ? loc : op.loc,
              fmt::format("{} - returned values and results count doesn't match: {} != {}",
                          op.name(), body->returned.size(), op.results.size()));
    return;
  }
  for (size_t i = 0; i < op.results.size(); ++i)
    if (const Value *v = body->returned[i]; v && v->typeKnown)
      setResultType(*op.results[i], v->type, ctx);
}

} // namespace shardc::infer_types
