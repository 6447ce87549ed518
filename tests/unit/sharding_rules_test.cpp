// Unit tests of the factor-based sharding rules (passes/rules/ShardingRules.h): the
// rule of every op of LANGUAGE.md section 5 on parsed and type-inferred IR,
// numpy broadcasting, batched matmul, einsum, reductions, the shape ops, the
// reshape factorization (Shardy's registry cases and a property test over
// random shape pairs), and the invariant checker.
#include "frontend/Parser.h"
#include "passes/Passes.h"
#include "passes/rules/ShardingRules.h"

#include "tests/unit/RuleTestHelpers.h"
#include "tests/unit/TestHelpers.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <set>

using namespace shardc;

namespace {

using Shape = std::vector<int64_t>;
using testing::Errors;
using testing::RuleProgram;

std::string reshape(const Shape &from, const Shape &to) {
  std::optional<ShardingRule> rule = reshapeRule(from, to);
  REQUIRE(rule);
  std::optional<std::string> violation = checkShardingRule(*rule, {from}, {to});
  INFO(rule->str());
  CHECK_FALSE(violation);
  return rule->str();
}

} // namespace

// ---- the rule type ------------------------------------------------------------

TEST_CASE("str prints Shardy's text: factors, sizes, kinds, empty dims", "[rules]") {
  ShardingRule rule;
  int i = rule.addFactor(8, FactorKind::PassThrough);
  int j = rule.addFactor(32, FactorKind::PassThrough);
  int k = rule.addFactor(16, FactorKind::Reduction);
  rule.operands = {{{i}, {k}}, {{k}, {j}}};
  rule.results = {{{i}, {j}}};
  CHECK(rule.str() == "([i, k], [k, j])->([i, j]) {i=8, j=32, k=16} reduction={k}");

  int l = rule.addFactor(4, FactorKind::NeedReplication);
  int m = rule.addFactor(2, FactorKind::Permutation);
  rule.operands.push_back({{l, m}, {}});
  rule.operands.emplace_back();
  CHECK(rule.str() == "([i, k], [k, j], [lm, 1], [])->([i, j]) {i=8, j=32, k=16, l=4, m=2} "
                      "reduction={k} need_replication={l} permutation={m}");

  ShardingRule scalar;
  scalar.operands = {{}, {}};
  scalar.results = {{}};
  CHECK(scalar.str() == "([], [])->([])");
}

TEST_CASE("factor names run i..z, then z_1, z_2, ...", "[rules]") {
  CHECK(ShardingRule::factorName(0) == "i");
  CHECK(ShardingRule::factorName(17) == "z");
  CHECK(ShardingRule::factorName(18) == "z_1");
  CHECK(ShardingRule::factorName(20) == "z_3");
}

TEST_CASE("factor kinds have Shardy's spellings", "[rules]") {
  CHECK(std::string(factorKindName(FactorKind::PassThrough)) == "pass_through");
  CHECK(std::string(factorKindName(FactorKind::Reduction)) == "reduction");
  CHECK(std::string(factorKindName(FactorKind::NeedReplication)) == "need_replication");
  CHECK(std::string(factorKindName(FactorKind::Permutation)) == "permutation");
}

TEST_CASE("checkShardingRule reports the first broken invariant", "[rules]") {
  ShardingRule rule;
  int i = rule.addFactor(2, FactorKind::PassThrough);
  int j = rule.addFactor(4, FactorKind::Reduction);
  rule.operands = {{{i, j}}};
  rule.results = {{{i}}};
  CHECK_FALSE(checkShardingRule(rule, {{8}}, {{2}}));

  CHECK(checkShardingRule(rule, {{6}}, {{2}}) ==
        "operand 0 dim 0 - product of factor sizes doesn't match dim size: 8 != 6");
  CHECK(checkShardingRule(rule, {{8}, {8}}, {{2}}) == "number of operands doesn't match: 1 != 2");
  CHECK(checkShardingRule(rule, {{8}}, {{2, 1}}) == "result 0 - rank doesn't match: 1 != 2");

  ShardingRule reductionOnResult = rule;
  reductionOnResult.results = {{{i, j}}};
  CHECK(checkShardingRule(reductionOnResult, {{8}}, {{8}}) ==
        "result 0 dim 0 - reduction factor on a result: j");

  ShardingRule twice = rule;
  twice.operands = {{{i}, {i}}};
  CHECK(checkShardingRule(twice, {{2, 2}}, {{2}}) ==
        "operand 0 dim 1 - factor used twice in one tensor: i");

  ShardingRule unused = rule;
  unused.addFactor(3, FactorKind::PassThrough);
  CHECK(checkShardingRule(unused, {{8}}, {{2}}) == "factor used by no tensor: k");

  ShardingRule unknown = rule;
  unknown.results = {{{7}}};
  CHECK(checkShardingRule(unknown, {{8}}, {{2}}) == "result 0 dim 0 - unknown factor: 7");

  // A permutation factor may differ in size from its dims, but stays alone.
  ShardingRule permutation;
  int p = permutation.addFactor(8, FactorKind::Permutation);
  permutation.operands = {{{p}}};
  permutation.results = {{{p}}};
  CHECK_FALSE(checkShardingRule(permutation, {{8}}, {{3}}));
  int q = permutation.addFactor(1, FactorKind::PassThrough);
  permutation.results = {{{p, q}}};
  CHECK(checkShardingRule(permutation, {{8}}, {{8}}) ==
        "result 0 dim 0 - permutation factor shares its dim: i");
}

