// Unit tests for the LLVM backend's fusion plan (backend/llvm/Fusion.cpp):
// which values live in memory, and that a fused chain becomes one
// vectorized loop with no temporary buffer.
#include "CompileForTest.h"
#include "LlvmElementalHarness.h"

#include <llvm/Support/Host.h>

#include <algorithm>
#include <limits>

using namespace shardc;
using namespace shardc::testing;

namespace {

/// The names of the materialized values of @main, sorted.
std::vector<std::string> materializedNames(const ElementalKernel &kernel) {
  std::vector<std::string> names;
  for (const Value *v : kernel.plan().materialized)
    names.push_back(v->name);
  std::sort(names.begin(), names.end());
  return names;
}

size_t countOf(const std::string &text, const std::string &needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
    ++n;
  return n;
}

/// The text of each basic block of `ir` (LLVM prints a blank line between
/// blocks).
std::vector<std::string> basicBlocks(const std::string &ir) {
  std::vector<std::string> blocks;
  for (size_t at = 0; at < ir.size();) {
    size_t end = ir.find("\n\n", at);
    blocks.push_back(ir.substr(at, end == std::string::npos ? std::string::npos : end - at));
    at = end == std::string::npos ? ir.size() : end + 2;
  }
  return blocks;
}

using Names = std::vector<std::string>;

/// The members of the row group of `root`, in order, a whole-row member
/// marked with a `*`; "none" without a group.
std::string rowGroupOf(const ElementalKernel &kernel, const std::string &root) {
  for (const auto &[value, members] : kernel.plan().rowGroups) {
    if (value->name != root)
      continue;
    std::string text;
    for (const llvmgen::FusionPlan::RowMember &m : members)
      text += (text.empty() ? "" : " ") + m.value->name + (m.wholeRow ? "*" : "");
    return text;
  }
  return "none";
}

} // namespace

TEST_CASE("fusion: an elementwise chain is one vectorized loop without temporaries", "[llvm]") {
  ElementalKernel kernel(program("%a: tensor<4096xf32>, %b: tensor<4096xf32>, %c: tensor<4096xf32>",
                                 "%m = mul %a, %b\n%s = add %m, %c\n%t = tanh %s\nreturn %t",
                                 "tensor<4096xf32>"));
  CHECK(materializedNames(kernel) == Names{"a", "b", "c", "t"});
  checkAgainstInterpreter(kernel, kernel.randomArgs(9));
  const std::string &ir = kernel.ir();
  INFO(ir);
  CHECK(countOf(ir, "vector.body:") == 1); // one loop, vectorized
  // Writing only %t: a vector store per three vector loads (%a, %b, %c),
  // however far LLVM unrolls the loop (AVX2's 8-float vectors are unrolled,
  // AVX-512's 16 are not).
  CHECK(countOf(ir, "store <") >= 1);
  CHECK(countOf(ir, "load <") == 3 * countOf(ir, "store <"));
  CHECK(countOf(ir, "alloca") == 0);
  llvm::StringMap<bool> features;
  // tanh, its exp included, is inline at the target's widest vectors, in f32
  // and f64: no vector library call is left in the loop.
  ElementalKernel f64(
      program("%a: tensor<4096xf64>", "%t = tanh %a\nreturn %t", "tensor<4096xf64>"));
  checkAgainstInterpreter(f64, f64.randomArgs(9), 1e-13, 1e-300);
  CHECK(ir.find("@_ZGV") == std::string::npos);
  CHECK(f64.ir().find("@_ZGV") == std::string::npos);
  if (llvm::sys::getHostCPUFeatures(features) && features["avx512f"]) {
    CHECK(ir.find("fmul <16 x float>") != std::string::npos);
    CHECK(f64.ir().find("fdiv <8 x double>") != std::string::npos);
  } else if (features["avx2"]) {
    CHECK(ir.find("fmul <8 x float>") != std::string::npos);
    CHECK(f64.ir().find("fdiv <4 x double>") != std::string::npos);
  }
}

TEST_CASE("fusion: a broadcast row stays fused and the loop over rows vectorizes", "[llvm]") {
  ElementalKernel kernel(program("%a: tensor<64x128xf32>, %b: tensor<128xf32>",
                                 "%m = mul %a, %b\n%r = exp %m\nreturn %r", "tensor<64x128xf32>"));
  CHECK(materializedNames(kernel) == Names{"a", "b", "r"});
  checkAgainstInterpreter(kernel, kernel.randomArgs(4));
  // Vectorized: (alias scopes leave no run-time check, so the vector loop
  // over a row of 128 is unrolled whole and has no vector.body of its own)
  CHECK(countOf(kernel.ir(), "fmul <") >= 1);
  CHECK(hasInlineVectorExp(kernel.ir()));
}

