// Shardy's registry of op sharding rules, translated: each case below is a
// test of openxla/shardy's
// shardy/dialect/sdy/transforms/propagation/test/op_sharding_rule_registry.mlir
// (named after the `func` it comes from) whose StableHLO op shardc has, with
// the rule text its CHECK line gives. Where shardc's rule is written
// differently but propagates the same (a size-1 factor Shardy keeps, the
// init operand of stablehlo.reduce, the order of an einsum's summed labels),
// the case says so and checks shardc's form. docs/propagation.md ("Rules
// checked against Shardy's registry") lists what was compared.
#include "tests/unit/RuleTestHelpers.h"

#include <catch2/catch.hpp>

using namespace shardc;
using testing::RuleProgram;

// ---- pointwise ops (Shardy: buildPointwise) -------------------------------------------

TEST_CASE("shardy registry: pointwise ops keep size-1 and size-0 dims as factors",
          "[rules][shardy]") {
  RuleProgram p(R"(
func @f(%a: tensor<2x1x4xf32>, %z: tensor<2x0x4xf32>, %s: tensor<f32>, %e: tensor<8x4xf32>,
        %i: tensor<4x8xi32>) {
  %pointwise_op = add %a, %a
  %pointwise_op_size_zero_dim = add %z, %z
  %scalar_op = add %s, %s
  %custom_call_erf = erf %e
  %compare = lt %i, %i
  %convert = convert %i : tensor<4x8xf32>
}
)");
  CHECK(p.rule("pointwise_op") == "([i, j, k], [i, j, k])->([i, j, k]) {i=2, j=1, k=4}");
  CHECK(p.rule("pointwise_op_size_zero_dim") ==
        "([i, j, k], [i, j, k])->([i, j, k]) {i=2, j=0, k=4}");
  CHECK(p.rule("scalar_op") == "([], [])->([])");
  // stablehlo.custom_call @mhlo.erf: shardc's erf is a unary op.
  CHECK(p.rule("custom_call_erf") == "([i, j])->([i, j]) {i=8, j=4}");
  // stablehlo.compare and stablehlo.convert are in the registry's pointwise list.
  CHECK(p.rule("compare") == "([i, j], [i, j])->([i, j]) {i=4, j=8}");
  CHECK(p.rule("convert") == "([i, j])->([i, j]) {i=4, j=8}");
}

TEST_CASE("shardy registry: select, with a scalar predicate too", "[rules][shardy]") {
  RuleProgram p(R"(
func @f(%p: tensor<4x8xi1>, %q: tensor<i1>, %a: tensor<4x8xf32>, %b: tensor<4x8xf32>) {
  %select = select %p, %a, %b
  %select_scalar_pred = select %q, %a, %b
}
)");
  CHECK(p.rule("select") == "([i, j], [i, j], [i, j])->([i, j]) {i=4, j=8}");
  CHECK(p.rule("select_scalar_pred") == "([], [i, j], [i, j])->([i, j]) {i=4, j=8}");
}

// ---- broadcast_in_dim ------------------------------------------------------------------

TEST_CASE("shardy registry: broadcast_in_dim", "[rules][shardy]") {
  RuleProgram p(R"(
func @f(%a: tensor<2x13x1xf32>, %z: tensor<2x13x0xf32>, %s: tensor<f32>, %x: tensor<2x1x13xf32>,
        %all: tensor<2x5x3x1x7xf32>) {
  %broadcast_in_dim = broadcast %a {dims = [0, 2, 3]} : tensor<2x64x13x1xf32>
  %size_zero_dim = broadcast %z {dims = [0, 2, 3]} : tensor<2x64x13x0xf32>
  %no_broadcast_dims = broadcast %s {dims = []} : tensor<2x1x13xf32>
  %input_dim_expanded = broadcast %x {dims = [0, 1, 2]} : tensor<2x64x13xf32>
  %all_dim_types_in_one = broadcast %all {dims = [0, 1, 2, 3, 4]} : tensor<2x5x3x11x7x13xf32>
}
)");
  CHECK(p.rule("broadcast_in_dim") == "([i, k, l])->([i, j, k, l]) {i=2, j=64, k=13, l=1}");
  CHECK(p.rule("size_zero_dim") == "([i, k, l])->([i, j, k, l]) {i=2, j=64, k=13, l=0}");
  CHECK(p.rule("no_broadcast_dims") == "([])->([i, j, k]) {i=2, j=1, k=13}");
  // Shardy gives an expanded operand dim (1 -> 64) a size-1 factor of its own
  // (`([i, j, l])->([i, k, l]) {i=2, j=1, k=64, l=13}`); shardc maps it to no
  // factor. A size-1 factor on one tensor only carries nothing anywhere, so
  // propagation is the same; the names after it shift by one.
  CHECK(p.rule("input_dim_expanded") == "([i, 1, k])->([i, j, k]) {i=2, j=64, k=13}");
  // Shardy's case also transposes (dims = [0, 2, 1, 3, 4] on a 2x3x5x1x7
  // operand: `([i, k, j, l, n])->([i, j, k, m, n, o]) {i=2, j=5, k=3, l=1,
  // m=11, n=7, o=13}`); shardc's broadcast takes increasing dims only, so
  // the operand here is 2x5x3x1x7. The same rule, its size-1 factor l left
  // out.
  CHECK(p.rule("all_dim_types_in_one") ==
        "([i, j, k, 1, m])->([i, j, k, l, m, n]) {i=2, j=5, k=3, l=11, m=7, n=13}");
}

