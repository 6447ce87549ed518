/* A program written by hand the way the LLVM backend will generate one:
 * constant description structs and a per-device kernel that calls the
 * runtime's collectives. Written in C99 to check that shardrt.h is C. The
 * tests run it to check the executable's command line, files and errors.
 *
 *   @mesh = {<["x"=2, "y"=2]>, device_ids=[3, 1, 2, 0]}
 *   func @main(%a: tensor<5x3xf32> sharding<@mesh, [{"x"}, {}]>,
 *              %b: tensor<5x3xf32> sharding<@mesh, [{"x"}, {"y"}]>)
 *       -> (tensor<5x3xf32> sharding<@mesh, [{"x"}, {}]>,   // a + b
 *           tensor<3xf32> sharding<@mesh, [{}]>,             // column sums of a
 *           tensor<4xi32> sharding<@mesh, [{"x", "y"}]>)     // device order
 */
#include "runtime/shardrt.h"

#include <string.h>

static const char *const axis_names[] = {"x", "y"};
static const int64_t axis_sizes[] = {2, 2};
static const int64_t device_ids[] = {3, 1, 2, 0};
static const shardrt_mesh meshes[] = {{"mesh", 2, axis_names, axis_sizes, device_ids}};

static const shardrt_axis_ref axis_x = {0, 1, 2}, axis_y = {1, 1, 2};
static const shardrt_axis_ref x_then_y[] = {{0, 1, 2}, {1, 1, 2}};
static const int64_t shape_5x3[] = {5, 3}, shape_3[] = {3}, shape_4[] = {4};
static const int64_t on_x[] = {1, 0}, on_x_y[] = {1, 1}, on_none[] = {0}, on_both[] = {2};

static const shardrt_tensor inputs[] = {
    {"a", SHARDRT_F32, 2, shape_5x3, 0, on_x, &axis_x},
    {"b", SHARDRT_F32, 2, shape_5x3, 0, on_x_y, x_then_y},
};
static const shardrt_tensor outputs[] = {
    {NULL, SHARDRT_F32, 2, shape_5x3, 0, on_x, &axis_x},
    {NULL, SHARDRT_F32, 1, shape_3, 0, on_none, NULL},
    {NULL, SHARDRT_I32, 1, shape_4, 0, on_both, x_then_y},
};
static const char *const op_names[] = {
    "%b_rows = all_gather %b (demo.shd:9)", "%r0 = add %a, %b_rows (demo.shd:10)",
    "%partial = reduce_sum %a (demo.shd:11)", "%r1 = all_reduce %partial (demo.shd:12)"};
static const shardrt_group groups[] = {{0, 1, &axis_x}, {0, 1, &axis_y}};
static const shardrt_group *const over_x = &groups[0], *const over_y = &groups[1];
static const shardrt_program program = {
    "demo.shd", 4, 1, meshes, 2, inputs, 3, outputs, 2, groups, 4, op_names, 0 /* keep scratch */};

/* Local shapes: a 3x3, b 3x2 (column 3 of y=1 is padding), result0 3x3,
 * result1 3, result2 1. Rows past 5 are zero padding in a and b. */
static void kernel(shardrt_context *ctx, const void *const *in, void *const *out) {
  const float *a = in[0], *b = in[1];
  float b_rows[3 * 4];
  const int64_t b_shape[] = {3, 2};
  shardrt_all_gather(ctx, 0, over_y, SHARDRT_F32, 2, b_shape, 1, b, b_rows);

  shardrt_op_begin(ctx, 1);
  float *sum = out[0];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      sum[i * 3 + j] = a[i * 3 + j] + b_rows[i * 4 + j];
  shardrt_op_end(ctx, 1);

  shardrt_op_begin(ctx, 2);
  float partial[3] = {0, 0, 0};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      partial[j] += a[i * 3 + j];
  shardrt_op_end(ctx, 2);
  shardrt_all_reduce(ctx, 3, over_x, SHARDRT_F32, 3, SHARDRT_SUM, partial, out[1]);

  int32_t *order = out[2];
  order[0] = 2 * shardrt_axis_index(ctx, 0, &axis_x) + shardrt_axis_index(ctx, 0, &axis_y);
}

int main(int argc, char **argv) { return shardrt_main(&program, kernel, argc, argv); }