TEST_CASE("fusion: values read twice, returned or dead", "[llvm]") {
  ElementalKernel kernel(program("%a: tensor<8xf32>",
                                 "%e = exp %a\n%dead = log %a\n%s = add %e, %e\n"
                                 "%n = neg %s\n%r = mul %n, %e\nreturn %r, %n",
                                 "(tensor<8xf32>, tensor<8xf32>)"));
  // %e has three uses, %n is returned and used; %dead is never computed.
  CHECK(materializedNames(kernel) == Names{"a", "e", "n", "r"});
  checkAgainstInterpreter(kernel, kernel.randomArgs(2));
}

TEST_CASE("fusion: reductions are materialized, their operand chains fused", "[llvm]") {
  ElementalKernel kernel(program("%a: tensor<16x32xf32>",
                                 "%e = exp %a\n%s = reduce_sum %e {dims = [1]}\n"
                                 "%l = log %s\nreturn %l",
                                 "tensor<16xf32>"));
  CHECK(materializedNames(kernel) == Names{"a", "l", "s"});
  checkAgainstInterpreter(kernel, kernel.randomArgs(3), 1e-6, 1e-6);
}

TEST_CASE("fusion: an expensive chain is not recomputed per broadcast element", "[llvm]") {
  // softmax: exp(max) would run 32 times per row if fused into the broadcast.
  std::string softmax = program("%a: tensor<16x32xf32>",
                                "%m = reduce_max %a {dims = [1]}\n"
                                "%em = exp %m\n"
                                "%b = broadcast %em {dims = [0]} : tensor<16x32xf32>\n"
                                "%ea = exp %a\n"
                                "%r = div %ea, %b\nreturn %r",
                                "tensor<16x32xf32>");
  // (Row groups take %m and %em into %r's loop, once per row.)
  ElementalKernel kernel(softmax);
  CHECK(materializedNames(kernel) == Names{"a", "r"});
  CHECK(rowGroupOf(kernel, "r") == "m em");
  checkAgainstInterpreter(kernel, kernel.randomArgs(1));
  // A cheap chain (a load and an add) is recomputed rather than stored.
  ElementalKernel cheap(program("%a: tensor<16xf32>, %c: tensor<16x32xf32>",
                                "%s = add %a, %a\n"
                                "%b = broadcast %s {dims = [0]} : tensor<16x32xf32>\n"
                                "%r = mul %b, %c\nreturn %r",
                                "tensor<16x32xf32>"));
  CHECK(materializedNames(cheap) == Names{"a", "c", "r"});
  checkAgainstInterpreter(cheap, cheap.randomArgs(1));
}

TEST_CASE("fusion: operands and results of non-elemental ops are in memory", "[llvm]") {
  std::string source = program("%a: tensor<4x8xf32>, %b: tensor<8x2xf32>",
                               "%e = exp %a\n%m = matmul %e, %b\n%t = tanh %m\n"
                               "%r = neg %t\nreturn %r",
                               "tensor<4x2xf32>");
  std::unique_ptr<Module> module = shardc::testing::compileForTest("fusion.shd", source);
  llvmgen::FusionPlan plan = llvmgen::planFusion(module->findFunction("main")->body);
  std::vector<std::string> names;
  for (const Value *v : plan.materialized)
    names.push_back(v->name);
  std::sort(names.begin(), names.end());
  CHECK(names == Names{"a", "b", "e", "m", "r"});
  CHECK(shardc::isElementalOp(OpKind::Tanh));
  CHECK(shardc::isElementalOp(OpKind::ReduceMean));
  CHECK(shardc::isElementalOp(OpKind::RandomNormal));
  CHECK_FALSE(shardc::isElementalOp(OpKind::Matmul));
  CHECK_FALSE(shardc::isElementalOp(OpKind::AllGather));
  CHECK_FALSE(shardc::isElementalOp(OpKind::ManualComputation));
}
TEST_CASE("fusion: max and min over rows vectorize and still propagate NaN", "[llvm]") {
  for (const char *op : {"reduce_max", "reduce_min"}) {
    ElementalKernel kernel(program("%a: tensor<4x256xf32>",
                                   std::string("%r = ") + op + " %a {dims = [1]}\nreturn %r",
                                   "tensor<4xf32>"));
    INFO(kernel.ir());
    CHECK(kernel.ir().find("x float>") != std::string::npos); // vector code
    std::vector<double> values(1024);
    for (size_t i = 0; i < values.size(); ++i)
      values[i] = static_cast<double>((i * 37) % 101) - 50;
    values[3] = std::numeric_limits<double>::quiet_NaN();   // row 0: first block
    values[511] = std::numeric_limits<double>::quiet_NaN(); // row 1: last element
    values[600] = -std::numeric_limits<double>::infinity();
    checkAgainstInterpreter(kernel,
                            {interp::makeFloatTensor(TensorType{{4, 256}, DType::F32}, values)});
  }
}

