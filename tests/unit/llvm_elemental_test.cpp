// Unit tests for the LLVM backend's elementwise lowering
// (backend/llvm/ElementalArithmetic.cpp, ElementalMath.cpp): every unary and
// binary op, convert and select, on every dtype they accept, JIT-compiled
// and compared with the reference interpreter on random values and on the
// edge cases (NaN, infinities, -0, INT_MIN, division by zero, broadcasting).
#include "LlvmElementalHarness.h"

#include <cmath>
#include <limits>

using namespace shardc;
using namespace shardc::testing;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

/// Floats every float op must handle: signed zeros, halves (rounding),
/// tiny and huge values, infinities, NaN, and the tanh/sigmoid ranges.
std::vector<double> specialFloats() {
  return {0.0,   -0.0, 1.0,   -1.0,  0.5,   -0.5,  1.5,   2.5,  -2.5, 1e-8,
          -1e-8, 0.3,  -0.39, 0.41,  0.06,  -0.07, 3.7,   -3.7, 20,   -20,
          100,   -100, 1e30,  -1e30, 1e-40, kInf,  -kInf, kNaN, 7.25, -9.5};
}

const int64_t kI32Min = std::numeric_limits<int32_t>::min();
const int64_t kI32Max = std::numeric_limits<int32_t>::max();
const int64_t kI64Min = std::numeric_limits<int64_t>::min();
const int64_t kI64Max = std::numeric_limits<int64_t>::max();

std::vector<int64_t> specialInts(DType dtype) {
  int64_t lo = dtype == DType::I32 ? kI32Min : kI64Min,
          hi = dtype == DType::I32 ? kI32Max : kI64Max;
  return {0, 1, -1, 2, -2, 3, 7, -7, 31, 62, lo, hi, lo + 1, hi - 1, 100, -100};
}

interp::Tensor tensorOf(DType dtype, const std::vector<double> &floats,
                        const std::vector<int64_t> &ints) {
  if (isFloat(dtype))
    return interp::makeFloatTensor(TensorType{{int64_t(floats.size())}, dtype}, floats);
  return interp::makeIntTensor(TensorType{{int64_t(ints.size())}, dtype}, ints);
}

/// Every pair (a[i], b[j]) of `values`, as two tensors of n*n elements.
template <class T>
std::pair<std::vector<T>, std::vector<T>> allPairs(const std::vector<T> &values) {
  std::vector<T> a, b;
  for (T x : values)
    for (T y : values) {
      a.push_back(x);
      b.push_back(y);
    }
  return {a, b};
}

double rtolFor(DType dtype) { return dtype == DType::F32 ? 1e-6 : 1e-13; }
double atolFor(DType dtype) { return dtype == DType::F32 ? 1e-30 : 1e-300; }

} // namespace

TEST_CASE("llvm elemental: unary float ops match the interpreter", "[llvm]") {
  for (const char *op :
       {"abs", "neg", "exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "relu", "sin", "cos",
        "floor", "ceil", "round", "sign", "reciprocal", "erf", "identity"}) {
    for (DType dtype : {DType::F32, DType::F64}) {
      std::string type = std::string("tensor<30x") + dtypeName(dtype) + ">";
      INFO(op << " on " << type);
      ElementalKernel kernel(
          program("%a: " + type, std::string("%r = ") + op + " %a\nreturn %r", type));
      checkAgainstInterpreter(kernel, {tensorOf(dtype, specialFloats(), {})}, rtolFor(dtype),
                              atolFor(dtype));
      checkAgainstInterpreter(kernel, kernel.randomArgs(5), rtolFor(dtype), atolFor(dtype));
    }
  }
}

TEST_CASE("llvm elemental: tanh and sigmoid are accurate from 1e-8 to saturation", "[llvm]") {
  for (DType dtype : {DType::F32, DType::F64}) {
    std::vector<double> xs;
    for (int i = 0; i <= 2000; ++i) { // 10^-8 ... 10^2, both signs
      double x = std::pow(10.0, -8.0 + 10.0 * i / 2000);
      xs.push_back(x);
      xs.push_back(-x);
    }
    std::string type = "tensor<4002x" + std::string(dtypeName(dtype)) + ">";
    for (const char *op : {"tanh", "sigmoid"}) {
      INFO(op << " on " << type);
      ElementalKernel kernel(
          program("%a: " + type, std::string("%r = ") + op + " %a\nreturn %r", type));
      // Relative error only: near 0 every digit of tanh(x) ~ x must be right.
      checkAgainstInterpreter(kernel, {tensorOf(dtype, xs, {})}, dtype == DType::F32 ? 5e-7 : 5e-15,
                              0);
    }
  }
}

TEST_CASE("llvm elemental: unary integer and logical ops wrap like the interpreter", "[llvm]") {
  for (const char *op : {"abs", "neg", "sign", "relu", "not", "identity"}) {
    for (DType dtype : {DType::I32, DType::I64}) {
      std::string type = std::string("tensor<16x") + dtypeName(dtype) + ">";
      INFO(op << " on " << type);
      ElementalKernel kernel(
          program("%a: " + type, std::string("%r = ") + op + " %a\nreturn %r", type));
      checkAgainstInterpreter(kernel, {tensorOf(dtype, {}, specialInts(dtype))});
    }
  }
  ElementalKernel logical(program("%a: tensor<7xi1>", "%r = not %a\nreturn %r", "tensor<7xi1>"));
  checkAgainstInterpreter(logical, logical.randomArgs(3));
  CHECK(logical.run({tensorOf(DType::I1, {}, {0, 1, 1, 0, 0, 1, 0})})[0].ints() ==
        std::vector<int64_t>{1, 0, 0, 1, 1, 0, 1});
}

