// Unit tests for the LLVM backend's shape, creation and reduction lowering
// (backend/llvm/ElementalShape.cpp, ElementalCreation.cpp,
// ElementalReduction.cpp), JIT-compiled and compared with the interpreter:
// every shape op alone and fused into chains, constants, iota and random
// values at several shapes (the interpreter's generator, bit for bit up to
// float rounding), and every reduction over every dim subset of a rank-3
// input.
#include "LlvmElementalHarness.h"
#include "TestHelpers.h"

#include <algorithm>
#include <limits>

using namespace shardc;
using namespace shardc::testing;

TEST_CASE("llvm elemental: reshape, transpose and broadcast", "[llvm]") {
  checkRandom(program("%a: tensor<2x3x4xf32>", "%r = reshape %a : tensor<4x6xf32>\nreturn %r",
                      "tensor<4x6xf32>"));
  for (const char *perm : {"[0, 2, 1]", "[2, 0, 1]", "[1, 2, 0]", "[2, 1, 0]"})
    checkRandom(program("%a: tensor<2x3x5xi32>",
                        std::string("%r = transpose %a {perm = ") + perm + "}\nreturn %r",
                        std::string("tensor<") +
                            (std::string(perm) == "[0, 2, 1]"   ? "2x5x3"
                             : std::string(perm) == "[2, 0, 1]" ? "5x2x3"
                             : std::string(perm) == "[1, 2, 0]" ? "3x5x2"
                                                                : "5x3x2") +
                            "xi32>"));
  checkRandom(program("%a: tensor<3xf64>",
                      "%r = broadcast %a {dims = [1]} : tensor<2x3x4xf64>\nreturn %r",
                      "tensor<2x3x4xf64>"));
  checkRandom(program("%a: tensor<3x1xi1>",
                      "%r = broadcast %a {dims = [0, 2]} : tensor<3x2x5xi1>\nreturn %r",
                      "tensor<3x2x5xi1>"));
  checkRandom(program("%a: tensor<i64>",
                      "%r = broadcast %a {dims = []} : tensor<4x2xi64>\nreturn %r",
                      "tensor<4x2xi64>"));
}

TEST_CASE("llvm elemental: concat, strided slice and pad", "[llvm]") {
  checkRandom(program("%a: tensor<2x3xf32>, %b: tensor<2x1xf32>, %c: tensor<2x4xf32>",
                      "%r = concat %a, %b, %c {dim = 1}\nreturn %r", "tensor<2x8xf32>"));
  checkRandom(program("%a: tensor<1x3xi64>, %b: tensor<2x3xi64>",
                      "%r = concat %a, %b, %a {dim = 0}\nreturn %r", "tensor<4x3xi64>"));
  checkRandom(program("%a: tensor<0x3xf32>, %b: tensor<2x3xf32>",
                      "%r = concat %a, %b {dim = 0}\nreturn %r", "tensor<2x3xf32>"));
  checkRandom(program("%a: tensor<7x9xf32>",
                      "%r = slice %a {start = [1, 0], limit = [7, 9], stride = [2, 3]}\nreturn %r",
                      "tensor<3x3xf32>"));
  checkRandom(program("%a: tensor<5xi32>", "%r = slice %a {start = [2], limit = [4]}\nreturn %r",
                      "tensor<2xi32>"));
  checkRandom(program("%a: tensor<2x3xf64>",
                      "%r = pad %a {low = [1, 0], high = [2, 3], value = -1.5}\nreturn %r",
                      "tensor<5x6xf64>"));
  checkRandom(program("%a: tensor<4xi32>",
                      "%r = pad %a {low = [3], high = [1], value = 7}\nreturn %r",
                      "tensor<8xi32>"));
  checkRandom(program("%a: tensor<2x2xi1>",
                      "%r = pad %a {low = [0, 1], high = [1, 0], value = true}\nreturn %r",
                      "tensor<3x3xi1>"));
  checkRandom(program("%a: tensor<0x2xf32>", "%r = pad %a {low = [1, 0], high = [0, 1]}\nreturn %r",
                      "tensor<1x3xf32>"));
}

