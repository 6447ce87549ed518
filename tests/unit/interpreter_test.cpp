// Unit tests for the reference interpreter (backend/interpreter), op by op:
// each op group against hand-computed values, the numerics of
// SPMD_CONTRACT.md section 3 (f32 rounding, integer wrapping, conversions),
// random values, allClose.
#include "InterpreterTestHelpers.h"
#include "backend/interpreter/Random.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace shardc;
using namespace shardc::interp;
using namespace shardc::testing;

namespace {

/// A one-op @main over the given parameter types.
std::string oneOp(const std::string &params, const std::string &body, const std::string &result) {
  return "func @main(" + params + ") -> " + result + " {\n" + body + "\n}\n";
}

} // namespace

// ---- elementwise ----------------------------------------------------------------

TEST_CASE("interpreter: binary ops broadcast numpy-style", "[interpreter]") {
  auto r = run(oneOp("%a: tensor<2x3xf32>, %b: tensor<3xf32>", "%c = add %a, %b\n return %c",
                     "tensor<2x3xf32>"),
               {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({3}, {10, 20, 30})});
  CHECK(values(r[0]) == std::vector<double>{11, 22, 33, 14, 25, 36});
  r = run(oneOp("%a: tensor<2x1xi32>, %b: tensor<1x3xi32>", "%c = mul %a, %b\n return %c",
                "tensor<2x3xi32>"),
          {i32({2, 1}, {2, 3}), i32({1, 3}, {1, 2, 3})});
  CHECK(values(r[0]) == std::vector<double>{2, 4, 6, 3, 6, 9});
}

TEST_CASE("integer arithmetic wraps and never traps", "[interpreter]") {
  auto r = run(
      oneOp("%a: tensor<3xi32>, %b: tensor<3xi32>", "%c = add %a, %b\n return %c", "tensor<3xi32>"),
      {i32({3}, {2147483647, -2147483647 - 1, 5}), i32({3}, {1, -1, 5})});
  CHECK(values(r[0]) == std::vector<double>{-2147483648.0, 2147483647.0, 10});
  // div truncates toward zero; x / 0 = 0; INT_MIN / -1 wraps.
  r = run(
      oneOp("%a: tensor<4xi64>, %b: tensor<4xi64>", "%c = div %a, %b\n return %c", "tensor<4xi64>"),
      {i64({4}, {7, -7, 5, INT64_MIN}), i64({4}, {2, 2, 0, -1})});
  CHECK(r[0].ints() == std::vector<int64_t>{3, -3, 0, INT64_MIN});
  r = run(
      oneOp("%a: tensor<4xi32>, %b: tensor<4xi32>", "%c = pow %a, %b\n return %c", "tensor<4xi32>"),
      {i32({4}, {2, 3, 2, 0}), i32({4}, {10, 2, -1, 0})});
  CHECK(values(r[0]) == std::vector<double>{1024, 9, 0, 1});
}

TEST_CASE("unary ops on floats and integers", "[interpreter]") {
  auto r = run(oneOp("%a: tensor<4xf32>", "%c = round %a\n return %c", "tensor<4xf32>"),
               {f32({4}, {0.5, 1.5, 2.5, -0.5})});
  CHECK(values(r[0]) == std::vector<double>{0, 2, 2, -0.0}); // half to even
  r = run(oneOp("%a: tensor<3xf32>", "%c = sigmoid %a\n return %c", "tensor<3xf32>"),
          {f32({3}, {0, 100, -100})});
  CHECK(values(r[0])[0] == 0.5);
  CHECK(values(r[0])[1] == 1.0);
  r = run(oneOp("%a: tensor<3xi32>", "%c = abs %a\n return %c", "tensor<3xi32>"),
          {i32({3}, {-3, 4, -2147483647 - 1})});
  CHECK(values(r[0]) == std::vector<double>{3, 4, -2147483648.0});
  r = run(oneOp("%a: tensor<2xi1>", "%c = not %a\n return %c", "tensor<2xi1>"),
          {makeIntTensor(TensorType{{2}, DType::I1}, {0, 1})});
  CHECK(values(r[0]) == std::vector<double>{1, 0});
}

