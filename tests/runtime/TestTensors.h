// Small row-major tensors of doubles for the runtime tests: the operands
// each position contributes, the reference results (concatenation, slices
// with zero padding, reductions), and conversion to and from runtime buffers.
#pragma once

#include "TestProgram.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace shardrt_test {

using Buffer = std::vector<unsigned char>;

struct LocalTensor {
  std::vector<int64_t> shape;
  std::vector<double> values;
};

inline int64_t elementCount(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

inline int64_t elementBytes(int64_t dtype) {
  return dtype == SHARDRT_I1 ? 1 : (dtype == SHARDRT_F64 || dtype == SHARDRT_I64) ? 8 : 4;
}

inline std::string shapeString(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t d = 0; d < shape.size(); ++d)
    text += (d ? "x" : "") + std::to_string(shape[d]);
  return text + "]";
}

inline LocalTensor zeros(const std::vector<int64_t> &shape, int64_t) {
  return {shape, std::vector<double>(static_cast<size_t>(elementCount(shape)), 0.0)};
}

/// Element i of position p's operand: 100 p + i (i1: (p + i) % 2), so a
/// misplaced element shows where it came from.
inline double operandValue(int64_t p, int64_t i, int64_t dtype) {
  return dtype == SHARDRT_I1 ? static_cast<double>((p + i) % 2) : static_cast<double>(100 * p + i);
}

inline LocalTensor operand(int64_t p, const std::vector<int64_t> &shape, int64_t dtype) {
  LocalTensor t = zeros(shape, dtype);
  for (size_t i = 0; i < t.values.size(); ++i)
    t.values[i] = operandValue(p, static_cast<int64_t>(i), dtype);
  return t;
}

/// Element k of position p's all_reduce operand: small values of both signs
/// that change order between positions (i1: 0/1).
inline double reductionValue(int64_t p, int64_t k, int64_t dtype) {
  return dtype == SHARDRT_I1 ? static_cast<double>((p * 5 + k * 3) % 7 % 2)
                             : static_cast<double>((p * 37 + k * 11) % 23 - 11);
}

inline LocalTensor reductionOperand(int64_t p, const std::vector<int64_t> &shape, int64_t dtype) {
  LocalTensor t = zeros(shape, dtype);
  for (size_t i = 0; i < t.values.size(); ++i)
    t.values[i] = reductionValue(p, static_cast<int64_t>(i), dtype);
  return t;
}

inline Buffer encode(const LocalTensor &t, int64_t dtype) {
  Buffer b(t.values.size() * static_cast<size_t>(elementBytes(dtype)));
  for (size_t i = 0; i < t.values.size(); ++i) {
    double v = t.values[i];
    unsigned char *at = b.data() + i * elementBytes(dtype);
    if (dtype == SHARDRT_F32) {
      float f = static_cast<float>(v);
      std::memcpy(at, &f, 4);
    } else if (dtype == SHARDRT_F64) {
      std::memcpy(at, &v, 8);
    } else if (dtype == SHARDRT_I32) {
      int32_t x = static_cast<int32_t>(v);
      std::memcpy(at, &x, 4);
    } else if (dtype == SHARDRT_I64) {
      int64_t x = static_cast<int64_t>(v);
      std::memcpy(at, &x, 8);
    } else {
      *at = static_cast<unsigned char>(v);
    }
  }
  return b;
}

inline LocalTensor decode(const void *data, const std::vector<int64_t> &shape, int64_t dtype) {
  LocalTensor t = zeros(shape, dtype);
  const auto *bytes = static_cast<const unsigned char *>(data);
  for (size_t i = 0; i < t.values.size(); ++i) {
    const unsigned char *at = bytes + i * elementBytes(dtype);
    if (dtype == SHARDRT_F32) {
      float f;
      std::memcpy(&f, at, 4);
      t.values[i] = f;
    } else if (dtype == SHARDRT_F64) {
      std::memcpy(&t.values[i], at, 8);
    } else if (dtype == SHARDRT_I32) {
      int32_t x;
      std::memcpy(&x, at, 4);
      t.values[i] = x;
    } else if (dtype == SHARDRT_I64) {
      int64_t x;
      std::memcpy(&x, at, 8);
      t.values[i] = static_cast<double>(x);
    } else {
      t.values[i] = *at;
    }
  }
  return t;
}
inline LocalTensor decode(const Buffer &b, const std::vector<int64_t> &shape, int64_t dtype) {
  return decode(b.data(), shape, dtype);
}

/// outer = product of dims before `dim`, inner = product after it.
inline void splitAt(const std::vector<int64_t> &shape, int64_t dim, int64_t &outer,
                    int64_t &inner) {
  outer = inner = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    if (d < dim)
      outer *= shape[d];
    else if (d > dim)
      inner *= shape[d];
  }
}