// ---- concatenate -----------------------------------------------------------------------

TEST_CASE("shardy registry: concatenate of values that are not slices needs replication",
          "[rules][shardy]") {
  RuleProgram p(R"(
func @f(%o0: tensor<4x1x256xf32>, %o1: tensor<4x1x256xf32>, %o2: tensor<4x1x256xf32>,
        %a3: tensor<4x3x256xf32>, %a5: tensor<4x5x256xf32>, %a16: tensor<4x16x256xf32>,
        %b16: tensor<4x16x256xf32>, %a32: tensor<4x32x256xf32>, %a48: tensor<4x48x256xf32>,
        %t: tensor<4x64xf32>) {
  %concat_operands_dim_size_one = concat %o0, %o1, %o2 {dim = 1}
  %concat_gcd_is_one = concat %a3, %a5 {dim = 1}
  %concat_operands_with_same_shape = concat %a16, %b16 {dim = 1}
  %concat_gcd_is_equal_to_operand_dim = concat %a32, %a16 {dim = 1}
  %concat_gcd_is_greater_than_all_operand_dims = concat %a32, %a48 {dim = 1}
  %concat_operands_are_on_the_same_tensor = concat %t, %t, %t {dim = 0}
}
)");
  CHECK(p.rule("concat_operands_dim_size_one") ==
        "([i, j, k], [i, j, k], [i, j, k])->([i, j, k]) {i=4, j=3, k=256} need_replication={j}");
  CHECK(p.rule("concat_gcd_is_one") ==
        "([i, j, k], [i, j, k])->([i, j, k]) {i=4, j=8, k=256} need_replication={j}");
  CHECK(p.rule("concat_operands_with_same_shape") ==
        "([i, j, k], [i, j, k])->([i, j, k]) {i=4, j=32, k=256} need_replication={j}");
  CHECK(p.rule("concat_gcd_is_equal_to_operand_dim") ==
        "([i, j, k], [i, j, k])->([i, j, k]) {i=4, j=48, k=256} need_replication={j}");
  CHECK(p.rule("concat_gcd_is_greater_than_all_operand_dims") ==
        "([i, j, k], [i, j, k])->([i, j, k]) {i=4, j=80, k=256} need_replication={j}");
  CHECK(p.rule("concat_operands_are_on_the_same_tensor") ==
        "([i, j], [i, j], [i, j])->([i, j]) {i=12, j=64} need_replication={i}");
}