// ---- elementwise, sharding and creation ops -----------------------------------------

TEST_CASE("unary ops and convert map each dim to one pass-through factor", "[rules]") {
  std::string text = "func @f(%x: tensor<4x8xf32>, %b: tensor<4x8xi1>, %s: tensor<f32>) {\n";
  std::vector<std::string> names;
  for (const OpInfo &info : allOps()) {
    if (info.group != OpGroup::Unary)
      continue;
    std::string name = std::string("u_") + info.name;
    text += "  %" + name + " = " + info.name + (info.kind == OpKind::Not ? " %b\n" : " %x\n");
    names.push_back(name);
  }
  text += "  %c = convert %x : tensor<4x8xf64>\n  %n = neg %s\n}\n";
  RuleProgram p(text);
  for (const std::string &name : names)
    CHECK(p.rule(name) == "([i, j])->([i, j]) {i=4, j=8}");
  CHECK(p.rule("c") == "([i, j])->([i, j]) {i=4, j=8}");
  CHECK(p.rule("n") == "([])->([])");
}

TEST_CASE("sharding_constraint and reshard are pass-through", "[rules]") {
  RuleProgram p(R"(
@mesh_x2 = <["x"=2]>
func @f(%a: tensor<8x16xf32>) {
  %c = sharding_constraint %a sharding<@mesh_x2, [{"x"}, {?}]>
  %r = reshard %c sharding<@mesh_x2, [{}, {"x"}]>
}
)");
  CHECK(p.rule("c") == "([i, j])->([i, j]) {i=8, j=16}");
  CHECK(p.rule("r") == "([i, j])->([i, j]) {i=8, j=16}");
}

TEST_CASE("binary ops broadcast numpy-style", "[rules]") {
  RuleProgram p(R"(
func @f(%a: tensor<4x8xf32>, %row: tensor<8xf32>, %col: tensor<4x1xf32>,
        %one: tensor<1x8xf32>, %s: tensor<f32>, %x: tensor<2x1x8xf32>,
        %y: tensor<3x1xf32>, %u: tensor<1x1xf32>) {
  %same = add %a, %a
  %lead = mul %a, %row
  %lead2 = sub %row, %a
  %both = add %col, %one
  %scalar = div %a, %s
  %mixed = max %x, %y
  %ones = min %u, %u
  %cmp = lt %a, %row
  %p = pow %col, %a
}
)");
  CHECK(p.rule("same") == "([i, j], [i, j])->([i, j]) {i=4, j=8}");
  CHECK(p.rule("lead") == "([i, j], [j])->([i, j]) {i=4, j=8}");
  CHECK(p.rule("lead2") == "([j], [i, j])->([i, j]) {i=4, j=8}");
  CHECK(p.rule("both") == "([i, 1], [1, j])->([i, j]) {i=4, j=8}");
  CHECK(p.rule("scalar") == "([i, j], [])->([i, j]) {i=4, j=8}");
  CHECK(p.rule("mixed") == "([i, 1, k], [j, 1])->([i, j, k]) {i=2, j=3, k=8}");
  CHECK(p.rule("ones") == "([i, j], [i, j])->([i, j]) {i=1, j=1}");
  CHECK(p.rule("cmp") == "([i, j], [j])->([i, j]) {i=4, j=8}");
  CHECK(p.rule("p") == "([i, 1], [i, j])->([i, j]) {i=4, j=8}");
}

TEST_CASE("every binary op has the broadcasting rule", "[rules]") {
  std::string text = "func @f(%a: tensor<4x8xi32>, %r: tensor<8xi32>, %b: tensor<4x8xi1>,\n"
                     "        %c: tensor<8xi1>) {\n";
  std::vector<std::string> names;
  for (const OpInfo &info : allOps()) {
    if (info.group != OpGroup::Binary || info.kind == OpKind::Select)
      continue;
    bool logical = info.kind == OpKind::And || info.kind == OpKind::Or || info.kind == OpKind::Xor;
    std::string name = std::string("b_") + info.name;
    text += "  %" + name + " = " + info.name + (logical ? " %b, %c\n" : " %a, %r\n");
    names.push_back(name);
  }
  text += "}\n";
  RuleProgram p(text);
  for (const std::string &name : names)
    CHECK(p.rule(name) == "([i, j], [j])->([i, j]) {i=4, j=8}");
}

