/* A program whose kernel fails on one rank (rank 2) while the others wait in
 * a collective: the job must end at once with rank 2's message, not hang. */
#include "runtime/shardrt.h"

#include <stddef.h>

static const char *const axis_names[] = {"x"};
static const int64_t axis_sizes[] = {4};
static const shardrt_mesh meshes[] = {{"mesh", 1, axis_names, axis_sizes, NULL}};
static const shardrt_axis_ref axis_x = {0, 1, 4};
static const shardrt_group over_x = {0, 1, &axis_x};
static const shardrt_program program = {"failing.shd", 4, 1,       meshes, 0,    NULL, 0,
                                        NULL,          1, &over_x, 0,      NULL, 0};

static void kernel(shardrt_context *ctx, const void *const *in, void *const *out) {
  (void)in;
  (void)out;
  float value = 1, total = 0;
  if (shardrt_rank(ctx) == 2)
    shardrt_fail(ctx, "the kernel failed on purpose");
  shardrt_all_reduce(ctx, -1, &over_x, SHARDRT_F32, 1, SHARDRT_SUM, &value, &total);
}

int main(int argc, char **argv) { return shardrt_main(&program, kernel, argc, argv); }