TEST_CASE("shardy registry: concatenate of slices is a permutation", "[rules][shardy]") {
  RuleProgram p(R"(
func @results_of_slices(%arg0: tensor<4x40x256xf32>, %arg1: tensor<4x60x256xf32>) {
  %s0 = slice %arg0 {start = [0, 0, 0], limit = [4, 32, 256]}
  %s1 = slice %arg1 {start = [0, 0, 0], limit = [4, 48, 256]}
  %concat_operands_are_results_of_slices = concat %s0, %s1 {dim = 1}
}

func @same_tensor(%arg0: tensor<4x40x256xf32>, %arg1: tensor<4x60x256xf32>) {
  %t0 = slice %arg0 {start = [0, 0, 0], limit = [4, 32, 256]}
  %t1 = slice %arg0 {start = [0, 0, 0], limit = [4, 24, 256]}
  %concat_operands_are_from_slices_of_the_same_tensor = concat %t0, %arg0, %t1 {dim = 1}
  %n = neg %arg1
  %concat_not_all_operands_are_results_of_slices = concat %t0, %n {dim = 1}
  %u1 = slice %arg1 {start = [0, 0, 0], limit = [4, 24, 256]}
  %concat_not_all_operands_are_from_slices_of_the_same_tensor = concat %t0, %arg0, %u1 {dim = 1}
}

func @one_is_slice(%arg0: tensor<4x64xf32>) {
  %h = slice %arg0 {start = [0, 0], limit = [2, 64]}
  %concat_operands_are_on_the_same_tensor_one_is_slice = concat %arg0, %h, %arg0 {dim = 0}
}
)");
  CHECK(p.rule("concat_operands_are_results_of_slices") ==
        "([i, j, k], [i, j, k])->([i, j, k]) {i=4, j=80, k=256} permutation={j}");
  CHECK(p.rule("concat_operands_are_from_slices_of_the_same_tensor") ==
        "([i, j, k], [i, j, k], [i, j, k])->([i, j, k]) {i=4, j=96, k=256} permutation={j}");
  CHECK(p.rule("concat_not_all_operands_are_results_of_slices") ==
        "([i, j, k], [i, j, k])->([i, j, k]) {i=4, j=92, k=256} need_replication={j}");
  CHECK(p.rule("concat_not_all_operands_are_from_slices_of_the_same_tensor") ==
        "([i, j, k], [i, j, k], [i, j, k])->([i, j, k]) {i=4, j=96, k=256} need_replication={j}");
  CHECK(p.rule("concat_operands_are_on_the_same_tensor_one_is_slice") ==
        "([i, j], [i, j], [i, j])->([i, j]) {i=10, j=64} permutation={i}");
}

// ---- dot and dot_general (shardc: matmul, einsum) --------------------------------------

TEST_CASE("shardy registry: dot and dot_general as matmul and einsum", "[rules][shardy]") {
  RuleProgram p(R"(
func @f(%v: tensor<32xf32>, %w: tensor<32xf32>, %m: tensor<32x16xf32>, %l: tensor<8x32xf32>,
        %b0: tensor<4x8x32xf32>, %b1: tensor<4x32x16xf32>, %x: tensor<2x4x8x4x64x32xf32>,
        %y: tensor<16x32x64x4x2xf32>) {
  %dot_vector_vector = einsum "k,k->" (%v, %w)
  %dot_vector_matrix = einsum "k,kn->n" (%v, %m)
  %dot_matrix_vector = einsum "mk,k->m" (%l, %w)
  %dot_matrix_matrix = matmul %l, %m
  %dot_general_no_batching_dims = einsum "mk,kn->mn" (%l, %m)
  %dot_general_batching_dims = matmul %b0, %b1
  %einsum_batching_dims = einsum "bmk,bkn->bmn" (%b0, %b1)
  %dot_general_many_mixed_dims = einsum "abcdef,gfeba->abcdg" (%x, %y)
}
)");
  CHECK(p.rule("dot_vector_vector") == "([i], [i])->([]) {i=32} reduction={i}");
  CHECK(p.rule("dot_vector_matrix") == "([j], [j, i])->([i]) {i=16, j=32} reduction={j}");
  CHECK(p.rule("dot_matrix_vector") == "([i, j], [j])->([i]) {i=8, j=32} reduction={j}");
  CHECK(p.rule("dot_matrix_matrix") ==
        "([i, k], [k, j])->([i, j]) {i=8, j=16, k=32} reduction={k}");
  CHECK(p.rule("dot_general_no_batching_dims") ==
        "([i, k], [k, j])->([i, j]) {i=8, j=16, k=32} reduction={k}");
  CHECK(p.rule("dot_general_batching_dims") ==
        "([i, j, l], [i, l, k])->([i, j, k]) {i=4, j=8, k=16, l=32} reduction={l}");
  CHECK(p.rule("einsum_batching_dims") ==
        "([i, j, l], [i, l, k])->([i, j, k]) {i=4, j=8, k=16, l=32} reduction={l}");
  // Shardy numbers the contracting factors in the order of its
  // contracting_dims ([5, 4] x [1, 2]: n=32, o=64); an einsum has no such
  // order, so shardc takes the summed labels as they first appear (e=64,
  // then f=32). The same factors, named the other way round.
  CHECK(p.rule("dot_general_many_mixed_dims") ==
        "([i, j, k, l, n, o], [m, o, n, j, i])->([i, j, k, l, m]) "
        "{i=2, j=4, k=8, l=4, m=16, n=64, o=32} reduction={n, o}");
}

