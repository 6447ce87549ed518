// infer-types rules for control flow (LANGUAGE.md section 9): a loop's
// carried values keep their inits' types in every region and in its results;
// a `while` cond returns a tensor<i1>; `if`'s predicate is a tensor<i1> and
// both branches return its written result types; `call` matches the callee's
// parameters and gives its result types. The call graph is checked here too:
// callees are inferred before their callers, and recursion is an error naming
// the cycle.
#include "ir/Printer.h"
#include "passes/infer_types/InferTypesInternal.h"

#include <fmt/format.h>

#include <functional>
#include <map>
#include <set>

namespace shardc::infer_types {
namespace {

const TensorType kPredicate{{}, DType::I1};

std::string plural(size_t n, const char *word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

/// Gives `region`'s carried arguments their inits' types.
void typeCarriedArgs(const Op &op, Block &region) {
  std::vector<Value *> args = Op::carriedArgs(op, region);
  for (size_t i = 0; i < args.size() && i < op.operands.size(); ++i) {
    const Value *init = op.operands[i];
    args[i]->typeKnown = init && init->typeKnown;
    if (args[i]->typeKnown)
      args[i]->type = init->type;
  }
}

Loc returnedLoc(const Block &region, size_t i) {
  return i < region.returnedLocs.size() ? region.returnedLocs[i] : region.returnLoc;
}

/// Checks that `region` returns values of `types` (`what` names the
/// region, `slot` what each returned value is for).
void checkRegionReturns(const Op &op, const Block &region, const std::vector<TensorType> &types,
                        const char *what, const std::function<std::string(size_t)> &slot,
                        InferContext &ctx) {
  if (!region.hasReturn)
    return; // the builder reported a missing return, or none is needed
  if (region.returned.size() != types.size()) {
    ctx.error(region.returnLoc, fmt::format("{} - its {} returns {}, expected {}", op.name(), what,
                                            plural(region.returned.size(), "value"), types.size()));
    return;
  }
  for (size_t i = 0; i < types.size(); ++i) {
    const Value *v = region.returned[i];
    if (!v || !v->typeKnown || v->type == types[i])
      continue;
    ctx.error(returnedLoc(region, i),
              fmt::format("{} - its {} returns {} for {}, which is {}", op.name(), what,
                          v->type.str(), slot(i), types[i].str()));
  }
}

void inferLoop(Op &op, InferContext &ctx) {
  bool initsKnown = true;
  std::vector<TensorType> carried;
  for (const Value *init : op.operands) {
    initsKnown &= init && init->typeKnown;
    carried.push_back(init && init->typeKnown ? init->type : TensorType{});
  }
  auto slot = [&](size_t i) {
    std::vector<Value *> args = Op::carriedArgs(op, *op.body);
    return fmt::format("carried value %{}", i < args.size() ? args[i]->name : "?");
  };
  if (op.cond) {
    typeCarriedArgs(op, *op.cond);
    inferBlock(*op.cond, ctx);
    const Block &cond = *op.cond;
    if (cond.hasReturn && cond.returned.size() != 1) {
      ctx.error(cond.returnLoc, fmt::format("while - its cond region returns {}, expected one "
                                            "tensor<i1>",
                                            plural(cond.returned.size(), "value")));
    } else if (cond.hasReturn && cond.returned[0] && cond.returned[0]->typeKnown &&
               cond.returned[0]->type != kPredicate) {
      ctx.error(returnedLoc(cond, 0),
                fmt::format("while - its cond region returns {}, expected tensor<i1>",
                            cond.returned[0]->type.str()));
    }
  }
  typeCarriedArgs(op, *op.body);
  inferBlock(*op.body, ctx);
  if (initsKnown)
    checkRegionReturns(op, *op.body, carried, "body", slot, ctx);
  if (!initsKnown)
    return;
  for (size_t i = 0; i < op.results.size() && i < carried.size(); ++i)
    setResultType(*op.results[i], carried[i], ctx);
}

void inferIf(Op &op, InferContext &ctx) {
  const Value *pred = op.operands[0];
  if (pred && pred->typeKnown && pred->type != kPredicate) {
    auto diag = ctx.error(operandLoc(op, 0), fmt::format("if - predicate must be tensor<i1>: "
                                                         "%{} is {}",
                                                         pred->name, pred->type.str()));
    noteDefinition(diag, *pred);
  }
  inferBlock(*op.body, ctx);
  inferBlock(*op.elseBody, ctx);
  std::vector<TensorType> types;
  for (const auto &r : op.results) {
    if (!r->writtenType)
      return; // the builder asked for the types
    types.push_back(*r->writtenType);
  }
  auto slot = [](size_t i) { return fmt::format("result {}", i); };
  checkRegionReturns(op, *op.body, types, "then branch", slot, ctx);
  checkRegionReturns(op, *op.elseBody, types, "else branch", slot, ctx);
  for (size_t i = 0; i < types.size(); ++i)
    setResultType(*op.results[i], types[i], ctx);
}

void inferCall(Op &op, InferContext &ctx) {
  std::string name = op.get(attrs::callee, "");
  const Function *callee = ctx.module.findFunction(name);
  if (!callee) {
    std::vector<std::string> names;
    for (const auto &f : ctx.module.functions)
      names.push_back(f->name);
    auto diag =
        ctx.error(attrLoc(op, attrs::callee), fmt::format("call - unknown function @{}", name));
    std::string guess = closestMatch(name, names);
    if (!guess.empty())
      diag.note(Loc{}, fmt::format("did you mean @{}?", guess));
    return;
  }
  const Block &body = callee->body;
  if (op.operands.size() != body.args.size()) {
    ctx.error(op.loc, fmt::format("call - @{} takes {}, {} given", name,
                                  plural(body.args.size(), "argument"), op.operands.size()))
        .note(callee->loc, fmt::format("@{} is declared here", name));
    return;
  }
  bool ok = true;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const Value *arg = op.operands[i];
    const Value &param = *body.args[i];
    if (!arg || !arg->typeKnown || !param.typeKnown || arg->type == param.type)
      continue;
    ok = false;
    ctx.error(operandLoc(op, i), fmt::format("call - argument {} of @{} is {}, expected {}", i,
                                             name, arg->type.str(), param.type.str()))
        .note(param.loc, fmt::format("parameter %{} is declared here", param.name));
  }
  if (op.results.size() != callee->results.size()) {
    ctx.error(op.loc, fmt::format("call - @{} returns {}, {} written", name,
                                  plural(callee->results.size(), "value"), op.results.size()))
        .note(callee->loc, fmt::format("@{} is declared here", name));
    return;
  }
  if (!ok)
    return;
  for (size_t i = 0; i < op.results.size(); ++i)
    if (!callee->results[i].typeInvalid)
      setResultType(*op.results[i], callee->results[i].type, ctx);
}

} // namespace

void inferControlFlow(Op &op, InferContext &ctx) {
  switch (op.kind) {
  case OpKind::For:
  case OpKind::While:
    inferLoop(op, ctx);
    break;
  case OpKind::If:
    inferIf(op, ctx);
    break;
  default:
    inferCall(op, ctx);
    break;
  }
}

std::vector<Function *> calleesFirst(Module &module, InferContext &ctx) {
  // Depth-first over the call graph; a call back into a function still on
  // the stack closes a cycle.
  std::vector<Function *> order;
  std::map<const Function *, int> state; // 1: on the stack, 2: done
  std::vector<std::pair<const Function *, const Op *>> stack;
  std::function<void(Function &)> visit = [&](Function &f) {
    state[&f] = 1;
    walkOps(f.body, [&](Op &op) {
      if (op.kind != OpKind::Call)
        return;
      Function *callee = module.findFunction(op.get(attrs::callee, ""));
      if (!callee)
        return;
      if (state[callee] == 1) {
        std::string cycle;
        bool inCycle = false;
        for (const auto &[caller, call] : stack) {
          inCycle |= caller == callee;
          if (inCycle)
            cycle += "@" + caller->name + " -> ";
        }
        cycle += "@" + f.name + " -> @" + callee->name;
        ctx.error(op.loc, fmt::format("call - recursion is not allowed: {}", cycle))
            .note(callee->loc, fmt::format("@{} is declared here", callee->name));
        return;
      }
      if (state[callee] == 0) {
        stack.emplace_back(&f, &op);
        visit(*callee);
        stack.pop_back();
      }
    });
    state[&f] = 2;
    order.push_back(&f);
  };
  for (auto &f : module.functions)
    if (state[f.get()] == 0)
      visit(*f);
  return order;
}

} // namespace shardc::infer_types