TEST_CASE("f32 rounds after each op", "[interpreter]") {
  // 1 + 2^-30 is not a float: the sum rounds back to 1 before the sub.
  auto r = run(oneOp("%a: tensor<1xf32>, %b: tensor<1xf32>",
                     "%c = add %a, %b\n %d = sub %c, %a\n return %d", "tensor<1xf32>"),
               {f32({1}, {1}), f32({1}, {std::ldexp(1.0, -30)})});
  CHECK(values(r[0])[0] == 0);
  r = run(oneOp("%a: tensor<1xf64>, %b: tensor<1xf64>",
                "%c = add %a, %b\n %d = sub %c, %a\n return %d", "tensor<1xf64>"),
          {f64({1}, {1}), f64({1}, {std::ldexp(1.0, -30)})});
  CHECK(values(r[0])[0] == std::ldexp(1.0, -30));
}

TEST_CASE("convert truncates, gives the minimum for NaN and out of range (numpy on x86) and "
          "anything to i1 as not-zero",
          "[interpreter]") {
  auto r = run(
      oneOp("%a: tensor<5xf32>", "%c = convert %a : tensor<5xi32>\n return %c", "tensor<5xi32>"),
      {f32({5}, {1.9, -1.9, 1e20, -1e20, NAN})});
  CHECK(values(r[0]) == std::vector<double>{1, -1, -2147483648.0, -2147483648.0, -2147483648.0});
  r = run(oneOp("%a: tensor<4xf32>", "%c = convert %a : tensor<4xi1>\n return %c", "tensor<4xi1>"),
          {f32({4}, {0, 0.25, -3, NAN})});
  CHECK(values(r[0]) == std::vector<double>{0, 1, 1, 1});
  r = run(
      oneOp("%a: tensor<2xi64>", "%c = convert %a : tensor<2xi32>\n return %c", "tensor<2xi32>"),
      {i64({2}, {4294967297LL, -1})});
  CHECK(values(r[0]) == std::vector<double>{1, -1}); // truncation to 32 bits
}

TEST_CASE("comparisons give i1, select broadcasts", "[interpreter]") {
  auto r = run(oneOp("%a: tensor<3xf32>, %b: tensor<3xf32>",
                     "%p = lt %a, %b\n %c = select %p, %a, %b\n return %p, %c",
                     "(tensor<3xi1>, tensor<3xf32>)"),
               {f32({3}, {1, 5, NAN}), f32({3}, {2, 4, 0})});
  CHECK(r[0].dtype() == DType::I1);
  CHECK(values(r[0]) == std::vector<double>{1, 0, 0});
  CHECK(values(r[1]) == std::vector<double>{1, 4, 0});
}

TEST_CASE("max and min propagate NaN", "[interpreter]") {
  auto r = run(
      oneOp("%a: tensor<2xf32>, %b: tensor<2xf32>", "%c = max %a, %b\n return %c", "tensor<2xf32>"),
      {f32({2}, {NAN, 1}), f32({2}, {1, 2})});
  CHECK(std::isnan(values(r[0])[0]));
  CHECK(values(r[0])[1] == 2);
}

// ---- contractions and reductions ------------------------------------------------

TEST_CASE("matmul: 2-D and batched with broadcast batch dims", "[interpreter]") {
  auto r = run(oneOp("%a: tensor<2x3xf32>, %b: tensor<3x2xf32>", "%c = matmul %a, %b\n return %c",
                     "tensor<2x2xf32>"),
               {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({3, 2}, {1, 0, 0, 1, 1, 1})});
  CHECK(values(r[0]) == std::vector<double>{4, 5, 10, 11});
  // lhs batch [2, 1] against rhs batch [3]: result batch [2, 3].
  auto r2 = run(oneOp("%a: tensor<2x1x1x2xi32>, %b: tensor<3x2x1xi32>",
                      "%c = matmul %a, %b\n return %c", "tensor<2x3x1x1xi32>"),
                {i32({2, 1, 1, 2}, {1, 2, 3, 4}), i32({3, 2, 1}, {1, 0, 0, 1, 1, 1})});
  CHECK(values(r2[0]) == std::vector<double>{1, 2, 3, 3, 4, 7});
}