TEST_CASE("row groups: softmax is one loop over rows, read once from memory", "[llvm]") {
  for (const char *dtype : {"f32", "f64"}) {
    std::string t = std::string("tensor<5x3x131x") + dtype + ">";
    ElementalKernel kernel(program("%a: " + t,
                                   "%m = reduce_max %a {dims = [2], keep_dims = true}\n"
                                   "%z = sub %a, %m\n%e = exp %z\n"
                                   "%s = reduce_sum %e {dims = [2], keep_dims = true}\n"
                                   "%p = div %e, %s\nreturn %p",
                                   t));
    INFO(dtype << "\n" << kernel.ir());
    CHECK(materializedNames(kernel) == Names{"a", "p"});
    CHECK(rowGroupOf(kernel, "p") == "m e* s");
    checkAgainstInterpreter(kernel, kernel.randomArgs(7), 1e-6, 1e-6);
    // Two row buffers of 131 on the stack (the row whose exp is being
    // computed and the one being divided), and every pass over the row
    // vectorized.
    std::string buffer = std::string("alloca [131 x ") + (dtype[1] == '3' ? "float" : "double");
    CHECK(countOf(kernel.ir(), buffer) == 2);
    // cache-line aligned: no vector of a pass straddles two lines
    CHECK(countOf(kernel.ir(), buffer + "], align 64") == 2);
    const std::string &ir = kernel.ir();
    CHECK(countOf(ir, "@llvm.maxnum.v") >= 1); // the max
    // The exp: inline, no call.
    CHECK((hasInlineVectorExp(ir) && countOf(ir, "@_ZGV") == 0));
    CHECK(countOf(ir, "fadd reassoc <") >= 1); // the sum
    // The rows ahead: (address, 0: read or 1: write, locality, data). The
    // row written is prefetched for writing, or its stores wait for memory.
    CHECK(countOf(ir, ", i32 0, i32 3, i32 1)") >= 1);
    CHECK(countOf(ir, ", i32 1, i32 3, i32 1)") >= 1);
    // Pipelined: one block of vector code (the loop along the row, here
    // unrolled whole) takes the max of a row, the exp and sum of the row
    // before and divides the row before that.
    bool allInOne = false;
    for (const std::string &body : basicBlocks(ir))
      allInOne =
          allInOne || (countOf(body, "@llvm.maxnum.v") >= 1 && hasInlineVectorExp(body) &&
                       countOf(body, "fadd reassoc <") >= 1 && countOf(body, "!alias.scope") >= 1);
    CHECK(allInOne);
  }
}

TEST_CASE("row groups: each stage of the pipeline reads the row it is on", "[llvm]") {
  // Few rows (fewer than the stages: only the fill and drain iterations),
  // many rows, a row buffer read two stages after it is written (a ring of
  // three), per-row values computed from the reductions, and a root whose
  // rows are shorter than the reduced ones (no pipeline).
  for (int rows : {1, 2, 3, 4, 9}) {
    std::string n = std::to_string(rows);
    std::string t = "tensor<" + n + "x37xf32>", u = "tensor<" + n + "x5xf32>";
    ElementalKernel kernel(program("%a: " + t + ", %b: " + u,
                                   "%w = mul %a, %a\n"
                                   "%s = reduce_sum %w {dims = [1], keep_dims = true}\n"
                                   "%q = div %w, %s\n"
                                   "%m = reduce_max %q {dims = [1], keep_dims = true}\n"
                                   "%l = log %m\n%r = div %w, %l\n"
                                   "%am = reduce_max %a {dims = [1], keep_dims = true}\n"
                                   "%x = div %b, %am\nreturn %r, %x",
                                   "(" + t + ", " + u + ")"));
    INFO(rows << " rows\n" << kernel.ir());
    CHECK(rowGroupOf(kernel, "r") == "w* s m l");
    CHECK(rowGroupOf(kernel, "x") == "am");
    checkAgainstInterpreter(kernel, kernel.randomArgs(static_cast<uint64_t>(rows)), 1e-5, 1e-6);
  }
}

