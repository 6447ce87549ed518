// Times small collectives: MPI's blocking calls against the runtime's
// nonblocking start + MPI_Test/sched_yield wait (DESIGN.md: with more ranks
// than cores the blocking calls busy-poll). A measuring tool, not a test:
//   mpiexec.mpich -n 8 shardrt_collective_bench [ITERATIONS]
#include "TestProgram.h"

#include <algorithm>
#include <cstdlib>

using namespace shardrt_test;

namespace {

/// Median seconds per call of `body`, as seen by the slowest rank.
template <typename Fn> double medianSeconds(int iterations, Fn &&body) {
  std::vector<double> times;
  for (int i = 0; i < iterations; ++i) {
    double start = MPI_Wtime();
    body();
    times.push_back(MPI_Wtime() - start);
  }
  std::sort(times.begin(), times.end());
  double median = times[times.size() / 2], slowest = 0;
  MPI_Allreduce(&median, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  int iterations = argc > 1 ? std::atoi(argv[1]) : 200;
  Program program(ranks);
  program.addMesh("mesh", {{"x", ranks}});
  program.addGroup(0, {full(0, ranks)});
  char name[] = "bench";
  char *args[] = {name, nullptr};
  shardrt_context *ctx = shardrt_init(program.get(), 1, args);
  shardrt_axis_ref x = full(0, ranks);
  shardrt_group group{0, 1, &x};
  std::vector<float> in(256, 1.0f), out(256 * static_cast<size_t>(ranks));

  // Warm up: communicator creation and MPICH's first-touch costs.
  for (int i = 0; i < 5; ++i) {
    shardrt_all_reduce(ctx, -1, &group, SHARDRT_F32, 256, SHARDRT_SUM, in.data(), out.data());
    MPI_Allreduce(in.data(), out.data(), 256, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  }
  double blockingReduce = medianSeconds(iterations, [&] {
    MPI_Allreduce(in.data(), out.data(), 256, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  });
  double runtimeReduce = medianSeconds(iterations, [&] {
    shardrt_all_reduce(ctx, -1, &group, SHARDRT_F32, 256, SHARDRT_SUM, in.data(), out.data());
  });
  const int64_t shape[] = {256};
  double blockingGather = medianSeconds(iterations, [&] {
    MPI_Allgather(in.data(), 256, MPI_FLOAT, out.data(), 256, MPI_FLOAT, MPI_COMM_WORLD);
  });
  double runtimeGather = medianSeconds(iterations, [&] {
    shardrt_all_gather(ctx, -1, &group, SHARDRT_F32, 1, shape, 0, in.data(), out.data());
  });
  if (rank == 0)
    std::printf("%d ranks, 1 KiB per rank, median of %d calls (slowest rank):\n"
                "  all_reduce: blocking MPI_Allreduce %.1f us, runtime (nonblocking + "
                "sched_yield) %.1f us\n"
                "  all_gather: blocking MPI_Allgather %.1f us, runtime %.1f us\n",
                ranks, iterations, blockingReduce * 1e6, runtimeReduce * 1e6, blockingGather * 1e6,
                runtimeGather * 1e6);
  shardrt_finalize(ctx);
  MPI_Finalize();
  return 0;
}
