// infer-types rules for the nullary creation ops: constant, iota,
// random_uniform and random_normal. None has an operand to infer from, so
// each requires the written result type and checks its attributes against it.
#include "passes/infer_types/InferTypesInternal.h"

#include <fmt/format.h>

namespace shardc::infer_types {
namespace {

std::optional<TensorType> inferConstant(Op &op, InferContext &ctx, const TensorType &type) {
  const Attribute *value = requireAttr(op, ctx, attrs::dense, Attribute::Kind::Dense);
  if (!value)
    return std::nullopt;
  const DenseLiteral &dense = value->dense;
  Loc loc = attrLoc(op, attrs::dense);
  // A splat fills any shape; a nested list must have the type's shape.
  if (!dense.splat && dense.shape != type.shape) {
    ctx.error(loc, fmt::format("constant - literal shape doesn't match result "
                               "type: {} vs {}",
                               formatList(dense.shape), type.str()));
    return std::nullopt;
  }
  for (const Scalar &element : dense.elements) {
    if (scalarFits(element, type.dtype))
      continue;
    ctx.error(loc, fmt::format("constant - element doesn't fit {}: {}", dtypeName(type.dtype),
                               formatScalar(element)));
    return std::nullopt;
  }
  return type;
}

std::optional<TensorType> inferIota(Op &op, InferContext &ctx, const TensorType &type) {
  std::optional<int64_t> dim = requireInt(op, ctx, attrs::dim);
  if (!dim)
    return std::nullopt;
  if (*dim < 0 || *dim >= static_cast<int64_t>(type.rank())) {
    ctx.error(attrLoc(op, attrs::dim),
              fmt::format("iota - dim out of range: {} for rank {}", *dim, type.rank()));
    return std::nullopt;
  }
  if (!checkElementType(op, ctx, writtenTypeLoc(op), type.dtype, isNumeric(type.dtype),
                        "integer or float"))
    return std::nullopt;
  return type;
}

/// An optional numeric attribute; reports a wrong kind.
bool readNumber(const Op &op, InferContext &ctx, AttrKey<double> key, double &out) {
  const std::string_view name = key.name;
  const Attribute *attr = op.attr(name);
  if (!attr)
    return true;
  if (!attr->isNumber()) {
    ctx.error(attrLoc(op, name), fmt::format("{} - {} must be a number: got {}", op.name(), name,
                                             attrKindDescription(attr->kind)));
    return false;
  }
  out = attr->number();
  return true;
}

/// random_uniform {seed, low = 0.0, high = 1.0}; random_normal {seed, mean =
/// 0.0, stddev = 1.0}. The seed is optional (0).
std::optional<TensorType> inferRandom(Op &op, InferContext &ctx, const TensorType &type) {
  if (!checkElementType(op, ctx, writtenTypeLoc(op), type.dtype, isFloat(type.dtype), "float"))
    return std::nullopt;
  if (op.attr(attrs::seed) && !requireInt(op, ctx, attrs::seed))
    return std::nullopt;
  if (op.kind == OpKind::RandomUniform) {
    double low = 0, high = 1;
    if (!readNumber(op, ctx, attrs::uniformLow, low) ||
        !readNumber(op, ctx, attrs::uniformHigh, high))
      return std::nullopt;
    if (!(low < high)) {
      ctx.error(attrLoc(op, op.attr(attrs::uniformHigh) ? "high" : "low"),
                fmt::format("random_uniform - low must be less than high: {} >= {}", low, high));
      return std::nullopt;
    }
    return type;
  }
  double mean = 0, stddev = 1;
  if (!readNumber(op, ctx, attrs::mean, mean) || !readNumber(op, ctx, attrs::stddev, stddev))
    return std::nullopt;
  if (stddev < 0) {
    ctx.error(attrLoc(op, attrs::stddev),
              fmt::format("random_normal - stddev must be non-negative: {}", stddev));
    return std::nullopt;
  }
  return type;
}

} // namespace

std::optional<TensorType> inferCreation(Op &op, InferContext &ctx) {
  const TensorType *written = requireWrittenType(op, ctx);
  if (!written)
    return std::nullopt;
  switch (op.kind) {
  case OpKind::Constant:
    return inferConstant(op, ctx, *written);
  case OpKind::Iota:
    return inferIota(op, ctx, *written);
  default:
    return inferRandom(op, ctx, *written);
  }
}

} // namespace shardc::infer_types