// ---- reduce ----------------------------------------------------------------------------

TEST_CASE("shardy registry: reduce", "[rules][shardy]") {
  // stablehlo.reduce has an init operand (`[]` in Shardy's rules, e.g.
  // `([i, j, k], [])->([i, k])`); shardc's reduce_* ops have none. A scalar
  // carries no factor, so the rules are the same otherwise. Shardy's
  // @reduce_multiple_results reduces two inputs at once: the same rule for
  // each input.
  RuleProgram p(R"(
func @f(%a: tensor<2x64x13xf32>, %b: tensor<2x64x13xi32>, %c: tensor<2x64x1x13xf32>) {
  %reduce_single_result = reduce_sum %a {dims = [1]}
  %reduce_multiple_results_0 = reduce_sum %a {dims = [0, 2]}
  %reduce_multiple_results_1 = reduce_max %b {dims = [0, 2]}
  %reduce_size_one_dim = reduce_sum %c {dims = [1]}
}
)");
  CHECK(p.rule("reduce_single_result") == "([i, j, k])->([i, k]) {i=2, j=64, k=13} reduction={j}");
  CHECK(p.rule("reduce_multiple_results_0") ==
        "([i, j, k])->([j]) {i=2, j=64, k=13} reduction={i, k}");
  CHECK(p.rule("reduce_multiple_results_1") ==
        "([i, j, k])->([j]) {i=2, j=64, k=13} reduction={i, k}");
  CHECK(p.rule("reduce_size_one_dim") ==
        "([i, j, k, l])->([i, k, l]) {i=2, j=64, k=1, l=13} reduction={j}");
}

// ---- pad, slice, transpose -------------------------------------------------------------

TEST_CASE("shardy registry: pad, slice and transpose", "[rules][shardy]") {
  // Shardy's @pad pads dim 1 by -1 on both sides (28 -> 26); shardc's pad takes
  // no negative padding, so dim 1 grows instead (28 -> 30). Either way a dim
  // whose size changes is one permutation factor of the operand's size.
  RuleProgram p(R"(
func @f(%a: tensor<28x28x16xf32>, %s: tensor<32x4x8xf32>, %t: tensor<256x32x64x100xf32>) {
  %pad = pad %a {low = [1, 0, 0], high = [1, 2, 0], value = 0.0}
  %slice = slice %s {start = [0, 1, 4], limit = [32, 2, 8], stride = [1, 1, 2]}
  %transpose = transpose %t {perm = [3, 1, 0, 2]}
}
)");
  CHECK(p.rule("pad") == "([i, j, k])->([i, j, k]) {i=28, j=28, k=16} permutation={i, j}");
  CHECK(p.rule("slice") == "([i, j, k])->([i, j, k]) {i=32, j=4, k=8} permutation={j, k}");
  CHECK(p.rule("transpose") == "([k, j, l, i])->([i, j, k, l]) {i=100, j=32, k=256, l=64}");
}

// ---- reshape ---------------------------------------------------------------------------