TEST_CASE("llvm elemental: shape ops fuse into elementwise chains", "[llvm]") {
  // Every intermediate value is fused: one loop per returned value.
  std::string source =
      program("%a: tensor<4x6xf32>, %b: tensor<6xf32>, %c: tensor<3x8xf32>, %d: tensor<24x1xf32>",
              "%t = transpose %a {perm = [1, 0]}\n"
              "%s = slice %t {start = [0, 1], limit = [6, 4]}\n"
              "%bb = broadcast %b {dims = [0]} : tensor<6x3xf32>\n"
              "%m = mul %s, %bb\n"
              "%p = pad %m {low = [1, 0], high = [1, 0], value = 2.0}\n"
              "%rc = reshape %c : tensor<8x3xf32>\n"
              "%e = exp %rc\n"
              "%q = concat %p, %e, %rc {dim = 0}\n"
              "%r = sub %q, %d\n"
              "return %r",
              "tensor<24x3xf32>");
  checkRandom(source);
  ElementalKernel kernel(source);
  // %rc is read twice (exp and concat): materialized. concat computes each
  // operand at every position, so the exp is stored first rather than
  // computed for all 24 rows; everything else is fused.
  CHECK(kernel.plan().materialized.size() == 7); // %a %b %c %d %rc %e %r
}

TEST_CASE("llvm elemental: constants (splat and dense) and iota", "[llvm]") {
  checkRandom(program("%a: tensor<2x2xf32>",
                      "%c = constant dense<[[1.5, -2.0], [3.25, 0.0]]> : tensor<2x2xf32>\n"
                      "%r = add %a, %c\nreturn %r",
                      "tensor<2x2xf32>"));
  checkRandom(program("%a: tensor<3xi64>",
                      "%c = constant dense<[-9223372036854775808, 5, 9223372036854775807]> : "
                      "tensor<3xi64>\n%r = sub %c, %a\nreturn %r",
                      "tensor<3xi64>"));
  checkRandom(program("%a: tensor<3xi1>",
                      "%c = constant dense<[true, false, true]> : tensor<3xi1>\n"
                      "%r = xor %a, %c\nreturn %r",
                      "tensor<3xi1>"));
  checkRandom(program("%a: tensor<2x3xi32>",
                      "%c = constant dense<-7> : tensor<2x3xi32>\n%r = mul %a, %c\nreturn %r",
                      "tensor<2x3xi32>"));
  checkRandom(program("", "%c = constant dense<2.5> : tensor<f64>\nreturn %c", "tensor<f64>"));
  for (const char *type :
       {"tensor<5xi32>", "tensor<3x4xf32>", "tensor<2x3x4xi64>", "tensor<4x3x2xf64>"})
    for (int dim = 0; dim < 3; ++dim) {
      std::string text = type;
      int rank = static_cast<int>(std::count(text.begin(), text.end(), 'x'));
      if (dim >= rank)
        continue;
      checkRandom(program(
          "", "%c = iota {dim = " + std::to_string(dim) + "} : " + text + "\nreturn %c", text));
    }
}

TEST_CASE("llvm elemental: random values equal the interpreter's at every shape", "[llvm]") {
  for (const char *type : {"tensor<f32>", "tensor<7xf32>", "tensor<3x5xf64>", "tensor<2x3x64xf32>",
                           "tensor<1000xf64>"}) {
    INFO(type);
    checkRandom(
        program("", std::string("%r = random_uniform {seed = 7} : ") + type + "\nreturn %r", type),
        1e-15, 0);
    checkRandom(program("",
                        std::string("%r = random_uniform {seed = 3, low = -2.0, high = 5.0} : ") +
                            type + "\nreturn %r",
                        type),
                1e-15, 0);
    checkRandom(
        program("", std::string("%r = random_normal {seed = 11} : ") + type + "\nreturn %r", type),
        1e-6, 1e-12);
    checkRandom(program("",
                        std::string("%r = random_normal {seed = 0, mean = 1.0, stddev = 0.5} : ") +
                            type + "\nreturn %r",
                        type),
                1e-6, 1e-12);
  }
}

namespace {

/// The element types a test of the emitter's loops runs: all of `all` in the
/// optimized build; under the sanitizers, which check the emitter (compiled
/// code runs uninstrumented), those of `sampled`, one per element size and
/// kind. Each type is a kernel compiled by LLVM's O3 per case.
std::vector<const char *> loopDtypes(std::vector<const char *> all,
                                     std::vector<const char *> sampled) {
  return kSampleSweeps ? sampled : all;
}
} // namespace