/// The parts concatenated along `dim`.
inline LocalTensor concat(const std::vector<LocalTensor> &parts, int64_t dim) {
  LocalTensor out = parts[0];
  out.shape[dim] = 0;
  for (const auto &p : parts)
    out.shape[dim] += p.shape[dim];
  out.values.clear();
  int64_t outer, inner;
  splitAt(parts[0].shape, dim, outer, inner);
  for (int64_t o = 0; o < outer; ++o)
    for (const auto &p : parts) {
      int64_t row = p.shape[dim] * inner;
      out.values.insert(out.values.end(), p.values.begin() + o * row,
                        p.values.begin() + (o + 1) * row);
    }
  return out;
}

/// Elements [start, start + length) along `dim` of a tensor of `shape` whose
/// flat element i is valueAt(i); zero past the end.
template <typename ValueAt>
LocalTensor sliceOf(const std::vector<int64_t> &shape, int64_t dim, int64_t start, int64_t length,
                    ValueAt valueAt) {
  std::vector<int64_t> sliced = shape;
  sliced[dim] = length;
  LocalTensor out = zeros(sliced, 0);
  int64_t outer, inner;
  splitAt(shape, dim, outer, inner);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < length && start + k < shape[dim]; ++k)
      for (int64_t i = 0; i < inner; ++i)
        out.values[static_cast<size_t>((o * length + k) * inner + i)] =
            valueAt((o * shape[dim] + start + k) * inner + i);
  return out;
}

/// Elements [start, start + length) of `dim`; zero past the end.
inline LocalTensor slice(const LocalTensor &t, int64_t dim, int64_t start, int64_t length) {
  return sliceOf(t.shape, dim, start, length,
                 [&](int64_t i) { return t.values[static_cast<size_t>(i)]; });
}

/// slice(operand(p, shape, dtype), dim, start, length) without making the
/// whole operand: at 8 members of 351,000 elements, making them took a third
/// of the collectives test's time (page faults on fresh memory).
inline LocalTensor operandSlice(int64_t p, const std::vector<int64_t> &shape, int64_t dtype,
                                int64_t dim, int64_t start, int64_t length) {
  return sliceOf(shape, dim, start, length, [&](int64_t i) { return operandValue(p, i, dtype); });
}

/// `kind` of two values, NaN winning max and min (SPMD_CONTRACT.md).
inline double combine(double a, double b, int64_t kind) {
  return kind == SHARDRT_SUM              ? a + b
         : std::isnan(a) || std::isnan(b) ? NAN
         : kind == SHARDRT_MAX            ? std::max(a, b)
                                          : std::min(a, b);
}

/// Elementwise sum / max / min of the parts; NaN wins max and min.
inline LocalTensor reduce(const std::vector<LocalTensor> &parts, int64_t kind) {
  LocalTensor out = parts[0];
  for (size_t k = 1; k < parts.size(); ++k)
    for (size_t i = 0; i < out.values.size(); ++i)
      out.values[i] = combine(out.values[i], parts[k].values[i], kind);
  return out;
}

/// reduce() of the members' reductionOperand()s, element by element: at 8
/// members of 600,001 elements the operands themselves (38 MB per rank, on 8
/// ranks) took most of the collectives test's time in page faults.
inline LocalTensor reducedOperands(const std::vector<int64_t> &members,
                                   const std::vector<int64_t> &shape, int64_t dtype, int64_t kind) {
  LocalTensor out = reductionOperand(members.front(), shape, dtype);
  for (size_t m = 1; m < members.size(); ++m)
    for (size_t i = 0; i < out.values.size(); ++i)
      out.values[i] =
          combine(out.values[i], reductionValue(members[m], static_cast<int64_t>(i), dtype), kind);
  return out;
}

/// Exact comparison (NaN equals NaN); reports the first difference.
inline void expectEqual(Checker &checker, const LocalTensor &got, const LocalTensor &want,
                        const std::string &what) {
  if (got.shape != want.shape) {
    checker.check(false,
                  what + ": shape " + shapeString(got.shape) + " != " + shapeString(want.shape));
    return;
  }
  for (size_t i = 0; i < want.values.size(); ++i) {
    double a = got.values[i], b = want.values[i];
    if (a != b && !(std::isnan(a) && std::isnan(b))) {
      checker.check(false, what + ": element " + std::to_string(i) + " is " + std::to_string(a) +
                               ", expected " + std::to_string(b));
      return;
    }
  }
  checker.check(true, what);
}

} // namespace shardrt_test