TEST_CASE("einsum: matmul, batch, repeated contraction, three operands, full sum",
          "[interpreter]") {
  Tensor a = f32({2, 3}, {1, 2, 3, 4, 5, 6}), b = f32({3, 2}, {1, 0, 0, 1, 1, 1});
  auto r = run(oneOp("%a: tensor<2x3xf32>, %b: tensor<3x2xf32>",
                     "%c = einsum \"ij,jk->ik\" (%a, %b)\n return %c", "tensor<2x2xf32>"),
               {a, b});
  CHECK(values(r[0]) == std::vector<double>{4, 5, 10, 11});
  r = run(oneOp("%a: tensor<2x3xf32>, %b: tensor<3x2xf32>",
                "%c = einsum \"ij,jk->ki\" (%a, %b)\n return %c", "tensor<2x2xf32>"),
          {a, b});
  CHECK(values(r[0]) == std::vector<double>{4, 10, 5, 11});
  r = run(oneOp("%a: tensor<2x3xf32>", "%c = einsum \"ij->\" (%a)\n return %c", "tensor<f32>"),
          {a});
  CHECK(values(r[0]) == std::vector<double>{21});
  r = run(oneOp("%a: tensor<3xi32>, %b: tensor<3xi32>, %c: tensor<3xi32>",
                "%d = einsum \"i,i,i->i\" (%a, %b, %c)\n %e = einsum \"i,i,i->\" (%a, %b, %c)\n "
                "return %d, %e",
                "(tensor<3xi32>, tensor<i32>)"),
          {i32({3}, {1, 2, 3}), i32({3}, {4, 5, 6}), i32({3}, {1, 1, 2})});
  CHECK(values(r[0]) == std::vector<double>{4, 10, 36});
  CHECK(values(r[1]) == std::vector<double>{50});
  // batch b, contracting j and k together
  r = run(oneOp("%a: tensor<2x2x2xf32>, %b: tensor<2x2x2xf32>",
                "%c = einsum \"bjk,bkj->b\" (%a, %b)\n return %c", "tensor<2xf32>"),
          {f32({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}), f32({2, 2, 2}, {1, 0, 0, 1, 1, 1, 1, 1})});
  CHECK(values(r[0]) == std::vector<double>{5, 26});
}

TEST_CASE("reductions with and without keep_dims", "[interpreter]") {
  Tensor a = f32({2, 3}, {1, 2, 3, 4, 5, -6});
  auto r = run(oneOp("%a: tensor<2x3xf32>",
                     "%s = reduce_sum %a {dims = [1]}\n"
                     " %k = reduce_max %a {dims = [0], keep_dims = true}\n"
                     " %n = reduce_min %a {dims = [0, 1]}\n"
                     " %m = reduce_mean %a {dims = [1], keep_dims = true}\n"
                     " return %s, %k, %n, %m",
                     "(tensor<2xf32>, tensor<1x3xf32>, tensor<f32>, tensor<2x1xf32>)"),
               {a});
  CHECK(values(r[0]) == std::vector<double>{6, 3});
  CHECK(values(r[1]) == std::vector<double>{4, 5, 3});
  CHECK(r[1].shape() == std::vector<int64_t>{1, 3});
  CHECK(values(r[2]) == std::vector<double>{-6});
  CHECK(values(r[3]) == std::vector<double>{2, 1});
  auto ri = run(
      oneOp("%a: tensor<2x2xi32>", "%s = reduce_max %a {dims = [1]}\n return %s", "tensor<2xi32>"),
      {i32({2, 2}, {-5, -7, 3, 2})});
  CHECK(values(ri[0]) == std::vector<double>{-5, 3});
}

// ---- shape and creation ops -------------------------------------------------------

TEST_CASE("reshape, transpose, broadcast, concat", "[interpreter]") {
  Tensor a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  auto r = run(oneOp("%a: tensor<2x3xf32>",
                     "%r = reshape %a : tensor<3x2xf32>\n"
                     " %t = transpose %a {perm = [1, 0]}\n"
                     " %c = concat %a, %a {dim = 1}\n"
                     " return %r, %t, %c",
                     "(tensor<3x2xf32>, tensor<3x2xf32>, tensor<2x6xf32>)"),
               {a});
  CHECK(values(r[0]) == std::vector<double>{1, 2, 3, 4, 5, 6});
  CHECK(values(r[1]) == std::vector<double>{1, 4, 2, 5, 3, 6});
  CHECK(values(r[2]) == std::vector<double>{1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6});
  r = run(oneOp("%a: tensor<3xf32>, %b: tensor<2x1xf32>",
                "%x = broadcast %a {dims = [1]} : tensor<2x3xf32>\n"
                " %y = broadcast %b {dims = [0, 2]} : tensor<2x2x3xf32>\n"
                " return %x, %y",
                "(tensor<2x3xf32>, tensor<2x2x3xf32>)"),
          {f32({3}, {1, 2, 3}), f32({2, 1}, {7, 8})});
  CHECK(values(r[0]) == std::vector<double>{1, 2, 3, 1, 2, 3});
  CHECK(values(r[1]) == std::vector<double>{7, 7, 7, 7, 7, 7, 8, 8, 8, 8, 8, 8});
}