TEST_CASE("llvm elemental: reductions over every dim subset of a rank-3 input", "[llvm]") {
  const char *subsets[] = {"[]", "[0]", "[1]", "[2]", "[0, 1]", "[0, 2]", "[1, 2]", "[0, 1, 2]"};
  for (const char *op : {"reduce_sum", "reduce_max", "reduce_min", "reduce_mean"}) {
    for (const char *dtype : loopDtypes({"f32", "f64", "i32", "i64"}, {"f32", "i64"})) {
      if (std::string(op) == "reduce_mean" && dtype[0] == 'i')
        continue; // a float-only op
      for (const char *dims : subsets) {
        for (bool keep : {false, true}) {
          // The result type: kept dims, and reduced dims as 1 with keep_dims.
          const int64_t shape[] = {3, 4, 5};
          std::string result = "tensor<";
          for (int d = 0; d < 3; ++d) {
            bool reduced = std::string(dims).find(std::to_string(d)) != std::string::npos;
            if (!reduced || keep)
              result += std::to_string(reduced ? 1 : shape[d]) + "x";
          }
          result += std::string(dtype) + ">";
          std::string source =
              program(std::string("%a: tensor<3x4x5x") + dtype + ">",
                      std::string("%r = ") + op + " %a {dims = " + dims +
                          ", keep_dims = " + (keep ? "true" : "false") + "}\nreturn %r",
                      result);
          checkRandom(source, 1e-6, 1e-6);
        }
      }
    }
  }
}

TEST_CASE("llvm elemental: reductions of fused chains, NaN and empty inputs", "[llvm]") {
  checkRandom(program("%a: tensor<6x7xf32>, %b: tensor<7xf32>",
                      "%m = mul %a, %b\n%e = exp %m\n"
                      "%r = reduce_sum %e {dims = [1]}\nreturn %r",
                      "tensor<6xf32>"),
              1e-6, 1e-6);
  ElementalKernel kernel(program("%a: tensor<2x3xf64>",
                                 "%r = reduce_max %a {dims = [1]}\n"
                                 "%s = reduce_min %a {dims = [0]}\nreturn %r, %s",
                                 "(tensor<2xf64>, tensor<3xf64>)"));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  checkAgainstInterpreter(
      kernel, {interp::makeFloatTensor(TensorType{{2, 3}, DType::F64}, {1, nan, 3, -1, -5, 2})});
  for (const char *op : {"reduce_sum", "reduce_max", "reduce_min", "reduce_mean"})
    for (const char *dtype : {"f32", "i32"})
      if (std::string(op) != "reduce_mean" || dtype[0] == 'f')
        checkRandom(program(std::string("%a: tensor<0x3x") + dtype + ">",
                            std::string("%r = ") + op + " %a {dims = [0]}\nreturn %r",
                            std::string("tensor<3x") + dtype + ">"));
}

TEST_CASE("llvm elemental: reductions keeping the innermost dim walk rows", "[llvm]") {
  // Rows longer than one block of accumulators (256), with a partial last
  // block; the operand is a fused chain.
  for (const char *op : {"reduce_sum", "reduce_max", "reduce_min", "reduce_mean"})
    checkRandom(program("%a: tensor<5x1000xf32>, %b: tensor<1000xf32>",
                        std::string("%m = mul %a, %b\n%r = ") + op +
                            " %m {dims = [0], keep_dims = true}\nreturn %r",
                        "tensor<1x1000xf32>"),
                1e-6, 1e-6);
  checkRandom(program("%a: tensor<3x4x600xi64>", "%r = reduce_sum %a {dims = [0, 1]}\nreturn %r",
                      "tensor<600xi64>"));
  ElementalKernel columns(program("%a: tensor<64x128xf32>",
                                  "%r = reduce_sum %a {dims = [0]}\nreturn %r", "tensor<128xf32>"));
  checkAgainstInterpreter(columns, columns.randomArgs(8), 1e-6, 1e-6);
  CHECK(columns.ir().find("vector.body") != std::string::npos);
  // The accumulators are cache-line aligned (no vector straddles two lines).
  CHECK(columns.ir().find("alloca [128 x double], align 64") != std::string::npos);
}

