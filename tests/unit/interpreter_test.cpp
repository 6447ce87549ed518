// Unit tests for the reference interpreter (backend/interpreter): each op
// group against hand-computed values, the lockstep manual_computation
// semantics and every collective (sub-axes, padding), .npy round trips and
// every malformed-file error.
#include "TestHelpers.h"
#include "backend/interpreter/Interpreter.h"
#include "backend/interpreter/InterpreterInternal.h"
#include "backend/interpreter/Npy.h"
#include "backend/interpreter/Random.h"
#include "tools/shardc/Pipeline.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <deque>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace shardc;
using namespace shardc::interp;

namespace {

/// Sources stay alive for the whole run: locations point into them.
std::deque<SourceFile> gSources;

/// Compiles `source` (it must be valid) and runs its @main on `args`.
std::vector<Tensor> run(const std::string &source, const std::vector<Tensor> &args = {}) {
  const SourceFile &file = gSources.emplace_back("test.shd", source);
  DiagnosticEngine diags;
  std::unique_ptr<Module> module = compile(file, diags);
  for (const Diagnostic &d : diags.diagnostics())
    UNSCOPED_INFO(d.message);
  REQUIRE(module);
  static std::deque<std::unique_ptr<Module>> modules;
  modules.push_back(std::move(module));
  return runFunction(*modules.back(), *modules.back()->findFunction("main"), args);
}

/// The message of the Error running `source` throws.
std::string runError(const std::string &source, const std::vector<Tensor> &args = {}) {
  try {
    run(source, args);
  } catch (const Error &e) {
    return e.what();
  }
  return "(no error)";
}

Tensor f32(std::vector<int64_t> shape, std::vector<double> v) {
  return makeFloatTensor(TensorType{std::move(shape), DType::F32}, v);
}
Tensor f64(std::vector<int64_t> shape, std::vector<double> v) {
  return makeFloatTensor(TensorType{std::move(shape), DType::F64}, v);
}
Tensor i32(std::vector<int64_t> shape, std::vector<int64_t> v) {
  return makeIntTensor(TensorType{std::move(shape), DType::I32}, v);
}
Tensor i64(std::vector<int64_t> shape, std::vector<int64_t> v) {
  return makeIntTensor(TensorType{std::move(shape), DType::I64}, v);
}

std::vector<double> values(const Tensor &t) {
  std::vector<double> out;
  for (int64_t i = 0; i < t.size(); ++i)
    out.push_back(t.asDouble(i));
  return out;
}

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

TEST_CASE("convert saturates, maps NaN to 0 and anything to i1 as not-zero", "[interpreter]") {
  auto r = run(
      oneOp("%a: tensor<5xf32>", "%c = convert %a : tensor<5xi32>\n return %c", "tensor<5xi32>"),
      {f32({5}, {1.9, -1.9, 1e20, -1e20, NAN})});
  CHECK(values(r[0]) == std::vector<double>{1, -1, 2147483647.0, -2147483648.0, 0});
  r = run(oneOp("%a: tensor<3xf32>", "%c = convert %a : tensor<3xi1>\n return %c", "tensor<3xi1>"),
          {f32({3}, {0, 0.25, -3})});
  CHECK(values(r[0]) == std::vector<double>{0, 1, 1});
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

// ---- manual_computation and collectives ---------------------------------------------

namespace {

/// @main(%a: A) -> R: a manual_computation over `axes` of `mesh` whose body
/// (local parameter %l: L) is `body` and returns %r.
std::string manual(const std::string &mesh, const std::string &a, const std::string &in,
                   const std::string &l, const std::string &body, const std::string &out,
                   const std::string &result, const std::string &axes) {
  return "@mesh = <" + mesh + ">\nfunc @main(%a: " + a + ") -> " + result +
         " {\n  %o = manual_computation (%a) in_shardings=[sharding<@mesh, " + in +
         ">] out_shardings=[sharding<@mesh, " + out + ">] manual_axes={" + axes + "} (%l: " + l +
         ") {\n" + body + "\n    return %r\n  } : " + result + "\n  return %o\n}\n";
}

Tensor iotaF32(std::vector<int64_t> shape) {
  Tensor t(TensorType{std::move(shape), DType::F32});
  for (int64_t i = 0; i < t.size(); ++i)
    t.setFloat(i, static_cast<double>(i));
  return t;
}

} // namespace

TEST_CASE("manual_computation splits operands and assembles results", "[interpreter]") {
  // Identity body: split on x, put back together.
  auto r = run(manual("[\"x\"=2, \"y\"=2]", "tensor<4x2xf32>", "[{\"x\"}, {}]", "tensor<2x2xf32>",
                      "%r = identity %l", "[{\"x\"}, {}]", "tensor<4x2xf32>", "\"x\""),
               {iotaF32({4, 2})});
  CHECK(values(r[0]) == values(iotaF32({4, 2})));
  // Out sharding not on x: the instance at x=0 is taken (its 2 rows).
  r = run(manual("[\"x\"=2]", "tensor<4xf32>", "[{\"x\"}]", "tensor<2xf32>", "%r = identity %l",
                 "[{}]", "tensor<2xf32>", "\"x\""),
          {iotaF32({4})});
  CHECK(values(r[0]) == std::vector<double>{0, 1});
  // Partial manual axes: y is not manual, dim 1 stays global in the body.
  r = run(manual("[\"x\"=2, \"y\"=2]", "tensor<2x4xf32>", "[{\"x\"}, {\"y\"}]", "tensor<1x4xf32>",
                 "%r = reduce_sum %l {dims = [1], keep_dims = true}", "[{\"x\"}, {}]",
                 "tensor<2x1xf32>", "\"x\""),
          {iotaF32({2, 4})});
  CHECK(values(r[0]) == std::vector<double>{6, 22});
}

TEST_CASE("manual_computation without manual axes runs its body once", "[interpreter]") {
  auto r = run(manual("[\"x\"=2]", "tensor<4xf32>", "[{\"x\"}]", "tensor<4xf32>", "%r = neg %l",
                      "[{\"x\"}]", "tensor<4xf32>", ""),
               {iotaF32({4})});
  CHECK(values(r[0]) == std::vector<double>{-0.0, -1, -2, -3});
}

TEST_CASE("all_gather, with full and sub-axes", "[interpreter]") {
  const std::string mesh = "[\"x\"=4]";
  auto gather = [&](const std::string &axes, int64_t n) {
    std::string local = "tensor<" + std::to_string(2 * n) + "xf32>";
    std::string global = "tensor<" + std::to_string(8 * n) + "xf32>";
    return values(run(manual(mesh, "tensor<8xf32>", "[{\"x\"}]", "tensor<2xf32>",
                             "%r = all_gather %l {dim = 0, axes = {" + axes + "}} : " + local,
                             "[{\"x\"}]", global, "\"x\""),
                      {iotaF32({8})})[0]);
  };
  CHECK(gather("\"x\"", 4) == std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7,
                                                  0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7});
  // "x":(2)2, the minor half of x: groups {0, 1} and {2, 3}.
  CHECK(gather("\"x\":(2)2", 2) ==
        std::vector<double>{0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 6, 7, 4, 5, 6, 7});
  // "x":(1)2, the major half: groups {0, 2} and {1, 3}.
  CHECK(gather("\"x\":(1)2", 2) ==
        std::vector<double>{0, 1, 4, 5, 2, 3, 6, 7, 0, 1, 4, 5, 2, 3, 6, 7});
}

TEST_CASE("uncoveredCoordinate: what sub-axes leave of a coordinate", "[interpreter]") {
  Mesh mesh = testing::makeMesh({{"x", 4}, {"y", 2}});
  auto uncovered = [&](std::vector<AxisRef> refs, int64_t x) {
    return detail::uncoveredCoordinate(mesh, 0, refs, {x, 1});
  };
  CHECK(uncovered({testing::sub("x", 2, 2)}, 3) == 2); // minor digit 1 removed
  CHECK(uncovered({testing::sub("x", 1, 2)}, 3) == 1); // major digit 1 (worth 2) removed
  CHECK(uncovered({testing::sub("x", 1, 2), testing::sub("x", 2, 2)}, 3) == 0);
  CHECK(uncovered({testing::full("x")}, 3) == 0);
  CHECK(uncovered({testing::full("y")}, 3) == 3);
}

TEST_CASE("all_reduce sum/max/min and reduce_scatter", "[interpreter]") {
  const std::string mesh = "[\"x\"=4]";
  auto reduce = [&](const std::string &kind) {
    return values(
        run(manual(mesh, "tensor<8xf32>", "[{\"x\"}]", "tensor<2xf32>",
                   "%r = all_reduce %l {axes = {\"x\"}, kind = \"" + kind + "\"} : tensor<2xf32>",
                   "[{}]", "tensor<2xf32>", "\"x\""),
            {iotaF32({8})})[0]);
  };
  CHECK(reduce("sum") == std::vector<double>{12, 16});
  CHECK(reduce("max") == std::vector<double>{6, 7});
  CHECK(reduce("min") == std::vector<double>{0, 1});
  auto r = run(manual(mesh, "tensor<4xf32>", "[{}]", "tensor<4xf32>",
                      "%r = reduce_scatter %l {dim = 0, axes = {\"x\"}} : tensor<1xf32>",
                      "[{\"x\"}]", "tensor<4xf32>", "\"x\""),
               {f32({4}, {1, 2, 3, 4})});
  CHECK(values(r[0]) == std::vector<double>{4, 8, 12, 16});
}

TEST_CASE("all_to_all moves a sharded dim", "[interpreter]") {
  // Rows on x -> columns on x: the global value is unchanged.
  auto r = run(manual("[\"x\"=2]", "tensor<2x4xf32>", "[{\"x\"}, {}]", "tensor<1x4xf32>",
                      "%r = all_to_all %l {split_dim = 1, concat_dim = 0, axes = {\"x\"}} : "
                      "tensor<2x2xf32>",
                      "[{}, {\"x\"}]", "tensor<2x4xf32>", "\"x\""),
               {iotaF32({2, 4})});
  CHECK(values(r[0]) == values(iotaF32({2, 4})));
}

TEST_CASE("all_slice keeps a block, zero-padded", "[interpreter]") {
  auto r = run(manual("[\"x\"=4]", "tensor<6xf32>", "[{}]", "tensor<6xf32>",
                      "%r = all_slice %l {dim = 0, axes = {\"x\"}} : tensor<2xf32>", "[{\"x\"}]",
                      "tensor<8xf32>", "\"x\""),
               {f32({6}, {1, 2, 3, 4, 5, 6})});
  CHECK(values(r[0]) == std::vector<double>{1, 2, 3, 4, 5, 6, 0, 0});
}

TEST_CASE("collective_permute and axis_index", "[interpreter]") {
  auto r = run(manual("[\"x\"=4]", "tensor<4xf32>", "[{\"x\"}]", "tensor<1xf32>",
                      "%r = collective_permute %l {pairs = [[0, 1], [1, 2], [2, 3]]} : "
                      "tensor<1xf32>",
                      "[{\"x\"}]", "tensor<4xf32>", "\"x\""),
               {f32({4}, {1, 2, 3, 4})});
  CHECK(values(r[0]) == std::vector<double>{0, 1, 2, 3});
  r = run(manual("[\"x\"=2, \"y\"=3]", "tensor<2x3xf32>", "[{\"x\"}, {\"y\"}]", "tensor<1x1xf32>",
                 "%i = axis_index {axis = \"y\"} : tensor<i32>\n"
                 "    %j = axis_index {axis = \"x\"} : tensor<i32>\n"
                 "    %k = mul %j, %j\n %s = add %i, %k\n"
                 "    %f = convert %s : tensor<f32>\n"
                 "    %r = reshape %f : tensor<1x1xf32>",
                 "[{\"x\"}, {\"y\"}]", "tensor<2x3xf32>", "\"x\", \"y\""),
          {iotaF32({2, 3})});
  CHECK(values(r[0]) == std::vector<double>{0, 1, 2, 1, 2, 3});
}

TEST_CASE("a collective over an axis that is not manual is an error", "[interpreter]") {
  std::string src = manual("[\"x\"=2, \"y\"=2]", "tensor<4xf32>", "[{\"x\"}]", "tensor<2xf32>",
                           "%r = all_reduce %l {axes = {\"y\"}} : tensor<2xf32>", "[{\"x\"}]",
                           "tensor<4xf32>", "\"x\"");
  CHECK(runError(src, {iotaF32({4})}) ==
        "all_reduce - axis \"y\" is not manual here: collectives run inside a manual_computation "
        "that makes their axes manual");
}

TEST_CASE("nested manual_computation: outer and inner axes together", "[interpreter]") {
  // Outer makes x manual, inner y; the inner all_gather over x and y sees
  // every instance.
  std::string src = "@mesh = <[\"x\"=2, \"y\"=2]>\n"
                    "func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
                    "  %o = manual_computation (%a) in_shardings=[sharding<@mesh, [{\"x\"}]>]\n"
                    "      out_shardings=[sharding<@mesh, [{}]>] manual_axes={\"x\"}\n"
                    "      (%l: tensor<2xf32>) {\n"
                    "    %i = manual_computation (%l) in_shardings=[sharding<@mesh, [{\"y\"}]>]\n"
                    "        out_shardings=[sharding<@mesh, [{}]>] manual_axes={\"y\"}\n"
                    "        (%m: tensor<1xf32>) {\n"
                    "      %g = all_gather %m {dim = 0, axes = {\"x\", \"y\"}} : tensor<4xf32>\n"
                    "      return %g\n"
                    "    } : tensor<4xf32>\n"
                    "    return %i\n"
                    "  } : tensor<4xf32>\n"
                    "  return %o\n}\n";
  CHECK(values(run(src, {f32({4}, {5, 6, 7, 8})})[0]) == std::vector<double>{5, 6, 7, 8});
}

// ---- .npy ------------------------------------------------------------------------

namespace {

/// The Error message decoding `bytes` (named "t.npy") as `expected` gives.
std::string npyError(const std::string &bytes, const TensorType &expected) {
  try {
    decodeNpy(bytes, "t.npy", expected);
  } catch (const Error &e) {
    return e.what();
  }
  return "(no error)";
}

/// `bytes` with the first occurrence of `from` replaced by `to`.
std::string patched(std::string bytes, const std::string &from, const std::string &to) {
  bytes.replace(bytes.find(from), from.size(), to);
  return bytes;
}

} // namespace

TEST_CASE("npy round trip for every element type and rank", "[interpreter][npy]") {
  std::vector<Tensor> tensors = {
      f32({2, 3}, {1.5, -2, 3e-8, NAN, INFINITY, -0.0}),       f64({3}, {0.1, -1e300, 5}),
      i32({1, 2, 2}, {INT32_MIN, INT32_MAX, 0, -1}),           i64({}, {INT64_MIN}),
      makeIntTensor(TensorType{{4}, DType::I1}, {1, 0, 0, 1}), f32({0, 3}, {}),
  };
  for (const Tensor &t : tensors) {
    std::string bytes = encodeNpy(t);
    CHECK((bytes.size() - t.size() * dtypeBytes(t.dtype())) % 64 == 0); // aligned data
    Tensor back = decodeNpy(bytes, "t.npy", t.type());
    CHECK(back.type() == t.type());
    CHECK(allClose(back, t, 0, 0));
  }
  CHECK(encodeNpy(f32({3}, {1, 2, 3})).find("'shape': (3,)") != std::string::npos);
  CHECK(encodeNpy(i64({}, {1})).find("'descr': '<i8', 'fortran_order': False, 'shape': ()") !=
        std::string::npos);
}

TEST_CASE("npy files are written atomically and read back", "[interpreter][npy]") {
  std::string dir = "npy_test_dir";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directory(dir);
  Tensor t = i32({2}, {7, 8});
  writeNpyFiles({{dir + "/a.npy", t}, {dir + "/b.npy", t}});
  CHECK(allClose(readNpy(dir + "/a.npy", t.type()), t, 0, 0));
  // One unwritable path: nothing is written, no temporary is left.
  CHECK_THROWS_AS(writeNpyFiles({{dir + "/c.npy", t}, {dir + "/missing/d.npy", t}}), Error);
  CHECK_FALSE(std::filesystem::exists(dir + "/c.npy"));
  size_t files = 0;
  for (const auto &entry : std::filesystem::directory_iterator(dir))
    files += entry.is_regular_file();
  CHECK(files == 2);
  CHECK_THROWS_WITH(readNpy(dir + "/nope.npy", t.type()),
                    "cannot open 'npy_test_dir/nope.npy': No such file or directory");
  CHECK_THROWS_WITH(readNpy(dir, t.type()), "cannot open 'npy_test_dir': Is a directory");
  std::filesystem::remove_all(dir);
}

TEST_CASE("every malformed npy file is a clear error", "[interpreter][npy]") {
  TensorType type{{2, 3}, DType::F32};
  std::string good = encodeNpy(f32({2, 3}, {1, 2, 3, 4, 5, 6}));
  REQUIRE(npyError(good, type) == "(no error)");
  CHECK(npyError("hello", type) == "t.npy: not a .npy file: it does not start with \"\\x93NUMPY\"");
  CHECK(npyError(good.substr(0, 8), type) ==
        "t.npy: truncated .npy file: 8 bytes, no complete header");
  CHECK(npyError(patched(good, std::string("NUMPY\x01", 6), std::string("NUMPY\x04", 6)), type) ==
        "t.npy: unsupported .npy version 4.0 (1.0, 2.0 and 3.0 are read)");
  CHECK(npyError(good.substr(0, 50), type) ==
        "t.npy: truncated .npy file: the header is 118 bytes, 40 are left");
  CHECK(npyError(good.substr(0, good.size() - 1), type) ==
        "t.npy: truncated .npy file: (2, 3) <f4 elements need 24 bytes of data, the file has 23");
  CHECK(npyError(good + "xx", type) == "t.npy: 2 bytes of unexpected data after the 6 elements");
  CHECK(npyError(patched(good, "False", "True "), type) ==
        "t.npy: Fortran order is not supported: save the array in C order "
        "(numpy.ascontiguousarray)");
  CHECK(npyError(patched(good, "<f4", ">f4"), type) ==
        "t.npy: unsupported element type '>f4' (f32 <f4, f64 <f8, i32 <i4, i64 <i8, i1 |b1 are "
        "read)");
  CHECK(npyError(patched(good, "<f4", "<i4"), type) ==
        "t.npy: element type doesn't match: expected <f4 (f32), got <i4 (i32)");
  CHECK(npyError(patched(good, "(2, 3)", "(3, 2)"), type) ==
        "t.npy: shape doesn't match: expected (2, 3) for tensor<2x3xf32>, got (3, 2)");
  CHECK(npyError(patched(good, "'shape'", "'shope'"), type) ==
        "t.npy: bad .npy header: unknown key 'shope'");
  CHECK(npyError(patched(good, "(2, 3)", "(2, x)"), type) ==
        "t.npy: bad .npy header: expected a dimension at offset 54 of the header");
  CHECK(npyError(patched(good, "'fortran_order': False, ", "                        "), type) ==
        "t.npy: bad .npy header: missing key 'fortran_order'");
  std::string bools = encodeNpy(makeIntTensor(TensorType{{2}, DType::I1}, {1, 0}));
  bools[bools.size() - 1] = 2;
  CHECK(npyError(bools, TensorType{{2}, DType::I1}) == "t.npy: element 1 is not a bool: byte 2");
  // Version 2.0: a 4-byte header length.
  std::string v2 =
      std::string("\x93NUMPY\x02\x00", 8) + std::string("\x76\x00\x00\x00", 4) + good.substr(10);
  CHECK(npyError(v2, type) == "(no error)");
}