TEST_CASE("select broadcasts its three operands", "[rules]") {
  RuleProgram p(R"(
func @f(%p: tensor<4x1xi1>, %ps: tensor<i1>, %a: tensor<8xf32>, %b: tensor<4x8xf32>) {
  %s = select %p, %a, %b
  %t = select %ps, %b, %b
}
)");
  CHECK(p.rule("s") == "([i, 1], [j], [i, j])->([i, j]) {i=4, j=8}");
  CHECK(p.rule("t") == "([], [i, j], [i, j])->([i, j]) {i=4, j=8}");
}

TEST_CASE("creation ops have one factor per result dim and no operands", "[rules]") {
  RuleProgram p(R"(
func @f() {
  %c = constant dense<1.5> : tensor<4x4xf32>
  %s = constant dense<2> : tensor<f64>
  %i = iota {dim = 1} : tensor<8x4xi32>
  %u = random_uniform {seed = 7, low = 0.0, high = 1.0} : tensor<16x2x3xf32>
  %n = random_normal {seed = 7} : tensor<16xf32>
}
)");
  CHECK(p.rule("c") == "()->([i, j]) {i=4, j=4}");
  CHECK(p.rule("s") == "()->([])");
  CHECK(p.rule("i") == "()->([i, j]) {i=8, j=4}");
  CHECK(p.rule("u") == "()->([i, j, k]) {i=16, j=2, k=3}");
  CHECK(p.rule("n") == "()->([i]) {i=16}");
}

// ---- contractions and reductions ---------------------------------------------------

TEST_CASE("matmul: m and n pass through, k is a reduction", "[rules]") {
  RuleProgram p(R"(
func @f(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>) {
  %m = matmul %a, %b
}
)");
  CHECK(p.rule("m") == "([i, k], [k, j])->([i, j]) {i=8, j=32, k=16} reduction={k}");
}

TEST_CASE("batched matmul: batch factors, absent where a batch dim broadcasts", "[rules]") {
  RuleProgram p(R"(
func @f(%a: tensor<2x8x16xf64>, %b: tensor<2x16x32xf64>, %w: tensor<16x32xf64>,
        %c: tensor<5x1x8x16xf64>, %d: tensor<3x16x32xf64>, %e: tensor<1x8x16xf64>,
        %g: tensor<1x16x4xf64>, %h: tensor<8x16xf64>) {
  %same = matmul %a, %b
  %rhs2d = matmul %a, %w
  %bcast = matmul %c, %d
  %ones = matmul %e, %g
  %lhs2d = matmul %h, %b
}
)");
  CHECK(p.rule("same") ==
        "([i, j, l], [i, l, k])->([i, j, k]) {i=2, j=8, k=32, l=16} reduction={l}");
  CHECK(p.rule("rhs2d") == "([i, j, l], [l, k])->([i, j, k]) {i=2, j=8, k=32, l=16} reduction={l}");
  CHECK(p.rule("bcast") == "([i, 1, k, m], [j, m, l])->([i, j, k, l]) "
                           "{i=5, j=3, k=8, l=32, m=16} reduction={m}");
  CHECK(p.rule("ones") ==
        "([i, j, l], [i, l, k])->([i, j, k]) {i=1, j=8, k=4, l=16} reduction={l}");
  CHECK(p.rule("lhs2d") == "([j, l], [i, l, k])->([i, j, k]) {i=2, j=8, k=32, l=16} reduction={l}");
}

TEST_CASE("einsum: one factor per label, summed labels are reductions", "[rules]") {
  RuleProgram p(R"(
func @f(%a: tensor<2x4x8xf32>, %b: tensor<2x8x16xf32>, %m: tensor<4x8xf32>,
        %u: tensor<4xf32>, %v: tensor<8xf32>, %c: tensor<8x16xf32>, %e: tensor<2x16xf32>) {
  %bmm = einsum "bij,bjk->bik" (%a, %b)
  %t = einsum "ij->ji" (%m)
  %all = einsum "ij->" (%m)
  %outer = einsum "i,j->ij" (%u, %v)
  %three = einsum "bij,jk,bk->bi" (%a, %c, %e)
  %spaced = einsum "ij, jk -> ik" (%m, %c)
  %rows = einsum "ij->i" (%m)
}
)");
  CHECK(p.rule("bmm") == "([i, j, l], [i, l, k])->([i, j, k]) {i=2, j=4, k=16, l=8} reduction={l}");
  CHECK(p.rule("t") == "([j, i])->([i, j]) {i=8, j=4}");
  CHECK(p.rule("all") == "([i, j])->([]) {i=4, j=8} reduction={i, j}");
  CHECK(p.rule("outer") == "([i], [j])->([i, j]) {i=4, j=8}");
  CHECK(p.rule("three") ==
        "([i, j, k], [k, l], [i, l])->([i, j]) {i=2, j=4, k=8, l=16} reduction={k, l}");
  CHECK(p.rule("spaced") == "([i, k], [k, j])->([i, j]) {i=4, j=16, k=8} reduction={k}");
  CHECK(p.rule("rows") == "([i, j])->([i]) {i=4, j=8} reduction={j}");
}

