// Unit tests for the interpreter's manual_computation (lockstep instances,
// operand blocks, result assembly) and every collective on small grids,
// sub-axes and padding included (SPMD_CONTRACT.md section 2).
#include "InterpreterTestHelpers.h"
#include "TestHelpers.h"
#include "ir/AxisAlgebra.h"

#include <catch2/catch.hpp>

using namespace shardc;
using namespace shardc::interp;
using namespace shardc::testing;

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
    return uncoveredCoordinate(mesh, 0, refs, {x, 1});
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
