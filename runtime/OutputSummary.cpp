// Without --output-dir: one line per result on rank 0, e.g.
//   result0: tensor<5x3xf32> sharding<@mesh, [{"x"}, {}]>: sum 12.5, min -1, max 3.25
// Each block is counted once (by its writer), so replicas don't add up twice.
#include "runtime/Outputs.h"
#include "runtime/ProgramText.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace shardrt {

void printOutputSummary(shardrt_context *ctx, const void *const *outputs) {
  const shardrt_program &program = *ctx->program;
  for (int64_t i = 0; i < program.num_outputs; ++i) {
    const shardrt_tensor &t = program.outputs[i];
    Block block = blockOf(ctx, t);
    // sums = {sum, NaN count}; extremes = {-min, max}, both reduced with MPI_MAX.
    double sums[2] = {0, 0}, extremes[2] = {-std::numeric_limits<double>::infinity(),
                                            -std::numeric_limits<double>::infinity()};
    if (block.writes)
      forEachHeldValue(block, t.dtype, outputs[i], [&](double v) {
        if (std::isnan(v)) {
          sums[1] += 1;
          return;
        }
        sums[0] += v;
        extremes[0] = std::max(extremes[0], -v);
        extremes[1] = std::max(extremes[1], v);
      });
    double totalSums[2], totalExtremes[2];
    MPI_Request requests[2];
    checkMpi(ctx, MPI_Ireduce(sums, totalSums, 2, MPI_DOUBLE, MPI_SUM, 0, ctx->world, &requests[0]),
             "MPI_Ireduce");
    checkMpi(
        ctx,
        MPI_Ireduce(extremes, totalExtremes, 2, MPI_DOUBLE, MPI_MAX, 0, ctx->world, &requests[1]),
        "MPI_Ireduce");
    waitAll(ctx, 2, requests, "MPI_Ireduce");
    if (ctx->rank != 0)
      continue;
    std::string line = format("result%lld: %s %s: ", static_cast<long long>(i), typeText(t).c_str(),
                              shardingText(program, t).c_str());
    double elements = static_cast<double>(product(t.shape, 0, t.ndims));
    if (elements == 0)
      line += "empty";
    else if (totalSums[1] == elements)
      line += "all NaN";
    else
      line +=
          format("sum %.6g, min %.6g, max %.6g", totalSums[0], -totalExtremes[0], totalExtremes[1]);
    if (totalSums[1] > 0 && totalSums[1] < elements)
      line += format(", %.0f NaN", totalSums[1]);
    std::printf("%s\n", line.c_str());
  }
  std::fflush(stdout);
}

} // namespace shardrt