TEST_CASE("reductions: reduced dims on the operand only, keep_dims leaves a 1", "[rules]") {
  RuleProgram p(R"(
func @f(%x: tensor<2x4x8xf32>, %i: tensor<6xi64>) {
  %sum = reduce_sum %x {dims = [1]}
  %max = reduce_max %x {dims = [0, 2], keep_dims = true}
  %min = reduce_min %x {dims = [2, 0], keep_dims = false}
  %mean = reduce_mean %x {dims = [0, 1, 2]}
  %none = reduce_sum %x {dims = []}
  %kept = reduce_sum %x {dims = [1], keep_dims = true}
  %vec = reduce_sum %i {dims = [0]}
  %allkept = reduce_mean %x {dims = [0, 1, 2], keep_dims = true}
}
)");
  CHECK(p.rule("sum") == "([i, j, k])->([i, k]) {i=2, j=4, k=8} reduction={j}");
  CHECK(p.rule("max") == "([i, j, k])->([1, j, 1]) {i=2, j=4, k=8} reduction={i, k}");
  CHECK(p.rule("min") == "([i, j, k])->([j]) {i=2, j=4, k=8} reduction={i, k}");
  CHECK(p.rule("mean") == "([i, j, k])->([]) {i=2, j=4, k=8} reduction={i, j, k}");
  CHECK(p.rule("none") == "([i, j, k])->([i, j, k]) {i=2, j=4, k=8}");
  CHECK(p.rule("kept") == "([i, j, k])->([i, 1, k]) {i=2, j=4, k=8} reduction={j}");
  CHECK(p.rule("vec") == "([i])->([]) {i=6} reduction={i}");
  CHECK(p.rule("allkept") == "([i, j, k])->([1, 1, 1]) {i=2, j=4, k=8} reduction={i, j, k}");
}

// ---- shape ops -------------------------------------------------------------------------

TEST_CASE("transpose permutes the factors", "[rules]") {
  RuleProgram p(R"(
func @f(%x: tensor<2x4x8xf32>, %y: tensor<256x32x64x100xf32>, %m: tensor<4x8xf32>) {
  %t = transpose %x {perm = [2, 0, 1]}
  %shardy = transpose %y {perm = [3, 1, 0, 2]}
  %swap = transpose %m {perm = [1, 0]}
  %same = transpose %m {perm = [0, 1]}
}
)");
  CHECK(p.rule("t") == "([j, k, i])->([i, j, k]) {i=8, j=2, k=4}");
  CHECK(p.rule("shardy") == "([k, j, l, i])->([i, j, k, l]) {i=100, j=32, k=256, l=64}");
  CHECK(p.rule("swap") == "([j, i])->([i, j]) {i=8, j=4}");
  CHECK(p.rule("same") == "([i, j])->([i, j]) {i=4, j=8}");
}

TEST_CASE("broadcast: new and expanded dims get their own factors", "[rules]") {
  RuleProgram p(R"(
func @f(%v: tensor<8xf32>, %c: tensor<4x1xf32>, %s: tensor<f32>, %a: tensor<2x13x1xf32>,
        %b: tensor<2x1x13xf32>) {
  %row = broadcast %v {dims = [1]} : tensor<4x8xf32>
  %expand = broadcast %c {dims = [0, 2]} : tensor<4x3x8xf32>
  %scalar = broadcast %s {dims = []} : tensor<2x2xf32>
  %keep1 = broadcast %a {dims = [0, 2, 3]} : tensor<2x64x13x1xf32>
  %inplace = broadcast %b {dims = [0, 1, 2]} : tensor<2x64x13xf32>
}
)");
  CHECK(p.rule("row") == "([j])->([i, j]) {i=4, j=8}");
  CHECK(p.rule("expand") == "([i, 1])->([i, j, k]) {i=4, j=3, k=8}");
  CHECK(p.rule("scalar") == "([])->([i, j]) {i=2, j=2}");
  CHECK(p.rule("keep1") == "([i, k, l])->([i, j, k, l]) {i=2, j=64, k=13, l=1}");
  CHECK(p.rule("inplace") == "([i, 1, k])->([i, j, k]) {i=2, j=64, k=13}");
}

