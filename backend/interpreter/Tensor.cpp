// Tensor storage and the element arithmetic shared by every op.
#include "backend/interpreter/Tensor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace shardc::interp {

Tensor::Tensor(TensorType type) : type_(std::move(type)), size_(type_.numElements()) {
  if (size_ > kMaxElements)
    throw Error(fmt::format("{} is too large for the interpreter: {} elements (at most 2^28)",
                            type_.str(), size_));
  if (isFloat(type_.dtype))
    floats_.assign(static_cast<size_t>(size_), 0.0);
  else
    ints_.assign(static_cast<size_t>(size_), 0);
}

double Tensor::asDouble(int64_t i) const {
  return holdsFloats() ? floats_[i] : static_cast<double>(ints_[i]);
}

void Tensor::setFloat(int64_t i, double v) { floats_[i] = roundTo(type_.dtype, v); }

void Tensor::setInt(int64_t i, uint64_t v) { ints_[i] = wrapTo(type_.dtype, v); }

void Tensor::copyElement(int64_t to, const Tensor &src, int64_t from) {
  if (holdsFloats())
    floats_[to] = src.floats_[from];
  else
    ints_[to] = src.ints_[from];
}

void Tensor::copyElements(int64_t to, const Tensor &src, int64_t from, int64_t count) {
  if (count <= 0)
    return;
  if (holdsFloats())
    std::copy_n(src.floats_.begin() + from, count, floats_.begin() + to);
  else
    std::copy_n(src.ints_.begin() + from, count, ints_.begin() + to);
}

Tensor Tensor::reshaped(std::vector<int64_t> shape) const {
  Tensor out = *this;
  out.type_.shape = std::move(shape);
  return out;
}

double roundTo(DType dtype, double v) {
  return dtype == DType::F32 ? static_cast<double>(static_cast<float>(v)) : v;
}

int64_t wrapTo(DType dtype, uint64_t v) {
  switch (dtype) {
  case DType::I32:
    return static_cast<int32_t>(static_cast<uint32_t>(v));
  case DType::I1:
    return static_cast<int64_t>(v & 1);
  default:
    return static_cast<int64_t>(v);
  }
}

int64_t floatToInt(DType dtype, double v) {
  if (dtype == DType::I1)
    return v != 0; // NaN is not zero: true, as numpy's astype(bool)
  // In range: truncation toward zero. NaN, the infinities and values out of
  // range give the type's minimum, numpy's astype on x86 (the CPU's
  // "integer indefinite"). 2^31 and 2^63 are exact doubles, and every double
  // strictly between -2^31 - 1 (exact too) and 2^31 truncates into i32.
  int64_t lowest = dtype == DType::I32 ? std::numeric_limits<int32_t>::min()
                                       : std::numeric_limits<int64_t>::min();
  bool inRange = dtype == DType::I32 ? v > -2147483649.0 && v < 2147483648.0
                                     : v >= -9223372036854775808.0 && v < 9223372036854775808.0;
  return inRange ? static_cast<int64_t>(v) : lowest;
}

std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;)
    strides[d - 1] = strides[d] * shape[d];
  return strides;
}

void forEachIndex(const std::vector<int64_t> &shape,
                  const std::function<void(const std::vector<int64_t> &, int64_t)> &fn) {
  for (int64_t d : shape)
    if (d == 0)
      return;
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t linear = 0;; ++linear) {
    fn(index, linear);
    size_t d = shape.size();
    while (d > 0 && ++index[d - 1] == shape[d - 1])
      index[--d] = 0;
    if (d == 0)
      return;
  }
}

Tensor makeFloatTensor(TensorType type, const std::vector<double> &values) {
  Tensor t(std::move(type));
  for (int64_t i = 0; i < t.size() && i < static_cast<int64_t>(values.size()); ++i)
    t.setFloat(i, values[i]);
  return t;
}

Tensor makeIntTensor(TensorType type, const std::vector<int64_t> &values) {
  Tensor t(std::move(type));
  for (int64_t i = 0; i < t.size() && i < static_cast<int64_t>(values.size()); ++i)
    t.setInt(i, static_cast<uint64_t>(values[i]));
  return t;
}

} // namespace shardc::interp