TEST_CASE("llvm elemental: binary float ops on every pair of special values", "[llvm]") {
  auto [a, b] = allPairs(specialFloats());
  for (const char *op : {"add", "sub", "mul", "div", "max", "min", "pow"}) {
    for (DType dtype : {DType::F32, DType::F64}) {
      std::string type = "tensor<" + std::to_string(a.size()) + "x" + dtypeName(dtype) + ">";
      INFO(op << " on " << type);
      ElementalKernel kernel(program("%a: " + type + ", %b: " + type,
                                     std::string("%r = ") + op + " %a, %b\nreturn %r", type));
      checkAgainstInterpreter(kernel, {tensorOf(dtype, a, {}), tensorOf(dtype, b, {})},
                              rtolFor(dtype), atolFor(dtype));
    }
  }
}

TEST_CASE("llvm elemental: binary integer ops never trap (div by 0, INT_MIN / -1)", "[llvm]") {
  for (DType dtype : {DType::I32, DType::I64}) {
    auto [a, b] = allPairs(specialInts(dtype));
    std::string type = "tensor<" + std::to_string(a.size()) + "x" + dtypeName(dtype) + ">";
    for (const char *op : {"add", "sub", "mul", "div", "max", "min", "pow", "and", "or", "xor"}) {
      INFO(op << " on " << type);
      ElementalKernel kernel(program("%a: " + type + ", %b: " + type,
                                     std::string("%r = ") + op + " %a, %b\nreturn %r", type));
      checkAgainstInterpreter(kernel, {tensorOf(dtype, {}, a), tensorOf(dtype, {}, b)});
    }
  }
  for (const char *op : {"and", "or", "xor"}) {
    ElementalKernel kernel(program("%a: tensor<4xi1>, %b: tensor<4xi1>",
                                   std::string("%r = ") + op + " %a, %b\nreturn %r",
                                   "tensor<4xi1>"));
    checkAgainstInterpreter(
        kernel, {tensorOf(DType::I1, {}, {0, 0, 1, 1}), tensorOf(DType::I1, {}, {0, 1, 0, 1})});
  }
}

TEST_CASE("llvm elemental: comparisons on every dtype, NaN unordered", "[llvm]") {
  for (const char *op : {"eq", "ne", "lt", "le", "gt", "ge"}) {
    for (DType dtype : {DType::F32, DType::F64, DType::I32, DType::I64, DType::I1}) {
      std::vector<double> floats = specialFloats();
      std::vector<int64_t> ints =
          dtype == DType::I1 ? std::vector<int64_t>{0, 1} : specialInts(dtype);
      auto [fa, fb] = allPairs(floats);
      auto [ia, ib] = allPairs(ints);
      size_t n = isFloat(dtype) ? fa.size() : ia.size();
      std::string type = "tensor<" + std::to_string(n) + "x" + dtypeName(dtype) + ">";
      INFO(op << " on " << type);
      ElementalKernel kernel(program("%a: " + type + ", %b: " + type,
                                     std::string("%r = ") + op + " %a, %b\nreturn %r",
                                     "tensor<" + std::to_string(n) + "xi1>"));
      checkAgainstInterpreter(kernel, {tensorOf(dtype, fa, ia), tensorOf(dtype, fb, ib)});
    }
  }
}

TEST_CASE("llvm elemental: binary ops and select broadcast numpy-style", "[llvm]") {
  checkRandom(program("%a: tensor<4x1x3xf32>, %b: tensor<5x1xf32>", "%r = sub %a, %b\nreturn %r",
                      "tensor<4x5x3xf32>"));
  checkRandom(program("%a: tensor<3xi32>, %b: tensor<2x3xi32>", "%r = mul %a, %b\nreturn %r",
                      "tensor<2x3xi32>"));
  checkRandom(program("%a: tensor<f64>, %b: tensor<2x3xf64>", "%r = max %a, %b\nreturn %r",
                      "tensor<2x3xf64>"));
  checkRandom(program("%p: tensor<2x1x4xi1>, %a: tensor<3x1xf32>, %b: tensor<4xf32>",
                      "%r = select %p, %a, %b\nreturn %r", "tensor<2x3x4xf32>"));
  checkRandom(program("%a: tensor<3x1xi64>, %b: tensor<1x5xi64>", "%r = ge %a, %b\nreturn %r",
                      "tensor<3x5xi1>"));
}

TEST_CASE("llvm elemental: convert between every pair of dtypes", "[llvm]") {
  std::vector<double> floats = specialFloats();
  for (double big : {2147483647.5, 2147483648.0, -2147483649.0, 9.3e18, -9.3e18, 4e9})
    floats.push_back(big);
  std::vector<int64_t> ints = specialInts(DType::I64);
  ints.resize(floats.size(), 123456789012345);
  const DType all[] = {DType::F32, DType::F64, DType::I32, DType::I64, DType::I1};
  for (DType from : all) {
    for (DType to : all) {
      std::string n = std::to_string(floats.size());
      std::string in = "tensor<" + n + "x" + dtypeName(from) + ">";
      std::string out = "tensor<" + n + "x" + dtypeName(to) + ">";
      INFO(in << " -> " << out);
      ElementalKernel kernel(program("%a: " + in, "%r = convert %a : " + out + "\nreturn %r", out));
      std::vector<int64_t> source = ints;
      if (from == DType::I1)
        for (int64_t &v : source)
          v &= 1;
      if (from == DType::I32)
        for (int64_t &v : source)
          v = static_cast<int32_t>(v);
      checkAgainstInterpreter(kernel, {tensorOf(from, floats, source)}, 1e-7, 0);
    }
  }
}