TEST_CASE("concat: the concatenated dim needs replication unless its operands are slices",
          "[rules]") {
  // Shardy's registry (op_sharding_rule_registry.mlir @concat_*): permutation
  // only for concat(slice(x), slice(y)) or concat(slice(x), x).
  RuleProgram p(R"(
func @f(%a: tensor<4x8xf32>, %b: tensor<2x8xf32>, %o: tensor<4x1x256xf32>, %x: tensor<4x80xf32>) {
  %rows = concat %a, %b {dim = 0}
  %cols = concat %a, %a, %a {dim = 1}
  %single = concat %a {dim = 1}
  %ones = concat %o, %o, %o {dim = 1}
  %s1 = slice %x {start = [0, 0], limit = [4, 40]}
  %s2 = slice %x {start = [0, 40], limit = [4, 80]}
  %slices = concat %s2, %s1 {dim = 1}
  %rolled = concat %s2, %x {dim = 1}
  %mixed = concat %s2, %a {dim = 1}
}
)");
  CHECK(p.rule("rows") == "([i, j], [i, j])->([i, j]) {i=6, j=8} need_replication={i}");
  CHECK(p.rule("cols") == "([i, j], [i, j], [i, j])->([i, j]) {i=4, j=24} need_replication={j}");
  CHECK(p.rule("single") == "([i, j])->([i, j]) {i=4, j=8} need_replication={j}");
  CHECK(p.rule("ones") ==
        "([i, j, k], [i, j, k], [i, j, k])->([i, j, k]) {i=4, j=3, k=256} need_replication={j}");
  CHECK(p.rule("slices") == "([i, j], [i, j])->([i, j]) {i=4, j=80} permutation={j}");
  CHECK(p.rule("rolled") == "([i, j], [i, j])->([i, j]) {i=4, j=120} permutation={j}");
  CHECK(p.rule("mixed") == "([i, j], [i, j])->([i, j]) {i=4, j=48} need_replication={j}");
}

TEST_CASE("slice: sliced dims are permutation factors of the operand's size", "[rules]") {
  RuleProgram p(R"(
func @f(%x: tensor<4x8xf32>, %y: tensor<32x4x8xf32>) {
  %whole = slice %x {start = [0, 0], limit = [4, 8]}
  %window = slice %x {start = [1, 2], limit = [3, 8], stride = [1, 3]}
  %empty = slice %x {start = [2, 5], limit = [2, 5]}
  %strided = slice %x {start = [0, 0], limit = [4, 7], stride = [4, 2]}
  %head = slice %x {start = [0, 0], limit = [2, 8]}
  %shardy = slice %y {start = [0, 1, 4], limit = [32, 2, 8], stride = [1, 1, 2]}
}
)");
  CHECK(p.rule("whole") == "([i, j])->([i, j]) {i=4, j=8}");
  CHECK(p.rule("window") == "([i, j])->([i, j]) {i=4, j=8} permutation={i, j}");
  CHECK(p.rule("empty") == "([i, j])->([i, j]) {i=4, j=8} permutation={i, j}");
  CHECK(p.rule("strided") == "([i, j])->([i, j]) {i=4, j=8} permutation={i, j}");
  CHECK(p.rule("head") == "([i, j])->([i, j]) {i=4, j=8} permutation={i}");
  CHECK(p.rule("shardy") == "([i, j, k])->([i, j, k]) {i=32, j=4, k=8} permutation={j, k}");
}

TEST_CASE("pad: padded dims are permutation factors of the operand's size", "[rules]") {
  RuleProgram p(R"(
func @f(%x: tensor<4x8xf32>, %i: tensor<3xi32>) {
  %both = pad %x {low = [1, 3], high = [2, 0], value = 0.0}
  %none = pad %x {low = [0, 0], high = [0, 0]}
  %high = pad %x {low = [0, 0], high = [0, 2]}
  %low = pad %i {low = [1], high = [0], value = -1}
}
)");
  CHECK(p.rule("both") == "([i, j])->([i, j]) {i=4, j=8} permutation={i, j}");
  CHECK(p.rule("none") == "([i, j])->([i, j]) {i=4, j=8}");
  CHECK(p.rule("high") == "([i, j])->([i, j]) {i=4, j=8} permutation={j}");
  CHECK(p.rule("low") == "([i])->([i]) {i=3} permutation={i}");
}

TEST_CASE("the reshape op uses the reshape factorization", "[rules]") {
  RuleProgram p(R"(
func @f(%x: tensor<8xf32>, %y: tensor<4x6xf32>, %z: tensor<3x2xf32>, %w: tensor<1x1xf32>) {
  %split = reshape %x : tensor<2x4xf32>
  %gcd = reshape %y : tensor<8x3xf32>
  %swap = reshape %z : tensor<2x3xf32>
  %scalar = reshape %w : tensor<f32>
}
)");
  CHECK(p.rule("split") == "([ij])->([i, j]) {i=2, j=4}");
  CHECK(p.rule("gcd") == "([i, jk])->([ij, k]) {i=4, j=2, k=3}");
  CHECK(p.rule("swap") == "([i, l])->([j, k]) {i=3, j=2, k=3, l=2}");
  CHECK(p.rule("scalar") == "([1, 1])->([])");
}

// ---- ops without a rule -------------------------------------------------------------------

