// --profile: time per op (generated code brackets ops with shardrt_op_begin
// and shardrt_op_end; collectives time themselves) and bytes and time per
// collective. Rank 0 prints the maximum over ranks: the slowest rank is the
// one an SPMD program waits for. The same brackets feed --trace (Trace.cpp).
#include "runtime/Context.h"

#include <algorithm>
#include <cstdio>

namespace shardrt {

const char *collectiveName(Collective kind) {
  static const char *const names[] = {"all_gather",  "all_reduce", "reduce_scatter",
                                      "all_to_all",  "all_slice",  "collective_permute",
                                      "redistribute"};
  return names[static_cast<int>(kind)];
}

void recordCollective(shardrt_context *ctx, int64_t op, Collective kind, double start,
                      double bytes) {
  double end = now();
  recordOverlappedCollective(ctx, op, kind, start, end, end - start, bytes);
}

void recordOverlappedCollective(shardrt_context *ctx, int64_t op, Collective kind, double start,
                                double end, double seconds, double bytes) {
  traceSpan(ctx, static_cast<int64_t>(kind), op, start, end, bytes);
  for (OpStats *stats : {&ctx->collectiveStats[static_cast<size_t>(kind)],
                         op >= 0 && op < static_cast<int64_t>(ctx->opStats.size())
                             ? &ctx->opStats[static_cast<size_t>(op)]
                             : nullptr}) {
    if (!stats)
      continue;
    stats->calls += 1;
    stats->seconds += seconds;
    stats->callSeconds.push_back(seconds);
    stats->bytes += bytes;
  }
  // Under a memory budget the compiler counted the scratch at this
  // collective only.
  if (ctx->program && ctx->program->release_scratch)
    releaseScratch(ctx);
}

namespace {

constexpr size_t kStatsFields = 4;

double median(std::vector<double> values) {
  if (values.empty())
    return 0;
  auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

/// calls, seconds, median call seconds, bytes of every stats entry, maximum
/// over ranks, on rank 0. The median is robust to the first run's page faults,
/// which a benchmark of few runs would otherwise average in.
std::vector<double> maxOverRanks(shardrt_context *ctx, const std::vector<const OpStats *> &all) {
  std::vector<double> mine, result(kStatsFields * all.size());
  for (const OpStats *s : all)
    mine.insert(mine.end(),
                {static_cast<double>(s->calls), s->seconds, median(s->callSeconds), s->bytes});
  MPI_Request request;
  checkMpi(ctx,
           MPI_Ireduce(mine.data(), result.data(), mpiCount(ctx, mine.size()), MPI_DOUBLE, MPI_MAX,
                       0, ctx->world, &request),
           "MPI_Ireduce");
  waitAll(ctx, 1, &request, "MPI_Ireduce");
  return result;
}

void printTable(const char *title, const std::vector<std::string> &names,
                const std::vector<double> &stats) {
  size_t width = std::string(title).size();
  for (const std::string &name : names)
    width = std::max(width, std::min<size_t>(name.size(), 60));
  std::printf("%-*s %8s %12s %12s %12s %14s\n", static_cast<int>(width), title, "calls", "total ms",
              "mean us", "median us", "bytes/device");
  for (size_t i = 0; i < names.size(); ++i) {
    const double *s = &stats[kStatsFields * i];
    double calls = s[0], seconds = s[1], medianSeconds = s[2], bytes = s[3];
    if (calls == 0)
      continue;
    std::printf("%-*s %8.0f %12.3f %12.1f %12.1f %14.0f\n", static_cast<int>(width),
                names[i].c_str(), calls, seconds * 1e3, seconds / calls * 1e6, medianSeconds * 1e6,
                bytes);
  }
}

} // namespace
} // namespace shardrt

using namespace shardrt;

extern "C" {

void shardrt_op_begin(shardrt_context *ctx, int64_t op) {
  if (timingOps(ctx) && op >= 0 && op < static_cast<int64_t>(ctx->opStats.size()))
    ctx->opStats[static_cast<size_t>(op)].startTime = now();
}

void shardrt_op_end(shardrt_context *ctx, int64_t op) {
  if (!timingOps(ctx) || op < 0 || op >= static_cast<int64_t>(ctx->opStats.size()))
    return;
  OpStats &stats = ctx->opStats[static_cast<size_t>(op)];
  if (stats.startTime < 0)
    return;
  double end = now(), seconds = end - stats.startTime;
  traceSpan(ctx, kTraceOp, op, stats.startTime, end);
  stats.calls += 1;
  stats.seconds += seconds;
  stats.callSeconds.push_back(seconds);
  stats.startTime = -1;
}

void shardrt_print_profile(shardrt_context *ctx) {
  if (!ctx->options.tracePath.empty())
    writeTrace(ctx);
  const shardrt_program &program = *ctx->program;
  bool showRuns = ctx->options.profile || ctx->options.repeat > 1;
  if (!showRuns)
    return;
  // Run times: each run's slowest rank.
  std::vector<double> runs(ctx->runSeconds.size());
  MPI_Request request;
  checkMpi(ctx,
           MPI_Ireduce(ctx->runSeconds.data(), runs.data(), mpiCount(ctx, runs.size()), MPI_DOUBLE,
                       MPI_MAX, 0, ctx->world, &request),
           "MPI_Ireduce");
  waitAll(ctx, 1, &request, "MPI_Ireduce");
  std::vector<const OpStats *> ops, kinds;
  std::vector<std::string> opNames, kindNames;
  for (int64_t i = 0; i < program.num_ops; ++i) {
    ops.push_back(&ctx->opStats[static_cast<size_t>(i)]);
    opNames.push_back(program.op_names[i]);
  }
  for (size_t k = 0; k < ctx->collectiveStats.size(); ++k) {
    kinds.push_back(&ctx->collectiveStats[k]);
    kindNames.push_back(collectiveName(static_cast<Collective>(k)));
  }
  std::vector<double> opStats, kindStats;
  std::vector<long long> peaks(static_cast<size_t>(ctx->ranks));
  if (ctx->options.profile) {
    opStats = maxOverRanks(ctx, ops);
    kindStats = maxOverRanks(ctx, kinds);
    long long peak = peakAllocatedBytes();
    checkMpi(ctx,
             MPI_Igather(&peak, 1, MPI_LONG_LONG, peaks.data(), 1, MPI_LONG_LONG, 0, ctx->world,
                         &request),
             "MPI_Igather");
    waitAll(ctx, 1, &request, "MPI_Igather");
  }
  if (ctx->rank != 0)
    return;
  std::sort(runs.begin(), runs.end());
  if (!runs.empty())
    std::printf("runs: %zu on %d ranks, min %.3f ms, median %.3f ms, max %.3f ms\n", runs.size(),
                ctx->ranks, runs.front() * 1e3, runs[runs.size() / 2] * 1e3, runs.back() * 1e3);
  if (ctx->options.profile) {
    std::printf("profile (over all runs; maximum over ranks):\n");
    printTable("op", opNames, opStats);
    printTable("collective", kindNames, kindStats);
    // Everything the runtime allocated: the arena, inputs, outputs, scratch.
    std::printf("peak allocated bytes per rank:");
    for (long long peak : peaks)
      std::printf(" %lld", peak);
    std::printf("\n");
    std::fputs(nodesText(program, ctx->nodeOfRank).c_str(), stdout);
  }
  std::fflush(stdout);
}

} // extern "C"
