// The interpreter's values: a TensorType and its elements, row-major, plus
// the element arithmetic every op shares (SPMD_CONTRACT.md section 3):
//   - f32 values are held as doubles that are exactly floats: each op computes
//     in double and rounds to float once (roundTo);
//   - i32/i64/i1 values are held as int64s; integer ops compute in uint64 and
//     truncate to the type's width (wrapTo), so nothing overflows;
//   - float -> integer conversion: truncation toward zero; NaN, infinities
//     and values out of range give the type's minimum (numpy's astype on
//     x86); anything -> i1 is "not zero" (NaN -> true).
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Types.h"

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace shardc::interp {

/// A runtime problem: a clear message, and where in the program when known
/// (the op that could not run).
class Error : public std::runtime_error {
public:
  explicit Error(const std::string &message, Loc loc = {})
      : std::runtime_error(message), loc(loc) {}
  Loc loc;
};

class Tensor {
public:
  /// The most elements a tensor may have (2 GiB of doubles): the interpreter
  /// is an oracle for test-sized programs, not a runtime.
  static constexpr int64_t kMaxElements = int64_t(1) << 28;

  Tensor() = default;
  /// A zero-filled tensor of `type`; throws Error past kMaxElements.
  explicit Tensor(TensorType type);

  const TensorType &type() const { return type_; }
  DType dtype() const { return type_.dtype; }
  const std::vector<int64_t> &shape() const { return type_.shape; }
  size_t rank() const { return type_.shape.size(); }
  int64_t size() const { return size_; }
  bool holdsFloats() const { return isFloat(type_.dtype); }

  /// Element `i` of a float tensor.
  double floatAt(int64_t i) const { return floats_[i]; }
  /// Element `i` of an integer or i1 tensor.
  int64_t intAt(int64_t i) const { return ints_[i]; }
  /// Element `i` as a double, whatever the dtype (summaries, comparisons).
  double asDouble(int64_t i) const;
  /// Stores `v` rounded to the element type (f32: to the nearest float).
  void setFloat(int64_t i, double v);
  /// Stores `v` truncated to the element type's width (i1: the low bit).
  void setInt(int64_t i, uint64_t v);
  /// Copies element `from` of `src` (same dtype) to element `to`.
  void copyElement(int64_t to, const Tensor &src, int64_t from);
  /// Copies `count` consecutive elements of `src` (same dtype) from `from`
  /// on to `to` on.
  void copyElements(int64_t to, const Tensor &src, int64_t from, int64_t count);
  /// The same elements seen with another shape of the same element count.
  Tensor reshaped(std::vector<int64_t> shape) const;

  /// All elements as doubles / int64s (tests, .npy writing).
  const std::vector<double> &floats() const { return floats_; }
  const std::vector<int64_t> &ints() const { return ints_; }

private:
  TensorType type_;
  int64_t size_ = 0;
  std::vector<double> floats_; // f32, f64
  std::vector<int64_t> ints_;  // i32, i64, i1
};

/// `v` rounded to `dtype` (a float type): f32 rounds to the nearest float.
double roundTo(DType dtype, double v);
/// `v` truncated to `dtype` (an integer type or i1), sign-extended.
int64_t wrapTo(DType dtype, uint64_t v);
/// Float -> integer/i1 conversion (file comment).
int64_t floatToInt(DType dtype, double v);

/// Row-major strides of `shape`.
std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape);
/// Calls `fn(index, linear)` for every index of `shape` in row-major order.
void forEachIndex(const std::vector<int64_t> &shape,
                  const std::function<void(const std::vector<int64_t> &, int64_t)> &fn);

/// Builders for tests and the tools: a tensor of `type` with these elements.
Tensor makeFloatTensor(TensorType type, const std::vector<double> &values);
Tensor makeIntTensor(TensorType type, const std::vector<int64_t> &values);

} // namespace shardc::interp