TEST_CASE("slice with stride, pad with a value", "[interpreter]") {
  Tensor a = i32({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  auto r = run(oneOp("%a: tensor<3x4xi32>",
                     "%s = slice %a {start = [0, 1], limit = [3, 4], stride = [2, 2]}\n"
                     " %p = pad %s {low = [1, 0], high = [0, 1], value = 9}\n"
                     " return %s, %p",
                     "(tensor<2x2xi32>, tensor<3x3xi32>)"),
               {a});
  CHECK(values(r[0]) == std::vector<double>{1, 3, 9, 11});
  CHECK(values(r[1]) == std::vector<double>{9, 9, 9, 1, 3, 9, 9, 11, 9});
}

TEST_CASE("constant, iota, random ops", "[interpreter]") {
  auto r = run("func @main() -> (tensor<2x2xi32>, tensor<3xf32>, tensor<2x3xf32>) {\n"
               "  %c = constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>\n"
               "  %s = constant dense<1.5> : tensor<3xf32>\n"
               "  %i = iota {dim = 1} : tensor<2x3xf32>\n"
               "  return %c, %s, %i\n}\n");
  CHECK(values(r[0]) == std::vector<double>{1, 2, 3, 4});
  CHECK(values(r[1]) == std::vector<double>{1.5, 1.5, 1.5});
  CHECK(values(r[2]) == std::vector<double>{0, 1, 2, 0, 1, 2});
  auto u = run("func @main() -> (tensor<1000xf32>, tensor<1000xf64>) {\n"
               "  %u = random_uniform {seed = 7, low = -2.0, high = 3.0} : tensor<1000xf32>\n"
               "  %n = random_normal {seed = 7, mean = 1.0, stddev = 2.0} : tensor<1000xf64>\n"
               "  return %u, %n\n}\n");
  double sum = 0;
  for (double v : values(u[0])) {
    CHECK(v >= -2.0);
    CHECK(v < 3.0);
  }
  for (double v : values(u[1]))
    sum += v;
  CHECK(std::fabs(sum / 1000 - 1.0) < 0.3);
  // Counter-based: element i depends on (seed, i) only.
  CHECK(values(u[0])[10] == static_cast<float>(-2.0 + 5.0 * randomUnit(7, 10)));
}

TEST_CASE("randomTensor is deterministic and in range", "[interpreter]") {
  TensorType f{{100}, DType::F32}, i{{100}, DType::I32}, b{{100}, DType::I1};
  CHECK(values(randomTensor(f, 3, 0)) == values(randomTensor(f, 3, 0)));
  CHECK(values(randomTensor(f, 3, 0)) != values(randomTensor(f, 3, 1)));
  CHECK(values(randomTensor(f, 3, 0)) != values(randomTensor(f, 4, 0)));
  for (double v : values(randomTensor(f, 3, 0)))
    CHECK((v >= -1 && v < 1));
  for (double v : values(randomTensor(i, 3, 0)))
    CHECK((v >= -8 && v < 8));
  for (double v : values(randomTensor(b, 3, 0)))
    CHECK((v == 0 || v == 1));
}

TEST_CASE("allClose: exact for integers, tolerance for floats, NaN equals NaN", "[interpreter]") {
  std::string why;
  CHECK(allClose(f32({2}, {1, NAN}), f32({2}, {1.0000001, NAN}), 1e-5, 0, &why));
  CHECK_FALSE(allClose(f32({2, 2}, {1, 2, 3, 4}), f32({2, 2}, {1, 2, 3.5, 4}), 1e-5, 0, &why));
  CHECK(why == "at [1, 0]: 3 vs 3.5 (difference 0.5)");
  CHECK_FALSE(allClose(i32({2}, {1, 2}), i32({2}, {1, 3}), 1, 1, &why));
  CHECK(why == "at [1]: 2 vs 3");
  CHECK_FALSE(allClose(i32({2}, {1, 2}), f32({2}, {1, 2}), 1, 1, &why));
  CHECK(why == "types differ: tensor<2xi32> vs tensor<2xf32>");
}

TEST_CASE("runFunction checks its arguments", "[interpreter]") {
  std::string src = oneOp("%a: tensor<2xf32>", "return %a", "tensor<2xf32>");
  CHECK(runError(src, {}) == "@main takes 1 arguments, 0 given");
  CHECK(runError(src, {i32({2}, {1, 2})}) ==
        "argument %a must be tensor<2xf32>: got tensor<2xi32>");
}