TEST_CASE("row groups: layer norm and log-sum-exp, broadcasts and keep_dims", "[llvm]") {
  ElementalKernel norm(program("%x: tensor<6x1x9xf64>",
                               "%m = reduce_mean %x {dims = [2], keep_dims = true}\n"
                               "%c = sub %x, %m\n%sq = mul %c, %c\n"
                               "%v = reduce_mean %sq {dims = [2]}\n"
                               "%vb = broadcast %v {dims = [0, 1]} : tensor<6x1x9xf64>\n"
                               "%r = rsqrt %vb\n%n = mul %c, %r\nreturn %n",
                               "tensor<6x1x9xf64>"));
  CHECK(materializedNames(norm) == Names{"n", "x"});
  CHECK(rowGroupOf(norm, "n") == "m c* v");
  checkAgainstInterpreter(norm, norm.randomArgs(3), 1e-9, 1e-9);

  // One row: x - log(sum(exp(x - max))) - max.
  ElementalKernel lse(program("%x: tensor<19xf32>",
                              "%m = reduce_max %x {dims = [0], keep_dims = true}\n"
                              "%z = sub %x, %m\n%e = exp %z\n"
                              "%s = reduce_sum %e {dims = [0], keep_dims = true}\n"
                              "%l = log %s\n%lm = add %l, %m\n%r = sub %x, %lm\nreturn %r",
                              "tensor<19xf32>"));
  CHECK(materializedNames(lse) == Names{"r", "x"});
  CHECK(rowGroupOf(lse, "r") == "m s lm");
  checkAgainstInterpreter(lse, lse.randomArgs(5), 1e-5, 1e-6);

  // Rows of length 1: the reduction's result has the root's shape.
  ElementalKernel ones(program("%x: tensor<7x1xf32>",
                               "%m = reduce_max %x {dims = [1], keep_dims = true}\n"
                               "%e = exp %m\n%s = reduce_sum %e {dims = [1], keep_dims = true}\n"
                               "%r = div %x, %s\nreturn %r",
                               "tensor<7x1xf32>"));
  CHECK(rowGroupOf(ones, "r") == "m s");
  checkAgainstInterpreter(ones, ones.randomArgs(2), 1e-6, 1e-6);
}

TEST_CASE("row groups: what stays in memory", "[llvm]") {
  // The max is also returned: it stays in memory and the group reads it.
  ElementalKernel returned(program("%a: tensor<8x16xf32>",
                                   "%m = reduce_max %a {dims = [1], keep_dims = true}\n"
                                   "%z = sub %a, %m\n%e = exp %z\n"
                                   "%s = reduce_sum %e {dims = [1], keep_dims = true}\n"
                                   "%p = div %e, %s\nreturn %p, %m",
                                   "(tensor<8x16xf32>, tensor<8x1xf32>)"));
  CHECK(materializedNames(returned) == Names{"a", "m", "p"});
  CHECK(rowGroupOf(returned, "p") == "e* s");
  checkAgainstInterpreter(returned, returned.randomArgs(1), 1e-6, 1e-6);

  // A value read by another loop too: it stays in memory.
  ElementalKernel shared(program("%a: tensor<8x16xf32>",
                                 "%e = exp %a\n%s = reduce_sum %e {dims = [1], keep_dims = true}\n"
                                 "%p = div %e, %s\n%q = neg %e\nreturn %p, %q",
                                 "(tensor<8x16xf32>, tensor<8x16xf32>)"));
  CHECK(materializedNames(shared) == Names{"a", "e", "p", "q"});
  CHECK(rowGroupOf(shared, "p") == "s");
  checkAgainstInterpreter(shared, shared.randomArgs(1), 1e-6, 1e-6);

  // Reductions over another dim, and rows too long to stay in cache.
  ElementalKernel columns(program("%a: tensor<8x16xf32>",
                                  "%m = reduce_max %a {dims = [0], keep_dims = true}\n"
                                  "%z = sub %a, %m\nreturn %z",
                                  "tensor<8x16xf32>"));
  CHECK(materializedNames(columns) == Names{"a", "m", "z"});
  CHECK(columns.plan().rowGroups.empty());
  ElementalKernel longRows(program("%a: tensor<2x10000xf32>",
                                   "%m = reduce_max %a {dims = [1], keep_dims = true}\n"
                                   "%z = sub %a, %m\nreturn %z",
                                   "tensor<2x10000xf32>"));
  CHECK(materializedNames(longRows) == Names{"a", "m", "z"});
  CHECK(longRows.plan().rowGroups.empty());
}
