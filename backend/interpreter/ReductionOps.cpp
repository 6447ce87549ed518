// Reductions: reduce_sum, reduce_max, reduce_min, reduce_mean over `dims`,
// with `keep_dims`. Floats accumulate in double and round once; integers
// accumulate in uint64 and wrap. max/min propagate NaN; an empty reduction
// gives the identity (0, -inf/+inf or the integer type's min/max; mean: NaN).
// An integer mean is the sum, wrapped to the type, divided by the count like
// integer `div` (truncated toward zero, numpy's mean then astype; empty: 0).
#include "backend/interpreter/InterpreterInternal.h"

#include <cmath>
#include <limits>

namespace shardc::interp::detail {
namespace {

int64_t intIdentity(DType dtype, bool isMax) {
  if (dtype == DType::I32)
    return isMax ? std::numeric_limits<int32_t>::min() : std::numeric_limits<int32_t>::max();
  return isMax ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
}

} // namespace

Tensor evalReduction(const Op &op, const Tensor &input) {
  const Attribute *dimsAttr = op.attr(attrs::dims);
  std::optional<std::vector<int64_t>> dims = dimsAttr ? dimsAttr->intList() : std::nullopt;
  if (!dims)
    fail(op, "missing attribute: dims");
  const Attribute *keepAttr = op.attr(attrs::keepDims);
  bool keepDims = keepAttr && keepAttr->b;
  std::vector<bool> reduced(input.rank(), false);
  for (int64_t d : *dims) {
    if (d < 0 || d >= static_cast<int64_t>(input.rank()))
      fail(op, "dims out of range");
    reduced[d] = true;
  }

  // The result's shape, and per input dim the stride it moves the result by
  // (0 for a reduced dim).
  std::vector<int64_t> shape, kept;
  for (size_t d = 0; d < input.rank(); ++d) {
    if (!reduced[d])
      kept.push_back(input.shape()[d]);
    if (!reduced[d] || keepDims)
      shape.push_back(reduced[d] ? 1 : input.shape()[d]);
  }
  std::vector<int64_t> keptStrides = stridesOf(kept), toOut(input.rank(), 0);
  for (size_t d = 0, k = 0; d < input.rank(); ++d)
    if (!reduced[d])
      toOut[d] = keptStrides[k++];

  const bool isMax = op.kind == OpKind::ReduceMax, isMin = op.kind == OpKind::ReduceMin;
  Tensor out(TensorType{shape, input.dtype()});
  const size_t n = static_cast<size_t>(out.size());
  double floatInit = isMax ? -INFINITY : isMin ? INFINITY : 0.0;
  uint64_t intInit = isMax || isMin ? static_cast<uint64_t>(intIdentity(input.dtype(), isMax)) : 0;
  std::vector<double> facc(n, floatInit);
  std::vector<uint64_t> iacc(n, intInit);
  forEachIndex(input.shape(), [&](const std::vector<int64_t> &index, int64_t linear) {
    int64_t at = 0;
    for (size_t d = 0; d < index.size(); ++d)
      at += index[d] * toOut[d];
    if (input.holdsFloats()) {
      double x = input.floatAt(linear), &acc = facc[at];
      if (!isMax && !isMin)
        acc += x;
      else if (std::isnan(x) || std::isnan(acc))
        acc = NAN;
      else
        acc = isMax ? std::max(acc, x) : std::min(acc, x);
    } else {
      int64_t x = input.intAt(linear);
      uint64_t &acc = iacc[at];
      if (!isMax && !isMin)
        acc += static_cast<uint64_t>(x);
      else
        acc = static_cast<uint64_t>(isMax ? std::max(static_cast<int64_t>(acc), x)
                                          : std::min(static_cast<int64_t>(acc), x));
    }
  });

  int64_t count = 1;
  for (size_t d = 0; d < input.rank(); ++d)
    if (reduced[d])
      count *= input.shape()[d];
  for (size_t i = 0; i < n; ++i) {
    if (!input.holdsFloats() && op.kind == OpKind::ReduceMean)
      out.setInt(static_cast<int64_t>(i),
                 count ? static_cast<uint64_t>(wrapTo(input.dtype(), iacc[i]) / count) : 0);
    else if (!input.holdsFloats())
      out.setInt(static_cast<int64_t>(i), iacc[i]);
    else if (op.kind == OpKind::ReduceMean)
      out.setFloat(static_cast<int64_t>(i), count ? facc[i] / static_cast<double>(count) : NAN);
    else
      out.setFloat(static_cast<int64_t>(i), facc[i]);
  }
  return out;
}

} // namespace shardc::interp::detail
