// Without --output-dir: a summary per result on rank 0, in the form of
// `shardc --interpret` (tools/shardc/RunProgram.cpp), so the two can be
// compared by eye:
//   result0: tensor<5x3xf32> sharding<@mesh, [{"x"}, {}]>
//     min -0.98  max 0.97  mean 0.0123
//     [0.1, -0.5, ...] (first 8 of 15)
// Each block counts once (its writer's copy), so replicas don't add up twice.
#include "runtime/Outputs.h"
#include "runtime/ProgramText.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

namespace shardrt {
namespace {

constexpr int64_t kShown = 8;

double valueAt(int64_t dtype, const void *buffer, int64_t i) {
  switch (dtype) {
  case SHARDRT_F32:
    return static_cast<const float *>(buffer)[i];
  case SHARDRT_F64:
    return static_cast<const double *>(buffer)[i];
  case SHARDRT_I32:
    return static_cast<const int32_t *>(buffer)[i];
  case SHARDRT_I64:
    return static_cast<double>(static_cast<const int64_t *>(buffer)[i]);
  default:
    return static_cast<const uint8_t *>(buffer)[i];
  }
}

/// The exact value as 64 bits: a double's bits for floats, the integer for
/// integers, so summing with zeros from the other ranks moves it unchanged.
uint64_t bitsAt(int64_t dtype, const void *buffer, int64_t i) {
  uint64_t bits = 0;
  if (dtype == SHARDRT_F32 || dtype == SHARDRT_F64) {
    double v = valueAt(dtype, buffer, i);
    std::memcpy(&bits, &v, sizeof bits);
  } else if (dtype == SHARDRT_I64) {
    bits = static_cast<uint64_t>(static_cast<const int64_t *>(buffer)[i]);
  } else {
    bits = static_cast<uint64_t>(static_cast<int64_t>(valueAt(dtype, buffer, i)));
  }
  return bits;
}

std::string valueText(int64_t dtype, uint64_t bits) {
  if (dtype == SHARDRT_F32 || dtype == SHARDRT_F64) {
    double v;
    std::memcpy(&v, &bits, sizeof v);
    return format("%.6g", v);
  }
  return format("%lld", static_cast<long long>(bits));
}

} // namespace

void printOutputSummary(shardrt_context *ctx, const void *const *outputs) {
  const shardrt_program &program = *ctx->program;
  for (int64_t i = 0; i < program.num_outputs; ++i) {
    const shardrt_tensor &t = program.outputs[i];
    Block block = blockOf(ctx, t);
    int64_t elements = product(t.shape, 0, t.ndims);
    // sum (NaN included, as the interpreter's mean); extremes = {-min, max}
    // without NaN, both reduced with MPI_MAX; the first values by global index.
    double sum = 0, extremes[2] = {-std::numeric_limits<double>::infinity(),
                                   -std::numeric_limits<double>::infinity()};
    uint64_t first[kShown] = {};
    if (block.writes)
      forEachRun(block, [&](int64_t globalOffset, int64_t localOffset, int64_t count) {
        for (int64_t k = 0; k < count; ++k) {
          double v = valueAt(t.dtype, outputs[i], localOffset + k);
          sum += v;
          if (!std::isnan(v)) {
            extremes[0] = std::max(extremes[0], -v);
            extremes[1] = std::max(extremes[1], v);
          }
          if (globalOffset + k < kShown)
            first[globalOffset + k] = bitsAt(t.dtype, outputs[i], localOffset + k);
        }
      });
    double totalSum = 0, totalExtremes[2];
    uint64_t totalFirst[kShown];
    MPI_Request requests[3];
    checkMpi(ctx, MPI_Ireduce(&sum, &totalSum, 1, MPI_DOUBLE, MPI_SUM, 0, ctx->world, &requests[0]),
             "MPI_Ireduce");
    checkMpi(
        ctx,
        MPI_Ireduce(extremes, totalExtremes, 2, MPI_DOUBLE, MPI_MAX, 0, ctx->world, &requests[1]),
        "MPI_Ireduce");
    checkMpi(
        ctx,
        MPI_Ireduce(first, totalFirst, kShown, MPI_UINT64_T, MPI_SUM, 0, ctx->world, &requests[2]),
        "MPI_Ireduce");
    waitAll(ctx, 3, requests, "MPI_Ireduce");
    if (ctx->rank != 0)
      continue;
    std::string text = format("result%lld: %s%s\n", static_cast<long long>(i), typeText(t).c_str(),
                              shardingText(program, t).c_str());
    if (elements == 0) {
      text += "  (no elements)\n";
    } else {
      double lo = -totalExtremes[0], hi = totalExtremes[1];
      if (std::isinf(hi) && hi < 0) // every value is NaN
        lo = hi = NAN;
      text += format("  min %.6g  max %.6g  mean %.6g\n  [", lo, hi,
                     totalSum / static_cast<double>(elements));
      int64_t shown = std::min(elements, kShown);
      for (int64_t k = 0; k < shown; ++k)
        text += (k ? ", " : "") + valueText(t.dtype, totalFirst[k]);
      text += shown < elements
                  ? format(", ...] (first %lld of %lld)\n", static_cast<long long>(shown),
                           static_cast<long long>(elements))
                  : "]\n";
    }
    std::fputs(text.c_str(), stdout);
  }
  std::fflush(stdout);
}

} // namespace shardrt
