// Elementwise ops: unary, convert, binary with numpy broadcasting, select.
// Floats compute in double and round to the element type once; integers
// compute in uint64 and wrap (Tensor.h). Decisions where the op set leaves
// room (docs/backend-and-runtime.md): integer div truncates toward zero
// (ONNX Div) and x / 0 = 0; integer pow with a negative exponent is the
// truncated exact value (PyTorch's powi); round is half to even (numpy,
// ONNX); max and min propagate NaN (numpy maximum/minimum); sign is numpy's
// (NaN stays, -0 gives +0).
#include "backend/interpreter/InterpreterInternal.h"

#include <algorithm>
#include <cmath>

namespace shardc::interp::detail {
namespace {

double unaryFloat(const Op &op, double x) {
  switch (op.kind) {
  case OpKind::Abs:
    return std::fabs(x);
  case OpKind::Neg:
    return -x;
  case OpKind::Exp:
    return std::exp(x);
  case OpKind::Log:
    return std::log(x);
  case OpKind::Sqrt:
    return std::sqrt(x);
  case OpKind::Rsqrt:
    return 1.0 / std::sqrt(x);
  case OpKind::Tanh:
    return std::tanh(x);
  case OpKind::Sigmoid:
    return 1.0 / (1.0 + std::exp(-x));
  case OpKind::Relu:
    return std::isnan(x) ? x : x > 0 ? x : 0.0;
  case OpKind::Sin:
    return std::sin(x);
  case OpKind::Cos:
    return std::cos(x);
  case OpKind::Floor:
    return std::floor(x);
  case OpKind::Ceil:
    return std::ceil(x);
  case OpKind::Round:
    return std::nearbyint(x); // the default rounding mode: half to even
  case OpKind::Sign:
    return x > 0 ? 1.0 : x < 0 ? -1.0 : x == 0 ? 0.0 : x;
  case OpKind::Reciprocal:
    return 1.0 / x;
  case OpKind::Erf:
    return std::erf(x);
  case OpKind::Identity:
    return x;
  default:
    fail(op, "element type must be an integer or i1");
  }
}

uint64_t unaryInt(const Op &op, int64_t x) {
  uint64_t u = static_cast<uint64_t>(x);
  switch (op.kind) {
  case OpKind::Abs:
    return x < 0 ? 0 - u : u;
  case OpKind::Neg:
    return 0 - u;
  case OpKind::Sign:
    return static_cast<uint64_t>(x > 0 ? 1 : x < 0 ? -1 : 0);
  case OpKind::Relu:
    return x > 0 ? u : 0;
  case OpKind::Not:
    return ~u; // bitwise; on i1 the low bit makes it logical
  case OpKind::Identity:
    return u;
  default:
    fail(op, "element type must be a float");
  }
}

bool compare(OpKind kind, double a, double b) {
  switch (kind) {
  case OpKind::Eq:
    return a == b;
  case OpKind::Ne:
    return a != b;
  case OpKind::Lt:
    return a < b;
  case OpKind::Le:
    return a <= b;
  case OpKind::Gt:
    return a > b;
  default:
    return a >= b;
  }
}

bool compare(OpKind kind, int64_t a, int64_t b) {
  switch (kind) {
  case OpKind::Eq:
    return a == b;
  case OpKind::Ne:
    return a != b;
  case OpKind::Lt:
    return a < b;
  case OpKind::Le:
    return a <= b;
  case OpKind::Gt:
    return a > b;
  default:
    return a >= b;
  }
}

double binaryFloat(const Op &op, double a, double b) {
  switch (op.kind) {
  case OpKind::Add:
    return a + b;
  case OpKind::Sub:
    return a - b;
  case OpKind::Mul:
    return a * b;
  case OpKind::Div:
    return a / b;
  case OpKind::Max:
    return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
  case OpKind::Min:
    return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
  case OpKind::Pow:
    return std::pow(a, b);
  default:
    fail(op, "element type must be i1 or an integer");
  }
}

uint64_t intPow(int64_t base, int64_t exponent) {
  if (exponent < 0) // 1 / base^-exponent, truncated: nonzero for |base| = 1 only
    return static_cast<uint64_t>(base == 1 ? 1 : base == -1 ? (exponent & 1 ? -1 : 1) : 0);
  uint64_t result = 1, b = static_cast<uint64_t>(base);
  for (uint64_t e = static_cast<uint64_t>(exponent); e; e >>= 1, b *= b)
    if (e & 1)
      result *= b;
  return result;
}

uint64_t binaryInt(const Op &op, int64_t a, int64_t b) {
  uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  switch (op.kind) {
  case OpKind::Add:
    return ua + ub;
  case OpKind::Sub:
    return ua - ub;
  case OpKind::Mul:
    return ua * ub;
  case OpKind::Div:
    if (b == 0)
      return 0;
    if (b == -1)
      return 0 - ua; // INT_MIN / -1 wraps instead of trapping
    return static_cast<uint64_t>(a / b);
  case OpKind::Max:
    return static_cast<uint64_t>(std::max(a, b));
  case OpKind::Min:
    return static_cast<uint64_t>(std::min(a, b));
  case OpKind::Pow:
    return intPow(a, b);
  case OpKind::And:
    return ua & ub;
  case OpKind::Or:
    return ua | ub;
  case OpKind::Xor:
    return ua ^ ub;
  default:
    fail(op, "element type must be a number");
  }
}

/// Per operand, its strides seen from a result of `shape` (numpy: aligned
/// from the right, size-1 dims read with stride 0).
std::vector<int64_t> broadcastStrides(const Tensor &t, const std::vector<int64_t> &shape) {
  std::vector<int64_t> own = stridesOf(t.shape());
  std::vector<int64_t> strides(shape.size(), 0);
  size_t offset = shape.size() - t.rank();
  for (size_t d = 0; d < t.rank(); ++d)
    strides[offset + d] = t.shape()[d] == 1 ? 0 : own[d];
  return strides;
}

std::vector<int64_t> broadcastShape(const Op &op, const std::vector<const Tensor *> &operands) {
  std::vector<int64_t> shape;
  for (const Tensor *t : operands) {
    if (t->rank() > shape.size())
      shape.insert(shape.begin(), t->rank() - shape.size(), 1);
    size_t offset = shape.size() - t->rank();
    for (size_t d = 0; d < t->rank(); ++d) {
      int64_t &s = shape[offset + d];
      int64_t n = t->shape()[d];
      if (s == 1)
        s = n;
      else if (n != 1 && n != s)
        fail(op, "shapes are not broadcast-compatible");
    }
  }
  return shape;
}

Tensor convert(const Tensor &x, DType to) {
  Tensor out(TensorType{x.shape(), to});
  for (int64_t i = 0; i < x.size(); ++i) {
    if (to == DType::F32 && !x.holdsFloats()) // one rounding: through double could be two
      out.setFloat(i, static_cast<double>(static_cast<float>(x.intAt(i))));
    else if (isFloat(to))
      out.setFloat(i, x.asDouble(i));
    else if (x.holdsFloats())
      out.setInt(i, static_cast<uint64_t>(floatToInt(to, x.floatAt(i))));
    else if (to == DType::I1)
      out.setInt(i, x.intAt(i) != 0);
    else
      out.setInt(i, static_cast<uint64_t>(x.intAt(i)));
  }
  return out;
}

} // namespace

Tensor evalElementwise(const Op &op, const std::vector<const Tensor *> &operands) {
  if (op.kind == OpKind::Convert)
    return convert(*operands[0], op.result()->type.dtype);

  const Tensor &first = *operands[0];
  if (opInfo(op.kind).group == OpGroup::Unary) {
    Tensor out(first.type());
    for (int64_t i = 0; i < first.size(); ++i) {
      if (first.holdsFloats())
        out.setFloat(i, unaryFloat(op, first.floatAt(i)));
      else
        out.setInt(i, unaryInt(op, first.intAt(i)));
    }
    return out;
  }

  // Binary ops and select: every operand read through broadcast strides.
  std::vector<int64_t> shape = broadcastShape(op, operands);
  std::vector<std::vector<int64_t>> strides;
  for (const Tensor *t : operands)
    strides.push_back(broadcastStrides(*t, shape));
  const Tensor &value = *operands[op.kind == OpKind::Select ? 1 : 0];
  bool comparison = op.kind >= OpKind::Eq && op.kind <= OpKind::Ge;
  Tensor out(TensorType{shape, comparison ? DType::I1 : value.dtype()});
  std::vector<int64_t> at(operands.size());
  forEachIndex(shape, [&](const std::vector<int64_t> &index, int64_t linear) {
    for (size_t k = 0; k < operands.size(); ++k) {
      at[k] = 0;
      for (size_t d = 0; d < shape.size(); ++d)
        at[k] += index[d] * strides[k][d];
    }
    const Tensor &a = *operands[0];
    if (op.kind == OpKind::Select) {
      out.copyElement(linear, *operands[a.intAt(at[0]) ? 1 : 2], at[a.intAt(at[0]) ? 1 : 2]);
      return;
    }
    const Tensor &b = *operands[1];
    if (comparison)
      out.setInt(linear, a.holdsFloats() ? compare(op.kind, a.floatAt(at[0]), b.floatAt(at[1]))
                                         : compare(op.kind, a.intAt(at[0]), b.intAt(at[1])));
    else if (a.holdsFloats())
      out.setFloat(linear, binaryFloat(op, a.floatAt(at[0]), b.floatAt(at[1])));
    else
      out.setInt(linear, binaryInt(op, a.intAt(at[0]), b.intAt(at[1])));
  });
  return out;
}

} // namespace shardc::interp::detail
