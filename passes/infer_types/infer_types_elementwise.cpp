// infer-types rules for the elementwise ops: unary, convert, the binary ops
// with numpy/ONNX broadcasting, and select.
//
// Element types (decided here, LANGUAGE.md leaves them open):
//   - transcendental and rounding ops (exp log sqrt rsqrt tanh sigmoid sin cos
//     erf floor ceil round reciprocal) need a float: on integers they would
//     either truncate silently or mean something else;
//   - abs neg sign relu and the arithmetic binary ops need a number (not i1);
//   - not and or xor need i1 or an integer (logical on i1, bitwise otherwise);
//   - comparisons take any element type and give i1; identity takes anything.
#include "passes/infer_types/InferTypesInternal.h"

#include <fmt/format.h>

namespace shardc::infer_types {
namespace {

enum class Accepts { Float, Numeric, Logical, Any };

Accepts unaryAccepts(OpKind kind) {
  switch (kind) {
  case OpKind::Abs:
  case OpKind::Neg:
  case OpKind::Sign:
  case OpKind::Relu:
    return Accepts::Numeric;
  case OpKind::Not:
    return Accepts::Logical;
  case OpKind::Identity:
    return Accepts::Any;
  default:
    return Accepts::Float;
  }
}

Accepts binaryAccepts(OpKind kind) {
  switch (kind) {
  case OpKind::And:
  case OpKind::Or:
  case OpKind::Xor:
    return Accepts::Logical;
  case OpKind::Eq:
  case OpKind::Ne:
  case OpKind::Lt:
  case OpKind::Le:
  case OpKind::Gt:
  case OpKind::Ge:
    return Accepts::Any;
  default:
    return Accepts::Numeric;
  }
}

bool isComparison(OpKind kind) {
  return kind == OpKind::Eq || kind == OpKind::Ne || kind == OpKind::Lt || kind == OpKind::Le ||
         kind == OpKind::Gt || kind == OpKind::Ge;
}

bool checkAccepts(const Op &op, InferContext &ctx, Accepts accepts, DType dtype) {
  Loc loc = operandLoc(op, 0);
  switch (accepts) {
  case Accepts::Float:
    return checkElementType(op, ctx, loc, dtype, isFloat(dtype), "float");
  case Accepts::Numeric:
    return checkElementType(op, ctx, loc, dtype, isNumeric(dtype), "integer or float");
  case Accepts::Logical:
    return checkElementType(op, ctx, loc, dtype, !isFloat(dtype), "i1 or integer");
  case Accepts::Any:
    return true;
  }
  return true;
}

std::optional<TensorType> inferConvert(Op &op, InferContext &ctx) {
  const TensorType *written = requireWrittenType(op, ctx);
  if (!written)
    return std::nullopt;
  const TensorType &input = op.operands[0]->type;
  if (written->shape != input.shape) {
    ctx.error(writtenTypeLoc(op), fmt::format("convert - shape must not change: {} -> {}",
                                              input.str(), written->str()));
    return std::nullopt;
  }
  return *written;
}

/// Every operand must have the element type of operand `first`.
bool checkSameDType(const Op &op, InferContext &ctx, size_t first) {
  DType dtype = op.operands[first]->type.dtype;
  for (size_t i = first + 1; i < op.operands.size(); ++i) {
    DType other = op.operands[i]->type.dtype;
    if (other == dtype)
      continue;
    auto diag =
        ctx.error(operandLoc(op, i), fmt::format("{} - operand element types differ: {} vs {}",
                                                 op.name(), dtypeName(dtype), dtypeName(other)));
    noteDefinition(diag, *op.operands[i]);
    return false;
  }
  return true;
}

/// Broadcasts operands [first, end) together, left to right (ONNX group 2:
/// composition of broadcast axes is the fold of pairwise broadcasting).
std::optional<std::vector<int64_t>> broadcastOperands(const Op &op, InferContext &ctx,
                                                      size_t first) {
  std::vector<int64_t> shape = op.operands[first]->type.shape;
  for (size_t i = first + 1; i < op.operands.size(); ++i) {
    const TensorType &type = op.operands[i]->type;
    std::optional<std::vector<int64_t>> next = broadcastShapes(shape, type.shape);
    if (!next) {
      TensorType sofar{shape, op.operands[first]->type.dtype};
      auto diag = ctx.error(op.loc, fmt::format("{} - shapes are not "
                                                "broadcast-compatible: {} vs {}",
                                                op.name(), sofar.str(), type.str()));
      noteDefinition(diag, *op.operands[i]);
      return std::nullopt;
    }
    shape = std::move(*next);
  }
  return shape;
}

std::optional<TensorType> inferSelect(Op &op, InferContext &ctx) {
  const TensorType &pred = op.operands[0]->type;
  if (pred.dtype != DType::I1) {
    ctx.error(operandLoc(op, 0), fmt::format("select - predicate must be i1: {}", pred.str()));
    return std::nullopt;
  }
  if (!checkSameDType(op, ctx, 1))
    return std::nullopt;
  std::optional<std::vector<int64_t>> shape = broadcastOperands(op, ctx, 0);
  if (!shape)
    return std::nullopt;
  return TensorType{*shape, op.operands[1]->type.dtype};
}

} // namespace

std::optional<TensorType> inferElementwise(Op &op, InferContext &ctx) {
  if (op.kind == OpKind::Convert)
    return inferConvert(op, ctx);
  if (op.kind == OpKind::Select)
    return inferSelect(op, ctx);

  const TensorType &first = op.operands[0]->type;
  if (opInfo(op.kind).group == OpGroup::Unary) {
    if (!checkAccepts(op, ctx, unaryAccepts(op.kind), first.dtype))
      return std::nullopt;
    return first;
  }

  if (!checkSameDType(op, ctx, 0) || !checkAccepts(op, ctx, binaryAccepts(op.kind), first.dtype))
    return std::nullopt;
  std::optional<std::vector<int64_t>> shape = broadcastOperands(op, ctx, 0);
  if (!shape)
    return std::nullopt;
  return TensorType{*shape, isComparison(op.kind) ? DType::I1 : first.dtype};
}

} // namespace shardc::infer_types
