// infer-types: gives every op result its tensor type and checks the types the
// user wrote (results, MLIR functional-form operands, returns). The per-op
// rules live in infer_types_<group>.cpp, locations and attribute readers in
// infer_types_attributes.cpp; this file walks the blocks and holds the type
// helpers the rules share (element types, literals, broadcasting, sizes).
//
// Error policy: report as many independent errors as possible in one run, but
// never the same mistake twice. A result whose type cannot be inferred stays
// `typeKnown = false`, and any op that uses it is skipped silently.
#include "passes/infer_types/InferTypes.h"
#include "passes/infer_types/InferTypesInternal.h"

#include <fmt/format.h>

#include <climits>

namespace shardc {
namespace infer_types {

// ---- type helpers ----------------------------------------------------------------

bool checkElementType(const Op &op, InferContext &ctx, Loc loc, DType dtype, bool ok,
                      const char *what) {
  if (!ok)
    ctx.error(loc,
              fmt::format("{} - element type must be {}: {}", op.name(), what, dtypeName(dtype)));
  return ok;
}

bool scalarFits(const Scalar &value, DType dtype) {
  if (value.isBool)
    return dtype == DType::I1;
  if (value.isFloat)
    return isFloat(dtype);
  switch (dtype) {
  case DType::F32:
  case DType::F64:
  case DType::I64:
    return true;
  case DType::I32:
    return value.i >= INT32_MIN && value.i <= INT32_MAX;
  case DType::I1:
    return value.i == 0 || value.i == 1;
  }
  return false;
}

std::string formatScalar(const Scalar &value) {
  if (value.isBool)
    return value.i ? "true" : "false";
  if (value.isFloat)
    return fmt::format("{}", value.f);
  return std::to_string(value.i);
}

int64_t saturatingAdd(int64_t a, int64_t b) {
  int64_t sum;
  return __builtin_add_overflow(a, b, &sum) ? INT64_MAX : sum;
}

int64_t saturatingMul(int64_t a, int64_t b) {
  int64_t product;
  return __builtin_mul_overflow(a, b, &product) ? INT64_MAX : product;
}

std::optional<std::vector<int64_t>> broadcastShapes(const std::vector<int64_t> &a,
                                                    const std::vector<int64_t> &b) {
  const std::vector<int64_t> &longer = a.size() >= b.size() ? a : b;
  const std::vector<int64_t> &shorter = a.size() >= b.size() ? b : a;
  std::vector<int64_t> result = longer;
  size_t offset = longer.size() - shorter.size();
  for (size_t i = 0; i < shorter.size(); ++i) {
    int64_t x = longer[offset + i], y = shorter[i];
    if (x == y || y == 1)
      continue;
    if (x != 1)
      return std::nullopt;
    result[offset + i] = y;
  }
  return result;
}

namespace {

// The cap of parseTensorType: every later stage may multiply dims freely.
constexpr int64_t kMaxElements = int64_t(1) << 62;

bool tooLarge(const TensorType &type) {
  int64_t elements = 1;
  bool huge = false;
  for (int64_t d : type.shape) {
    huge = huge || d > kMaxElements;
    elements = saturatingMul(elements, d);
  }
  return huge || elements > kMaxElements;
}

} // namespace

void setResultType(Value &result, const TensorType &inferred, InferContext &ctx) {
  if (tooLarge(inferred)) {
    Loc loc = result.definingOp ? result.definingOp->loc : result.loc;
    ctx.error(loc, fmt::format("{} - result type is too large: more than 2^62 elements",
                               result.definingOp ? result.definingOp->name() : "op"));
    return;
  }
  // On a mismatch the inferred type wins: it is what the op computes, so the
  // ops after this one are checked against reality, not against the typo.
  if (result.writtenType && *result.writtenType != inferred) {
    Loc loc = result.writtenTypeLoc.known() ? result.writtenTypeLoc : result.loc;
    ctx.error(loc, fmt::format("result type doesn't match inferred type: {} != {}",
                               result.writtenType->str(), inferred.str()));
  }
  result.type = inferred;
  result.typeKnown = true;
}

// ---- the walk ----------------------------------------------------------------------

namespace {

/// Whether every operand has a type. An op result without one had its error
/// reported already; a seed-style declaration with only a sharding
/// (`%v : sharding<...>`) is reported here, at its first use.
bool operandsKnown(const Op &op, InferContext &ctx) {
  bool known = true;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const Value *operand = op.operands[i];
    if (operand && operand->typeKnown)
      continue;
    known = false;
    // A parameter whose written type failed to decode was reported already.
    if (!operand || !operand->isParameter() || operand->writtenTypeLoc.known() ||
        !ctx.reportedUntyped.insert(operand).second)
      continue;
    ctx.error(operandLoc(op, i),
              fmt::format("{} - operand {} has no type: %{}", op.name(), i, operand->name))
        .note(operand->loc, fmt::format("%{} is declared here with a sharding only; "
                                        "write its type too: %{} : sharding<...> : "
                                        "tensor<...>",
                                        operand->name, operand->name));
  }
  return known;
}

/// MLIR's functional form `(T1, T2) -> T3` writes the operand types too.
void checkWrittenOperandTypes(const Op &op, InferContext &ctx) {
  if (op.writtenOperandTypes.empty() && !op.writtenOperandTypesLoc.known())
    return;
  Loc loc = op.writtenOperandTypesLoc.known() ? op.writtenOperandTypesLoc : op.loc;
  // The builder leaves out the types it could not decode: the list is off.
  if (op.typeSpecInvalid)
    return;
  if (op.writtenOperandTypes.size() != op.operands.size()) {
    ctx.error(loc, fmt::format("{} - number of operand types doesn't match "
                               "operands: {} != {}",
                               op.name(), op.writtenOperandTypes.size(), op.operands.size()));
    return;
  }
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const Value *operand = op.operands[i];
    if (!operand || !operand->typeKnown || operand->type == op.writtenOperandTypes[i])
      continue;
    auto diag = ctx.error(loc, fmt::format("{} - operand {} type doesn't match "
                                           "written type: {} != {}",
                                           op.name(), i, operand->type.str(),
                                           op.writtenOperandTypes[i].str()));
    noteDefinition(diag, *operand);
  }
}

std::optional<TensorType> inferSingleResult(Op &op, InferContext &ctx) {
  switch (opInfo(op.kind).group) {
  case OpGroup::Unary:
  case OpGroup::Convert:
  case OpGroup::Binary:
    return inferElementwise(op, ctx);
  case OpGroup::Contraction:
    return inferContraction(op, ctx);
  case OpGroup::Reduction:
    return inferReduction(op, ctx);
  case OpGroup::Shape:
    return inferShapeOp(op, ctx);
  case OpGroup::Creation:
    return inferCreation(op, ctx);
  case OpGroup::ShardingOp:
  case OpGroup::Collective:
    return inferShardingOrCollective(op, ctx);
  case OpGroup::Manual:
  case OpGroup::ControlFlow:
    break; // handled by inferOp
  }
  return std::nullopt;
}

void inferOp(Op &op, InferContext &ctx) {
  for (auto &result : op.results)
    result->typeKnown = false;
  if (op.kind == OpKind::ManualComputation) {
    if (operandsKnown(op, ctx))
      checkWrittenOperandTypes(op, ctx);
    inferManualComputation(op, ctx);
    return;
  }
  if (op.kind == OpKind::AutoAxes || op.kind == OpKind::ExplicitAxes) {
    if (operandsKnown(op, ctx))
      checkWrittenOperandTypes(op, ctx);
    inferAxesRegion(op, ctx);
    return;
  }
  if (isControlFlow(op.kind)) {
    inferControlFlow(op, ctx);
    return;
  }
  if (!operandsKnown(op, ctx))
    return;
  checkWrittenOperandTypes(op, ctx);
  if (op.results.size() != 1) {
    ctx.error(op.loc,
              fmt::format("{} - wrong number of results: {} != 1", op.name(), op.results.size()));
    return;
  }
  if (std::optional<TensorType> type = inferSingleResult(op, ctx))
    setResultType(*op.results.front(), *type, ctx);
}

/// `return %a, %b : T1, T2` writes the returned types.
void checkReturnTypes(const Block &block, InferContext &ctx) {
  if (!block.hasReturn || block.returnTypes.empty() || block.returnTypesInvalid)
    return;
  if (block.returnTypes.size() != block.returned.size()) {
    ctx.error(block.returnLoc,
              fmt::format("return - number of types doesn't match values: {} != {}",
                          block.returnTypes.size(), block.returned.size()));
    return;
  }
  for (size_t i = 0; i < block.returned.size(); ++i) {
    const Value *value = block.returned[i];
    if (!value || !value->typeKnown || value->type == block.returnTypes[i])
      continue;
    Loc loc = i < block.returnedLocs.size() ? block.returnedLocs[i] : block.returnLoc;
    ctx.error(loc, fmt::format("return - value {} type doesn't match written type: "
                               "{} != {}",
                               i, value->type.str(), block.returnTypes[i].str()));
  }
}

/// The returned values against `-> (T1, T2)`. A function that writes no
/// result types returns whatever its `return` gives.
void checkFunctionResults(Function &func, InferContext &ctx) {
  Block &body = func.body;
  if (!func.resultsWritten) {
    std::vector<ResultSpec> results;
    for (size_t i = 0; i < body.returned.size(); ++i) {
      const Value *value = body.returned[i];
      if (!value || !value->typeKnown)
        return; // reported where the value was defined
      Loc loc = i < body.returnedLocs.size() ? body.returnedLocs[i] : body.returnLoc;
      results.push_back(ResultSpec{value->type, std::nullopt, loc});
    }
    func.results = std::move(results);
    return;
  }
  if (!body.hasReturn)
    return; // the builder reports a missing return
  if (body.returned.size() != func.results.size()) {
    ctx.error(body.returnLoc, fmt::format("return - number of values doesn't match function "
                                          "results: {} != {}",
                                          body.returned.size(), func.results.size()))
        .note(func.loc, fmt::format("@{} is declared here", func.name));
    return;
  }
  for (size_t i = 0; i < body.returned.size(); ++i) {
    const Value *value = body.returned[i];
    const TensorType &declared = func.results[i].type;
    if (!value || !value->typeKnown || value->type == declared || func.results[i].typeInvalid)
      continue;
    Loc loc = i < body.returnedLocs.size() ? body.returnedLocs[i] : body.returnLoc;
    ctx.error(loc, fmt::format("return - value {} type doesn't match function "
                               "result: {} != {}",
                               i, value->type.str(), declared.str()))
        .note(func.results[i].loc.known() ? func.results[i].loc : func.loc,
              fmt::format("result {} is declared here", i));
  }
}

} // namespace

void inferBlock(Block &block, InferContext &ctx) {
  for (auto &op : block.ops)
    inferOp(*op, ctx);
  checkReturnTypes(block, ctx);
}

} // namespace infer_types

bool inferTypes(Module &module, DiagnosticEngine &diags) {
  using namespace infer_types;
  InferContext ctx(module, diags);
  for (Function *func : calleesFirst(module, ctx)) {
    inferBlock(func->body, ctx);
    checkFunctionResults(*func, ctx);
  }
  inferBlock(module.snippet.body, ctx);
  return !ctx.failed;
}

} // namespace shardc
