// infer-types rules for the shape ops: reshape, transpose, broadcast, concat,
// slice and pad. reshape and broadcast cannot infer their result and check
// the written one instead.
//
// Decisions: pad takes non-negative low/high only (XLA's negative padding
// crops, which `slice` already says plainly) and `value` defaults to 0;
// slice's `stride` defaults to all 1s.
#include "passes/infer_types/InferTypesInternal.h"

#include <fmt/format.h>

namespace shardc::infer_types {
namespace {

int64_t rankOf(const TensorType &type) { return static_cast<int64_t>(type.rank()); }

bool checkSameDType(const Op &op, InferContext &ctx, const TensorType &input,
                    const TensorType &written) {
  if (input.dtype == written.dtype)
    return true;
  ctx.error(writtenTypeLoc(op),
            fmt::format("{} - element type must not change: {} -> {}", op.name(),
                        dtypeName(input.dtype), dtypeName(written.dtype)));
  return false;
}

/// An int-list attribute with one entry per dim of a rank-`rank` tensor.
std::optional<std::vector<int64_t>> perDimList(const Op &op, InferContext &ctx,
                                               AttrKey<std::vector<int64_t>> key, size_t rank) {
  const std::string_view name = key.name;
  std::optional<std::vector<int64_t>> values = requireIntList(op, ctx, key);
  if (values && values->size() != rank) {
    ctx.error(attrLoc(op, name), fmt::format("{} - {} size doesn't match rank: {} != {}", op.name(),
                                             name, values->size(), rank));
    return std::nullopt;
  }
  return values;
}

std::optional<TensorType> inferReshape(Op &op, InferContext &ctx) {
  const TensorType *written = requireWrittenType(op, ctx);
  const TensorType &input = op.operands[0]->type;
  if (!written || !checkSameDType(op, ctx, input, *written))
    return std::nullopt;
  if (written->numElements() != input.numElements()) {
    ctx.error(writtenTypeLoc(op),
              fmt::format("reshape - element count doesn't match: {} ({}) vs {} ({})", input.str(),
                          input.numElements(), written->str(), written->numElements()));
    return std::nullopt;
  }
  return *written;
}

std::optional<TensorType> inferTranspose(Op &op, InferContext &ctx) {
  const TensorType &input = op.operands[0]->type;
  std::optional<std::vector<int64_t>> perm = perDimList(op, ctx, attrs::perm, input.rank());
  if (!perm)
    return std::nullopt;
  std::vector<bool> seen(input.rank(), false);
  TensorType result{{}, input.dtype};
  for (int64_t p : *perm) {
    if (p < 0 || p >= rankOf(input) || seen[p]) {
      ctx.error(attrLoc(op, attrs::perm),
                fmt::format("transpose - perm is not a permutation of 0..{}: {}", rankOf(input) - 1,
                            formatList(*perm)));
      return std::nullopt;
    }
    seen[p] = true;
    result.shape.push_back(input.shape[p]);
  }
  return result;
}

/// Operand dim i goes to result dim dims[i] (XLA broadcast_in_dim); every
/// other result dim is new.
std::optional<TensorType> inferBroadcast(Op &op, InferContext &ctx) {
  const TensorType *written = requireWrittenType(op, ctx);
  const TensorType &input = op.operands[0]->type;
  if (!written || !checkSameDType(op, ctx, input, *written))
    return std::nullopt;
  std::optional<std::vector<int64_t>> dims = requireIntList(op, ctx, attrs::dims);
  if (!dims)
    return std::nullopt;
  Loc loc = attrLoc(op, attrs::dims);
  if (dims->size() != input.rank()) {
    ctx.error(loc, fmt::format("broadcast - dims size doesn't match operand rank: "
                               "{} != {}",
                               dims->size(), input.rank()));
    return std::nullopt;
  }
  for (size_t i = 0; i < dims->size(); ++i) {
    int64_t d = (*dims)[i];
    if (d < 0 || d >= rankOf(*written)) {
      ctx.error(
          attrElementLoc(op, attrs::dims, i),
          fmt::format("broadcast - dims out of range: {} for result rank {}", d, written->rank()));
      return std::nullopt;
    }
    if (i > 0 && d <= (*dims)[i - 1]) {
      ctx.error(attrElementLoc(op, attrs::dims, i),
                fmt::format("broadcast - dims must be strictly increasing: {}", formatList(*dims)));
      return std::nullopt;
    }
    int64_t from = input.shape[i], to = written->shape[d];
    if (from != to && from != 1) {
      ctx.error(attrElementLoc(op, attrs::dims, i),
                fmt::format("broadcast - operand dim {} can't broadcast to "
                            "result dim {}: {} vs {}",
                            i, d, from, to));
      return std::nullopt;
    }
  }
  return *written;
}

std::optional<TensorType> inferConcat(Op &op, InferContext &ctx) {
  const TensorType &first = op.operands[0]->type;
  std::optional<int64_t> dim = requireInt(op, ctx, attrs::dim);
  if (!dim)
    return std::nullopt;
  if (*dim < 0 || *dim >= rankOf(first)) {
    ctx.error(attrLoc(op, attrs::dim),
              fmt::format("concat - dim out of range: {} for rank {}", *dim, first.rank()));
    return std::nullopt;
  }
  TensorType result = first;
  for (size_t i = 1; i < op.operands.size(); ++i) {
    const TensorType &type = op.operands[i]->type;
    if (type.dtype != first.dtype) {
      ctx.error(operandLoc(op, i), fmt::format("concat - operand element types differ: {} vs {}",
                                               dtypeName(first.dtype), dtypeName(type.dtype)));
      return std::nullopt;
    }
    if (type.rank() != first.rank()) {
      ctx.error(operandLoc(op, i), fmt::format("concat - operand {} rank doesn't match: {} != {}",
                                               i, type.rank(), first.rank()));
      return std::nullopt;
    }
    for (int64_t d = 0; d < rankOf(first); ++d) {
      if (d == *dim || type.shape[d] == first.shape[d])
        continue;
      ctx.error(operandLoc(op, i), fmt::format("concat - operand {} dim {} doesn't match: {} != {}",
                                               i, d, type.shape[d], first.shape[d]));
      return std::nullopt;
    }
    result.shape[*dim] = saturatingAdd(result.shape[*dim], type.shape[*dim]);
  }
  return result;
}

std::optional<TensorType> inferSlice(Op &op, InferContext &ctx) {
  const TensorType &input = op.operands[0]->type;
  auto start = perDimList(op, ctx, attrs::start, input.rank());
  auto limit = perDimList(op, ctx, attrs::limit, input.rank());
  std::optional<std::vector<int64_t>> stride(std::vector<int64_t>(input.rank(), 1));
  if (op.attr(attrs::stride))
    stride = perDimList(op, ctx, attrs::stride, input.rank());
  if (!start || !limit || !stride)
    return std::nullopt;
  TensorType result{{}, input.dtype};
  for (size_t d = 0; d < input.rank(); ++d) {
    int64_t lo = (*start)[d], hi = (*limit)[d], step = (*stride)[d];
    if (lo < 0 || lo > hi || hi > input.shape[d]) {
      ctx.error(attrElementLoc(op, hi > input.shape[d] ? "limit" : "start", d),
                fmt::format("slice - bounds out of range on dim {}: "
                            "start {}, limit {}, size {}",
                            d, lo, hi, input.shape[d]));
      return std::nullopt;
    }
    if (step < 1) {
      ctx.error(attrElementLoc(op, attrs::stride, d),
                fmt::format("slice - stride must be positive on dim {}: {}", d, step));
      return std::nullopt;
    }
    // ceil((hi - lo) / step), without overflowing for a huge stride
    result.shape.push_back((hi - lo) / step + ((hi - lo) % step != 0));
  }
  return result;
}

std::optional<TensorType> inferPad(Op &op, InferContext &ctx) {
  const TensorType &input = op.operands[0]->type;
  auto low = perDimList(op, ctx, attrs::padLow, input.rank());
  auto high = perDimList(op, ctx, attrs::padHigh, input.rank());
  if (!low || !high)
    return std::nullopt;
  if (const Attribute *value = op.attr(attrs::padValue)) {
    Scalar scalar;
    if (value->kind == Attribute::Kind::Int) {
      scalar.i = value->i;
    } else if (value->kind == Attribute::Kind::Float) {
      scalar.isFloat = true;
      scalar.f = value->f;
    } else if (value->kind == Attribute::Kind::Bool) {
      scalar.isBool = true;
      scalar.i = value->b;
    } else {
      ctx.error(attrLoc(op, attrs::padValue), fmt::format("pad - value must be a number: got {}",
                                                          attrKindDescription(value->kind)));
      return std::nullopt;
    }
    if (!scalarFits(scalar, input.dtype)) {
      ctx.error(attrLoc(op, attrs::padValue),
                fmt::format("pad - value doesn't fit element type {}: {}", dtypeName(input.dtype),
                            formatScalar(scalar)));
      return std::nullopt;
    }
  }
  TensorType result{{}, input.dtype};
  for (size_t d = 0; d < input.rank(); ++d) {
    for (auto [name, amount] : {std::pair{"low", (*low)[d]}, {"high", (*high)[d]}}) {
      if (amount >= 0)
        continue;
      ctx.error(attrElementLoc(op, name, d),
                fmt::format("pad - {} must be non-negative on dim {}: {}", name, d, amount))
          .note(Loc{}, "use slice to drop elements");
      return std::nullopt;
    }
    result.shape.push_back(saturatingAdd(saturatingAdd((*low)[d], input.shape[d]), (*high)[d]));
  }
  return result;
}

} // namespace

std::optional<TensorType> inferShapeOp(Op &op, InferContext &ctx) {
  switch (op.kind) {
  case OpKind::Reshape:
    return inferReshape(op, ctx);
  case OpKind::Transpose:
    return inferTranspose(op, ctx);
  case OpKind::Broadcast:
    return inferBroadcast(op, ctx);
  case OpKind::Concat:
    return inferConcat(op, ctx);
  case OpKind::Slice:
    return inferSlice(op, ctx);
  case OpKind::Pad:
    return inferPad(op, ctx);
  default:
    return std::nullopt;
  }
}

} // namespace shardc::infer_types
