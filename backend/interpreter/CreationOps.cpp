// Creation ops: constant (splat or dense), iota, random_uniform and
// random_normal. Random values depend only on (seed, linear index in the
// op's result), Random.h, so they are the same wherever they are computed.
#include "backend/interpreter/InterpreterInternal.h"
#include "backend/interpreter/Random.h"

#include <cmath>

namespace shardc::interp::detail {
namespace {

void store(Tensor &t, int64_t i, const Scalar &s) {
  if (t.holdsFloats())
    t.setFloat(i, s.asDouble());
  else
    t.setInt(i, static_cast<uint64_t>(s.i));
}

Tensor constant(const Op &op, const TensorType &type) {
  const Attribute *value = op.attr(attrs::dense);
  if (!value || value->kind != Attribute::Kind::Dense ||
      (value->dense.splat && value->dense.elements.empty()))
    fail(op, "missing attribute: value");
  const DenseLiteral &dense = value->dense;
  Tensor t(type);
  if (!dense.splat && static_cast<int64_t>(dense.elements.size()) != t.size())
    fail(op, "literal shape doesn't match result type");
  for (int64_t i = 0; i < t.size(); ++i)
    store(t, i, dense.elements[dense.splat ? 0 : i]);
  return t;
}

Tensor iota(const Op &op, const TensorType &type) {
  const Attribute *dim = op.attr(attrs::dim);
  if (!dim || dim->kind != Attribute::Kind::Int || dim->i < 0 ||
      dim->i >= static_cast<int64_t>(type.rank()))
    fail(op, "dim out of range");
  Tensor t(type);
  forEachIndex(type.shape, [&](const std::vector<int64_t> &index, int64_t linear) {
    int64_t v = index[dim->i];
    if (t.holdsFloats())
      t.setFloat(linear, static_cast<double>(v));
    else
      t.setInt(linear, static_cast<uint64_t>(v));
  });
  return t;
}

Tensor random(const Op &op, const TensorType &type) {
  const Attribute *seedAttr = op.attr(attrs::seed);
  uint64_t seed =
      seedAttr && seedAttr->kind == Attribute::Kind::Int ? static_cast<uint64_t>(seedAttr->i) : 0;
  Tensor t(type);
  if (!t.holdsFloats())
    fail(op, "element type must be a float");
  for (int64_t i = 0; i < t.size(); ++i) {
    if (op.kind == OpKind::RandomNormal) {
      double mean = op.get(attrs::mean, 0), stddev = op.get(attrs::stddev, 1);
      t.setFloat(i, mean + stddev * randomStandardNormal(seed, static_cast<uint64_t>(i)));
      continue;
    }
    double low = op.get(attrs::uniformLow, 0), high = op.get(attrs::uniformHigh, 1);
    t.setFloat(i, low + (high - low) * randomUnit(seed, static_cast<uint64_t>(i)));
    // Rounding to f32 (or low + (high-low)*u in double) can land on `high`
    // itself; the range is [low, high).
    if (t.floatAt(i) >= high)
      t.setFloat(i, t.dtype() == DType::F32
                        ? std::nextafter(static_cast<float>(high), static_cast<float>(low))
                        : std::nextafter(high, low));
  }
  return t;
}

} // namespace

Tensor evalCreation(const Op &op) {
  const TensorType &type = op.result()->type;
  switch (op.kind) {
  case OpKind::Constant:
    return constant(op, type);
  case OpKind::Iota:
    return iota(op, type);
  default:
    return random(op, type);
  }
}

} // namespace shardc::interp::detail