TEST_CASE("manual_computation and axis_index have no rule; ops in a body do", "[rules]") {
  RuleProgram p(R"(
@mesh_x2_y4 = <["x"=2, "y"=4]>
func @f(%a: tensor<8x8xf32>) {
  %r = manual_computation (%a) in_shardings=[sharding<@mesh_x2_y4, [{"x"}, {"y"}]>]
      out_shardings=[sharding<@mesh_x2_y4, [{"x"}, {"y"}]>] manual_axes={"x", "y"}
      (%la: tensor<4x2xf32>) {
    %e = exp %la
    %g = all_gather %la {dim = 0, axes = {"x"}}
    %m = all_reduce %la {axes = {"y"}, kind = "max"}
    %s = reduce_scatter %g {dim = 0, axes = {"y"}}
    %t = all_to_all %g {split_dim = 0, concat_dim = 1, axes = {"x"}}
    %p = collective_permute %la {pairs = [[0, 1], [1, 0]]}
    %i = axis_index {axis = "y"} : tensor<i32>
    return %e
  }
}
)");
  for (const char *name : {"r", "i"}) {
    INFO(name);
    const Op *op = p.op(name);
    REQUIRE(op);
    CHECK_FALSE(getShardingRule(*op));
  }
  CHECK(p.rule("e") == "([i, j])->([i, j]) {i=4, j=2}");
  // The collectives have Shardy's rules (sharding_rules_shardy_test.cpp has
  // the registry's cases): the dim they change needs replication, with a
  // factor on each side.
  CHECK(p.rule("g") == "([j, i])->([k, i]) {i=2, j=4, k=8} need_replication={j, k}");
  CHECK(p.rule("m") == "([i, j])->([i, j]) {i=4, j=2}");
  CHECK(p.rule("s") == "([j, i])->([k, i]) {i=2, j=8, k=2} need_replication={j, k}");
  CHECK(p.rule("t") == "([i, k])->([j, l]) {i=8, j=4, k=2, l=4} need_replication={i, j, k, l}");
  CHECK(p.rule("p") == "([i, j])->([i, j]) {i=4, j=2}");
}

TEST_CASE("ops with an unknown operand or result type have no rule", "[rules]") {
  RuleProgram p(R"(
@mesh_x2 = <["x"=2]>
%v : sharding<@mesh_x2, [{"x"}]>
func @f(%a: tensor<4x8xf32>, %b: tensor<3x8xf32>) {
  %bad = add %a, %b
  %after = neg %bad
}
%w = neg %v
)",
                Errors::Expected);
  for (const char *name : {"bad", "after", "w"}) {
    INFO(name);
    const Op *op = p.op(name);
    REQUIRE(op);
    CHECK_FALSE(getShardingRule(*op));
  }
}

// ---- reshape factorization --------------------------------------------------------------

TEST_CASE("reshape: splits and merges", "[rules]") {
  CHECK(reshape({8}, {2, 4}) == "([ij])->([i, j]) {i=2, j=4}");
  CHECK(reshape({2, 4}, {8}) == "([i, j])->([ij]) {i=2, j=4}");
  CHECK(reshape({12}, {3, 4}) == "([ij])->([i, j]) {i=3, j=4}");
  CHECK(reshape({2, 3, 4}, {6, 4}) == "([i, j, k])->([ij, k]) {i=2, j=3, k=4}");
  CHECK(reshape({4, 12}, {4, 2, 3, 2}) == "([i, jkl])->([i, j, k, l]) {i=4, j=2, k=3, l=2}");
  CHECK(reshape({8, 4, 5}, {2, 16, 5}) == "([ij, k, l])->([i, jk, l]) {i=2, j=4, k=4, l=5}");
  CHECK(reshape({4, 8}, {4, 8}) == "([i, j])->([i, j]) {i=4, j=8}");
  CHECK(reshape({7}, {7}) == "([i])->([i]) {i=7}");
}

TEST_CASE("reshape: gcd splits where dims don't align", "[rules]") {
  CHECK(reshape({6}, {2, 3}) == "([ij])->([i, j]) {i=2, j=3}");
  CHECK(reshape({6}, {3, 2}) == "([ij])->([i, j]) {i=3, j=2}");
  CHECK(reshape({4, 6}, {8, 3}) == "([i, jk])->([ij, k]) {i=4, j=2, k=3}");
  CHECK(reshape({8, 3}, {4, 6}) == "([ij, k])->([i, jk]) {i=4, j=2, k=3}");
  CHECK(reshape({6, 4}, {3, 8}) == "([ij, k])->([i, jk]) {i=3, j=2, k=4}");
  CHECK(reshape({2, 6}, {4, 3}) == "([i, jk])->([ij, k]) {i=2, j=2, k=3}");
}

TEST_CASE("reshape: size-1 dims map to no factor", "[rules]") {
  CHECK(reshape({1, 8}, {8}) == "([1, i])->([i]) {i=8}");
  CHECK(reshape({8}, {1, 8, 1}) == "([i])->([1, i, 1]) {i=8}");
  CHECK(reshape({1, 8, 4}, {8, 1, 4, 1}) == "([1, i, j])->([i, 1, j, 1]) {i=8, j=4}");
  CHECK(reshape({8, 4}, {32, 1}) == "([i, j])->([ij, 1]) {i=8, j=4}");
  CHECK(reshape({32, 1}, {8, 4}) == "([ij, 1])->([i, j]) {i=8, j=4}");
  CHECK(reshape({32}, {8, 1, 4}) == "([ij])->([i, 1, j]) {i=8, j=4}");
  CHECK(reshape({2, 1, 3}, {6}) == "([i, 1, j])->([ij]) {i=2, j=3}");
  CHECK(reshape({1, 1}, {}) == "([1, 1])->([])");
  CHECK(reshape({}, {1}) == "([])->([1])");
  CHECK(reshape({}, {}) == "([])->([])");
}