TEST_CASE("llvm elemental: loops reading transposed operands in tiles", "[llvm]") {
  // Every permutation of a rank-3 operand whose dims are longer than a tile
  // (16 for 4-byte, 8 for 8-byte elements) and not multiples of it, alone
  // (a copy in tiles) and fused with a straight operand; every dtype (i1 is
  // not tiled, its reads must still be right).
  const std::vector<int64_t> shape = {17, 33, 20};
  const std::vector<std::vector<int64_t>> perms = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                                   {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  auto typeOf = [](const std::vector<int64_t> &dims, const std::string &dtype) {
    return "tensor<" + std::to_string(dims[0]) + "x" + std::to_string(dims[1]) + "x" +
           std::to_string(dims[2]) + "x" + dtype + ">";
  };
  for (const char *dtype : loopDtypes({"f32", "f64", "i32", "i64", "i1"}, {"f32", "f64", "i1"}))
    for (const std::vector<int64_t> &perm : perms) {
      std::vector<int64_t> result = {shape[perm[0]], shape[perm[1]], shape[perm[2]]};
      std::string permText = "[" + std::to_string(perm[0]) + ", " + std::to_string(perm[1]) + ", " +
                             std::to_string(perm[2]) + "]";
      std::string a = "%a: " + typeOf(shape, dtype);
      std::string r = typeOf(result, dtype);
      checkRandom(program(a, "%r = transpose %a {perm = " + permText + "}\nreturn %r", r));
      const char *combine = std::string(dtype) == "i1" ? "and" : "sub";
      checkRandom(program(a + ", %b: " + r,
                          "%t = transpose %a {perm = " + permText + "}\n%r = " + combine +
                              " %b, %t\nreturn %r",
                          r));
    }
  // Shapes spanning several blocks (128 rows of 4-byte, 64 of 8-byte
  // elements, columns filling 256 KiB of buffers: 512 here): whole blocks, a
  // shorter last block of whole tiles along each tiled dim, and the rows and
  // columns past the last whole tile; two tiled operands of different widths
  // share the blocks (8 x 8 tiles, 336 columns for both).
  for (const char *dtype : loopDtypes({"f32", "f64", "i32", "i64"}, {"f32", "f64"})) {
    std::string m = std::string("tensor<2x600x300x") + dtype + ">";
    std::string r = std::string("tensor<2x300x600x") + dtype + ">";
    checkRandom(program("%a: " + m + ", %b: " + r,
                        "%t = transpose %a {perm = [0, 2, 1]}\n%r = add %b, %t\nreturn %r", r));
  }
  checkRandom(program("%a: tensor<600x300xf32>, %b: tensor<600x300xf64>",
                      "%t = transpose %a {perm = [1, 0]}\n%c = convert %t : tensor<300x600xf64>\n"
                      "%u = transpose %b {perm = [1, 0]}\n%r = add %c, %u\nreturn %r",
                      "tensor<300x600xf64>"));
  checkRandom(program("%a: tensor<600x3x140xf32>",
                      "%r = transpose %a {perm = [2, 1, 0]}\nreturn %r", "tensor<140x3x600xf32>"));
  ElementalKernel blocks(program("%a: tensor<512x512xf32>",
                                 "%r = transpose %a {perm = [1, 0]}\nreturn %r",
                                 "tensor<512x512xf32>"));
  checkAgainstInterpreter(blocks, blocks.randomArgs(4));
  // One buffer of 128 rows of 512 floats and a tile's 16 of padding.
  CHECK(blocks.ir().find("alloca [67584 x float]") != std::string::npos);

  // NaN, infinities and -0 go through the tiles unchanged.
  ElementalKernel copy(program("%a: tensor<16x16xf32>",
                               "%r = transpose %a {perm = [1, 0]}\nreturn %r",
                               "tensor<16x16xf32>"));
  std::vector<double> values(256);
  const double inf = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = i % 4 == 0   ? std::numeric_limits<double>::quiet_NaN()
                : i % 4 == 1 ? (i % 8 == 1 ? inf : -inf)
                : i % 4 == 2 ? -0.0
                             : static_cast<double>(i);
  checkAgainstInterpreter(copy,
                          {interp::makeFloatTensor(TensorType{{16, 16}, DType::F32}, values)});
  CHECK(copy.ir().find("shufflevector") != std::string::npos);
}