TEST_CASE("shardy registry: reshape", "[rules][shardy]") {
  RuleProgram p(R"(
func @f(%scalar: tensor<1x1xf32>, %zero: tensor<4x0xf32>, %m: tensor<2x4xf32>, %s: tensor<8xf32>,
        %t: tensor<4x12xf32>, %sm: tensor<8x4x5xf32>, %nd: tensor<3x2xf32>, %cd: tensor<6x4xf32>,
        %bi: tensor<5x2x5x3xf32>, %swm: tensor<2x3x8xf32>, %sps: tensor<3x4x4xf32>,
        %ssm: tensor<4x7x5x8xf32>, %ones: tensor<1x8x4xf32>, %mt: tensor<8x4xf32>,
        %st: tensor<32x1xf32>, %si: tensor<32xf32>) {
  %reshape_scalar = reshape %scalar : tensor<f32>
  %reshape_size_zero_dim = reshape %zero : tensor<0x8xf32>
  %reshape_merge_dim = reshape %m : tensor<8xf32>
  %reshape_split_dim = reshape %s : tensor<2x4xf32>
  %reshape_split_dim_three_way = reshape %t : tensor<4x2x3x2xf32>
  %reshape_split_and_merge_dims = reshape %sm : tensor<2x16x5xf32>
  %reshape_swap_dims_no_common_divisor = reshape %nd : tensor<2x3xf32>
  %reshape_swap_dims_with_common_divisor = reshape %cd : tensor<4x6xf32>
  %reshape_swap_with_dim_before_and_in_between = reshape %bi : tensor<5x3x5x2xf32>
  %reshape_swap_and_merge = reshape %swm : tensor<3x4x4xf32>
  %reshape_split_and_swap = reshape %sps : tensor<2x3x8xf32>
  %reshape_split_swap_and_merge = reshape %ssm : tensor<14x10x8xf32>
  %reshape_size_one_dims = reshape %ones : tensor<8x1x4x1xf32>
  %reshape_merge_dim_then_size_one = reshape %mt : tensor<32x1xf32>
  %reshape_split_dim_then_size_one = reshape %st : tensor<8x4xf32>
  %reshape_split_dim_with_intermediate_one = reshape %si : tensor<8x1x4xf32>
}
)");
  CHECK(p.rule("reshape_merge_dim") == "([i, j])->([ij]) {i=2, j=4}");
  CHECK(p.rule("reshape_split_dim") == "([ij])->([i, j]) {i=2, j=4}");
  CHECK(p.rule("reshape_split_dim_three_way") == "([i, jkl])->([i, j, k, l]) {i=4, j=2, k=3, l=2}");
  CHECK(p.rule("reshape_split_and_merge_dims") ==
        "([ij, k, l])->([i, jk, l]) {i=2, j=4, k=4, l=5}");
  CHECK(p.rule("reshape_swap_dims_no_common_divisor") == "([i, l])->([j, k]) {i=3, j=2, k=3, l=2}");
  CHECK(p.rule("reshape_swap_dims_with_common_divisor") ==
        "([ij, mn])->([ik, ln]) {i=2, j=3, k=2, l=3, m=2, n=2}");
  CHECK(p.rule("reshape_swap_with_dim_before_and_in_between") ==
        "([i, j, l, n])->([i, k, m, o]) {i=5, j=2, k=3, l=5, m=5, n=3, o=2}");
  CHECK(p.rule("reshape_swap_and_merge") ==
        "([i, k, mn])->([j, lm, n]) {i=2, j=3, k=3, l=2, m=2, n=4}");
  CHECK(p.rule("reshape_split_and_swap") ==
        "([i, lm, n])->([j, k, mn]) {i=3, j=2, k=3, l=2, m=2, n=4}");
  CHECK(p.rule("reshape_split_swap_and_merge") ==
        "([ij, l, n, o])->([ik, mn, o]) {i=2, j=2, k=7, l=7, m=2, n=5, o=8}");
  // Shardy gives size-1 dims factors of size 1 (`([i, j])->([]) {i=1, j=1}`,
  // `([i, j, l])->([j, k, l, m]) {i=1, j=8, k=1, l=4, m=1}`, `([i, j])->([ij,
  // k]) {i=8, j=4, k=1}`, `([ij, k])->([i, j]) {i=8, j=4, k=1}`, `([ik])->([i,
  // j, k]) {i=8, j=1, k=4}`); shardc maps them to none. Such a factor is on
  // one side only or of size 1 on both, and carries nothing.
  CHECK(p.rule("reshape_scalar") == "([1, 1])->([])");
  CHECK(p.rule("reshape_size_one_dims") == "([1, i, j])->([i, 1, j, 1]) {i=8, j=4}");
  CHECK(p.rule("reshape_merge_dim_then_size_one") == "([i, j])->([ij, 1]) {i=8, j=4}");
  CHECK(p.rule("reshape_split_dim_then_size_one") == "([ij, 1])->([i, j]) {i=8, j=4}");
  CHECK(p.rule("reshape_split_dim_with_intermediate_one") == "([ij])->([i, 1, j]) {i=8, j=4}");
  // Shardy has no rule for a reshape without elements (CHECK-NOT:
  // sdy.sharding_rule), so nothing propagates through it. shardc's rule
  // shares no factor between the two sides: the same for propagation, and
  // the partitioner has a rule to gather by.
  CHECK(p.rule("reshape_size_zero_dim") ==
        "([i, j])->([k, l]) {i=4, j=0, k=0, l=8} need_replication={i, j, k, l}");
}