TEST_CASE("reshape: interleaved shapes get factors on one side (Shardy's cases)", "[rules]") {
  CHECK(reshape({3, 2}, {2, 3}) == "([i, l])->([j, k]) {i=3, j=2, k=3, l=2}");
  CHECK(reshape({6, 4}, {4, 6}) == "([ij, mn])->([ik, ln]) {i=2, j=3, k=2, l=3, m=2, n=2}");
  CHECK(reshape({5, 2, 5, 3}, {5, 3, 5, 2}) ==
        "([i, j, l, n])->([i, k, m, o]) {i=5, j=2, k=3, l=5, m=5, n=3, o=2}");
  CHECK(reshape({2, 3, 8}, {3, 4, 4}) ==
        "([i, k, mn])->([j, lm, n]) {i=2, j=3, k=3, l=2, m=2, n=4}");
  CHECK(reshape({3, 4, 4}, {2, 3, 8}) ==
        "([i, lm, n])->([j, k, mn]) {i=3, j=2, k=3, l=2, m=2, n=4}");
  CHECK(reshape({4, 7, 5, 8}, {14, 10, 8}) ==
        "([ij, l, n, o])->([ik, mn, o]) {i=2, j=2, k=7, l=7, m=2, n=5, o=8}");
  CHECK(reshape({12, 10}, {8, 15}) == "([ij, mn])->([ik, ln]) {i=4, j=3, k=2, l=3, m=2, n=5}");
  // Shared again after diverging: the minor 3 of 9 is the minor 3 of 6.
  CHECK(reshape({2, 9}, {3, 6}) == "([i, km])->([j, lm]) {i=2, j=3, k=3, l=2, m=3}");
}

TEST_CASE("reshape: no rule with different counts", "[rules]") {
  CHECK_FALSE(reshapeRule({4}, {5}));
  CHECK_FALSE(reshapeRule({4, 0}, {8}));
  CHECK_FALSE(reshapeRule({-2}, {-2}));
  CHECK_FALSE(reshapeRule({int64_t(1) << 62, 4}, {int64_t(1) << 62, 4}));
}

TEST_CASE("reshape: without elements, every dim needs replication", "[rules]") {
  // Shardy propagates nothing through it; the partitioner gathers (no data).
  std::optional<ShardingRule> rule = reshapeRule({4, 0}, {0, 1, 8});
  REQUIRE(rule);
  CHECK(rule->str() == "([i, j])->([k, 1, l]) {i=4, j=0, k=0, l=8} need_replication={i, j, k, l}");
}

namespace {

/// Splits `primes` (in order) into `dims` dims at random cut points, then
/// inserts size-1 dims at random places.
Shape randomShape(const std::vector<int64_t> &primes, std::mt19937 &rng) {
  Shape shape;
  int64_t dim = 1;
  for (size_t i = 0; i < primes.size(); ++i) {
    dim *= primes[i];
    if (i + 1 == primes.size() || rng() % 3 == 0) {
      shape.push_back(dim);
      dim = 1;
    }
  }
  int ones = static_cast<int>(rng() % 3);
  for (int i = 0; i < ones; ++i)
    shape.insert(shape.begin() + rng() % (shape.size() + 1), 1);
  return shape;
}

/// The start point of each factor on one side (the product of the factors
/// before it, major to minor).
std::map<int, int64_t> factorStarts(const ShardingRule &rule, const TensorFactors &tensor) {
  std::map<int, int64_t> starts;
  int64_t point = 1;
  for (const DimFactors &dim : tensor)
    for (int factor : dim) {
      starts[factor] = point;
      point *= rule.factorSizes[factor];
    }
  return starts;
}

/// Whether the points of both shapes together form a divisibility chain: then
/// a factorization shared entirely by both sides exists.
bool pointsFormChain(const Shape &a, const Shape &b) {
  std::set<int64_t> points;
  for (const Shape *shape : {&a, &b}) {
    int64_t point = 1;
    for (int64_t d : *shape)
      points.insert(point *= d);
  }
  int64_t previous = 1;
  for (int64_t point : points) {
    if (point % previous != 0)
      return false;
    previous = point;
  }
  return true;
}

} // namespace

