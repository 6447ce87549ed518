// shardrt_main: the whole life of a generated executable, in order.
#include "runtime/Context.h"

#include <vector>

extern "C" int shardrt_main(const shardrt_program *program, shardrt_kernel kernel, int argc,
                            char **argv) {
  shardrt_context *ctx = shardrt_init(program, argc, argv);
  std::vector<void *> inputs, outputs;
  double start = shardrt::now();
  for (int64_t i = 0; i < program->num_inputs; ++i)
    inputs.push_back(shardrt_read_input(ctx, i));
  shardrt::traceSpan(ctx, shardrt::kTraceInputs, -1, start, shardrt::now());
  for (int64_t i = 0; i < program->num_outputs; ++i)
    outputs.push_back(shardrt_alloc_output(ctx, i));
  for (int64_t run = 0; run < shardrt_repeat_count(ctx); ++run) {
    // Every run starts on all ranks at once, so a run's time (its slowest
    // rank) is the computation's and not the skew left by the previous run.
    MPI_Request barrier;
    shardrt::checkMpi(ctx, MPI_Ibarrier(ctx->world, &barrier), "MPI_Ibarrier");
    shardrt::waitAll(ctx, 1, &barrier, "MPI_Ibarrier");
    start = shardrt::now();
    kernel(ctx, inputs.data(), outputs.data());
    double end = shardrt::now();
    ctx->runSeconds.push_back(end - start);
    shardrt::traceSpan(ctx, shardrt::kTraceRun, -1, start, end);
  }
  start = shardrt::now();
  shardrt_write_outputs(ctx, outputs.data());
  shardrt::traceSpan(ctx, shardrt::kTraceOutputs, -1, start, shardrt::now());
  shardrt_print_profile(ctx);
  for (void *buffer : inputs)
    shardrt_free(buffer);
  for (void *buffer : outputs)
    shardrt_free(buffer);
  shardrt_finalize(ctx);
  return 0;
}