// ---- collectives (in manual_computation bodies) ----------------------------------------

TEST_CASE("shardy registry: collectives", "[rules][shardy]") {
  // Shardy's cases give all_gather and all_to_all two operands; shardc's
  // collectives take one, whose rule is the same as each of Shardy's.
  // stablehlo.all_reduce and collective_permute are in the registry's
  // pointwise list.
  RuleProgram p(R"(
@mesh = <["x"=2, "y"=2]>
func @f(%a: tensor<4x4xi64>, %b: tensor<4x8xi64>, %c: tensor<4x128x1x13xi64>) {
  %r1, %r2, %r3 = manual_computation (%a, %b, %c)
      in_shardings=[sharding<@mesh, [{"x"}, {"y"}]>, sharding<@mesh, [{}, {"x"}]>,
                    sharding<@mesh, [{"x"}, {"y"}, {}, {}]>]
      out_shardings=[sharding<@mesh, [{"x"}, {"y"}]>, sharding<@mesh, [{}, {"x"}]>,
                     sharding<@mesh, [{"x"}, {"y"}, {}, {}]>]
      manual_axes={"x", "y"}
      (%la: tensor<2x2xi64>, %lb: tensor<4x4xi64>, %lc: tensor<2x64x1x13xi64>) {
    %all_gather = all_gather %la {dim = 1, axes = {"y"}}
    %different = slice %lb {start = [0, 0], limit = [2, 4]}
    %all_to_all_different_dimensions = all_to_all %different {split_dim = 1, concat_dim = 0, axes = {"x"}}
    %all_to_all_same_dimension = all_to_all %different {split_dim = 0, concat_dim = 0, axes = {"x"}}
    %reduce_scatter = reduce_scatter %lc {dim = 1, axes = {"y"}}
    %all_reduce = all_reduce %la {axes = {"x"}, kind = "sum"}
    %collective_permute = collective_permute %la {pairs = [[0, 1], [1, 0]]}
    return %la, %lb, %lc
  }
}
)");
  CHECK(p.rule("all_gather") == "([i, j])->([i, k]) {i=2, j=2, k=4} need_replication={j, k}");
  CHECK(p.rule("all_to_all_different_dimensions") ==
        "([k, i])->([l, j]) {i=4, j=2, k=2, l=4} need_replication={i, j, k, l}");
  CHECK(p.rule("all_to_all_same_dimension") ==
        "([j, i])->([k, i]) {i=4, j=2, k=2} need_replication={j, k}");
  CHECK(p.rule("reduce_scatter") ==
        "([i, l, j, k])->([i, m, j, k]) {i=2, j=1, k=13, l=64, m=32} need_replication={l, m}");
  CHECK(p.rule("all_reduce") == "([i, j])->([i, j]) {i=2, j=2}");
  CHECK(p.rule("collective_permute") == "([i, j])->([i, j]) {i=2, j=2}");
}

// ---- ops Shardy's registry gives no rule -----------------------------------------------

TEST_CASE("shardy registry: while, case and nullary ops propagate nothing of their own",
          "[rules][shardy]") {
  // Shardy registers no rule for stablehlo.while / case (data-flow edges) nor
  // for constant and iota. shardc's loops and `if` have none either; its
  // nullary ops have one with no operands, which has no other tensor to move
  // a sharding to: the same for propagation.
  RuleProgram p(R"(
func @f(%p: tensor<i1>, %x: tensor<4x8xf32>) {
  %r = if %p {
    return %x
  } else {
    return %x
  } : tensor<4x8xf32>
  %w = while carry(%v = %x) cond {
    return %p
  } do {
    return %v
  } : tensor<4x8xf32>
  %c = constant dense<1.5> : tensor<4x8xf32>
  %iota = iota {dim = 0} : tensor<8x4xi32>
}
)");
  for (const char *name : {"r", "w"}) {
    INFO(name);
    const Op *op = p.op(name);
    REQUIRE(op);
    CHECK_FALSE(getShardingRule(*op));
  }
  CHECK(p.rule("c") == "()->([i, j]) {i=4, j=8}");
  CHECK(p.rule("iota") == "()->([i, j]) {i=8, j=4}");
}