TEST_CASE("reshape property: random shape pairs keep every invariant", "[rules]") {
  std::mt19937 rng(12345);
  const std::vector<int64_t> pool = {2, 2, 2, 2, 3, 3, 5, 7, 4, 6};
  int chains = 0;
  for (int iteration = 0; iteration < 3000; ++iteration) {
    // A random total as a random multiset of small factors; each side orders
    // it its own way (or, half the time, the same way: then the shapes only
    // split and merge, and every factor must be shared).
    std::vector<int64_t> factors;
    size_t count = rng() % 7;
    for (size_t i = 0; i < count; ++i)
      factors.push_back(pool[rng() % pool.size()]);
    std::vector<int64_t> other = factors;
    bool sameOrder = rng() % 2 == 0;
    if (!sameOrder)
      std::shuffle(other.begin(), other.end(), rng);
    Shape from = randomShape(factors, rng), to = randomShape(other, rng);
    INFO("reshape " << Catch::Detail::stringify(from) << " -> " << Catch::Detail::stringify(to));

    std::optional<ShardingRule> rule = reshapeRule(from, to);
    REQUIRE(rule);
    INFO(rule->str());
    // Product of each dim's factors is its size; runs are contiguous by
    // construction (a dim's list); every factor is used.
    REQUIRE_FALSE(checkShardingRule(*rule, {from}, {to}));
    for (int64_t size : rule->factorSizes)
      REQUIRE(size > 1);
    // A shared factor covers the same elements on both sides: it starts at
    // the same point of both.
    std::map<int, int64_t> inStarts = factorStarts(*rule, rule->operands[0]);
    std::map<int, int64_t> outStarts = factorStarts(*rule, rule->results[0]);
    for (auto [factor, start] : inStarts)
      if (outStarts.count(factor))
        REQUIRE(outStarts[factor] == start);
    // Each side's factors multiply to the element count.
    int64_t total = std::accumulate(from.begin(), from.end(), int64_t(1), std::multiplies<>());
    for (const std::map<int, int64_t> *starts : {&inStarts, &outStarts}) {
      int64_t product = 1;
      for (auto [factor, start] : *starts)
        product *= rule->factorSizes[factor];
      REQUIRE(product == total);
    }
    // Where a common refinement exists, every factor is used by both sides.
    if (pointsFormChain(from, to)) {
      ++chains;
      REQUIRE(inStarts.size() == rule->numFactors());
      REQUIRE(outStarts.size() == rule->numFactors());
    }
    if (sameOrder)
      REQUIRE(pointsFormChain(from, to));
  }
  CHECK(chains > 1500);
}

namespace {

/// Every way to write `n` as an ordered product of factors > 1.
std::vector<std::vector<int64_t>> orderedFactorizations(int64_t n) {
  if (n == 1)
    return {{}};
  std::vector<std::vector<int64_t>> out;
  for (int64_t first = 2; first <= n; ++first) {
    if (n % first != 0)
      continue;
    for (std::vector<int64_t> rest : orderedFactorizations(n / first)) {
      rest.insert(rest.begin(), first);
      out.push_back(std::move(rest));
    }
  }
  return out;
}

/// Every factorization of a whole shape, each dim split its own way, as the
/// set of (start point, size) of its factors.
std::vector<std::set<std::pair<int64_t, int64_t>>> shapeFactorizations(const Shape &shape) {
  std::vector<std::set<std::pair<int64_t, int64_t>>> out = {{}};
  int64_t point = 1;
  for (int64_t dim : shape) {
    std::vector<std::set<std::pair<int64_t, int64_t>>> next;
    for (const auto &prefix : out) {
      for (const std::vector<int64_t> &split : orderedFactorizations(dim)) {
        auto pieces = prefix;
        int64_t start = point;
        for (int64_t size : split) {
          pieces.insert({start, size});
          start *= size;
        }
        next.push_back(std::move(pieces));
      }
    }
    out = std::move(next);
    point *= dim;
  }
  return out;
}

} // namespace

TEST_CASE("reshape property: the factors shared by both sides cover the most elements", "[rules]") {
  // Brute force over small shapes: no pair of factorizations of the two
  // shapes shares factors of a larger total size than reshapeRule's.
  std::mt19937 rng(777);
  const std::vector<int64_t> pool = {2, 2, 3, 2, 3, 5, 4, 6};
  for (int iteration = 0; iteration < 300; ++iteration) {
    std::vector<int64_t> factors;
    size_t count = 1 + rng() % 4;
    for (size_t i = 0; i < count; ++i)
      factors.push_back(pool[rng() % pool.size()]);
    std::vector<int64_t> other = factors;
    std::shuffle(other.begin(), other.end(), rng);
    Shape from = randomShape(factors, rng), to = randomShape(other, rng);
    INFO("reshape " << Catch::Detail::stringify(from) << " -> " << Catch::Detail::stringify(to));
    std::optional<ShardingRule> rule = reshapeRule(from, to);
    REQUIRE(rule);
    INFO(rule->str());

    std::map<int, int64_t> outStarts = factorStarts(*rule, rule->results[0]);
    int64_t shared = 1;
    for (auto [factor, start] : factorStarts(*rule, rule->operands[0]))
      if (outStarts.count(factor))
        shared *= rule->factorSizes[factor];

    int64_t best = 1;
    auto fromSplits = shapeFactorizations(from), toSplits = shapeFactorizations(to);
    for (const auto &a : fromSplits) {
      for (const auto &b : toSplits) {
        int64_t coverage = 1;
        for (const auto &piece : a)
          if (b.count(piece))
            coverage *= piece.second;
        best = std::max(best, coverage);
      }
    }
    CHECK(shared == best);
  }
}
