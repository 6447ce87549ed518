// shardc-calibrate step 2: per mesh axis, the runtime's collectives timed in
// lockstep at a small and a large size, and what a collective adds among
// ranks that compute between collectives (the busy latency), bounded as
// Estimate.h says.
#include "tools/shardc-calibrate/Calibrate.h"
#include "tools/shardc-calibrate/Estimate.h"

#include <sched.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

namespace shardc::calibrate {

using autoshard::AxisCost;
using autoshard::CollectiveCost;

namespace {

/// One runtime collective over `group` (of `p` devices) of a `bytes`-byte
/// buffer: the gathered, reduced or exchanged whole.
void collective(shardrt_context *ctx, const shardrt_group &group, const std::string &kind, int p,
                size_t bytes, std::vector<float> &in, std::vector<float> &out) {
  const int64_t count = static_cast<int64_t>(std::max<size_t>(bytes / sizeof(float), p) / p * p);
  in.resize(static_cast<size_t>(count));
  out.resize(static_cast<size_t>(count));
  const int64_t block[] = {count / p}, whole[] = {count};
  if (kind == "all_gather")
    shardrt_all_gather(ctx, -1, &group, SHARDRT_F32, 1, block, 0, in.data(), out.data());
  else if (kind == "all_reduce")
    shardrt_all_reduce(ctx, -1, &group, SHARDRT_F32, count, SHARDRT_SUM, in.data(), out.data());
  else if (kind == "reduce_scatter")
    shardrt_reduce_scatter(ctx, -1, &group, SHARDRT_F32, 1, whole, 0, in.data(), out.data());
  else
    shardrt_all_to_all(ctx, -1, &group, SHARDRT_F32, 1, whole, 0, 0, in.data(), out.data());
}

/// The bytes the reshard planner counts per device for a collective over
/// `p` devices of a `buffer`-byte value (the gathered, reduced or exchanged
/// whole).
double plannerBytes(const std::string &kind, int p, double buffer) {
  double share = buffer * (p - 1) / p;
  return kind == "all_reduce" ? 2 * share : share;
}

/// A rank's share of arithmetic: `rounds` multiply-adds in a dependent chain,
/// stored to a volatile so that the compiler keeps the loop.
void busyWork(long rounds) {
  double a = 1.0;
  for (long i = 0; i < rounds; ++i)
    a = a * 1.0000001 + 1e-9;
  volatile double sink = a;
  (void)sink;
}

/// Seconds of CPU time this process has used.
double cpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

/// The cores the ranks can use at once: the fewer of the ranks and the
/// cores in the union of their affinity masks (`taskset -c 0 mpiexec`
/// gives every rank the same single core).
int usableCores() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  sched_getaffinity(0, sizeof mask, &mask);
  cpu_set_t all;
  allreduceYielding(&mask, &all, static_cast<int>(sizeof mask), MPI_BYTE, MPI_BOR, MPI_COMM_WORLD);
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  return std::max(1, std::min(CPU_COUNT(&all), ranks));
}

/// Rounds of busyWork taking about `seconds` of CPU time: from rank 0's
/// CPU time for 2^16 rounds, the least of 3 runs, the same on every rank.
/// Another program's time slices are not this one's CPU time; timed on the
/// clock (as it was), one slow run under load shortened the rounds 200-fold.
long busyRounds(double seconds) {
  const long probe = 1 << 16;
  double least = 1e30;
  for (int run = 0; run < 3; ++run) {
    const double start = cpuSeconds();
    busyWork(probe);
    least = std::min(least, cpuSeconds() - start);
  }
  long wanted =
      std::max(1L, static_cast<long>(static_cast<double>(probe) * seconds / std::max(least, 1e-9)));
  MPI_Bcast(&wanted, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  return wanted;
}

/// What a collective on `group` adds to a program whose ranks compute
/// between collectives: blocks of `o.repeats` x 8 rounds of ~250 us of
/// arithmetic per rank, with and without a small all_reduce after each
/// round, 2 x `o.repeats` + 1 blocks of each kind taken in turns (the order
/// alternating, so that a slow spell of the machine falls on both kinds),
/// the difference of their medians per round (busyLatencyEstimate). In
/// lockstep a collective costs its latency; among busy ranks it also waits
/// for the slowest partner, and where ranks share cores (4 ranks on 2) that
/// wait is a share of the partner's time slice: tens to hundreds of
/// microseconds, which a plan with more collectives pays each time. Every
/// group of the axis measures at once; the share of the `cores` usable
/// cores all ranks had meanwhile tells whether another program ran.
BusyLatencySample busyLatency(shardrt_context *ctx, const shardrt_group &group, MPI_Comm comm,
                              const Options &o, long rounds, int cores) {
  std::vector<float> in(4, 1.0f), out(4);
  const int count = o.repeats * 8;
  auto block = [&](bool synchronize) {
    return [&, synchronize] {
      for (int i = 0; i < count; ++i) {
        busyWork(rounds);
        if (synchronize)
          shardrt_all_reduce(ctx, -1, &group, SHARDRT_F32, 4, SHARDRT_SUM, in.data(), out.data());
      }
    };
  };
  std::vector<double> synchronized, free;
  const double cpuStart = cpuSeconds(), wallStart = now();
  for (int pair = 0; pair < 2 * o.repeats + 1; ++pair) {
    const bool warmUp = pair == 0;
    for (bool synchronize : {pair % 2 == 0, pair % 2 != 0})
      (synchronize ? synchronized : free)
          .push_back(samples(comm, 1, block(synchronize), warmUp).front());
  }
  // CPU time summed and wall time at its longest over all ranks.
  double local[2] = {cpuSeconds() - cpuStart, -(now() - wallStart)}, all[2];
  allreduceYielding(&local[0], &all[0], 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  allreduceYielding(&local[1], &all[1], 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  BusyLatencySample sample = busyLatencyEstimate(synchronized, free, count);
  sample.coreShare = coreShare(all[0], -all[1], cores);
  return sample;
}

/// How many times a busy latency past the bound is measured in all.
constexpr int kBusyLatencyAttempts = 3;

/// An axis's figures as measured: each kind's lockstep latency and its
/// bandwidth, and the busy latency (negative when not believed) with the
/// attempt that added the least.
struct AxisMeasurement {
  std::string name;
  AxisCost lockstep{0, 0};
  double busy = -1, lockstepLatency = 0;
  BusyLatencySample smallestAttempt;
  /// The largest share of the cores in an attempt, and whether every
  /// attempt was disturbed.
  double bestCoreShare = 0;
  bool disturbed = false;
  size_t attempts = 0;
};

/// Step 2 for the axis `axis` of `mesh`; prints each kind on rank 0.
AxisMeasurement measureAxis(shardrt_context *ctx, const Mesh &mesh, size_t axis, int rank,
                            const Options &o, long rounds, int cores) {
  int64_t stride = 1;
  for (size_t a = axis + 1; a < mesh.axes.size(); ++a)
    stride *= mesh.axes[a].size;
  int64_t size = mesh.axes[axis].size;
  int64_t coordinate = (rank / stride) % size;
  MPI_Comm comm;
  MPI_Comm_split(MPI_COMM_WORLD, static_cast<int>(rank - coordinate * stride),
                 static_cast<int>(coordinate), &comm);
  const shardrt_axis_ref ref{static_cast<int64_t>(axis), 1, size};
  const shardrt_group group{0, 1, &ref};
  const std::string label =
      "axis " + mesh.axes[axis].name + " (" + std::to_string(size) + " ranks)";
  AxisMeasurement m;
  m.name = mesh.axes[axis].name;
  std::vector<float> in, out;
  std::vector<double> kindLatencies;
  const char *kinds[] = {"all_gather", "all_reduce", "reduce_scatter", "all_to_all"};
  for (const char *kind : kinds) {
    const int p = static_cast<int>(size);
    double small =
        timed(comm, o.repeats * 8, [&] { collective(ctx, group, kind, p, 4 * p, in, out); });
    double large = timed(comm, o.repeats * 2,
                         [&] { collective(ctx, group, kind, p, o.collectiveBytes, in, out); });
    double bandwidth = plannerBytes(kind, p, static_cast<double>(o.collectiveBytes)) /
                       std::max(large - small, 1e-9);
    if (rank == 0)
      std::printf("%s: %-14s latency %.2f us, bandwidth %.3f GB/s\n", label.c_str(), kind,
                  small * 1e6, bandwidth / 1e9);
    m.lockstep.kinds[kind] = CollectiveCost{small, bandwidth};
    kindLatencies.push_back(small);
  }
  m.lockstepLatency = lockstepLatency(kindLatencies);
  // A busy latency past its limit or disturbed is measured again after a
  // pause (a burst of another program's work may have passed), by every
  // group of the axis at once, so that they share the cores as the first time.
  std::vector<BusyLatencySample> attempts;
  for (int attempt = 0; attempt < kBusyLatencyAttempts; ++attempt) {
    if (attempt > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    attempts.push_back(busyLatency(ctx, group, comm, o, rounds, cores));
    m.busy = chooseBusyLatency(attempts, m.lockstepLatency);
    const double limit = busyLatencyLimit(attempts.back(), m.lockstepLatency);
    if (rank == 0)
      std::printf("%s: among busy ranks a collective adds %.2f us to a %.2f us round (the ranks "
                  "had %.0f%% of %d cores)%s%s\n",
                  label.c_str(), attempts.back().added * 1e6, attempts.back().round * 1e6,
                  attempts.back().coreShare * 100, cores,
                  attempts.back().added <= limit ? "" : ", past the limit",
                  busyLatencyDisturbed(attempts.back()) ? ", disturbed" : "");
    m.disturbed = std::all_of(attempts.begin(), attempts.end(), busyLatencyDisturbed);
    int again = m.busy < 0 || m.disturbed, anyAgain = 0;
    allreduceYielding(&again, &anyAgain, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (!anyAgain)
      break;
  }
  m.smallestAttempt = *std::min_element(
      attempts.begin(), attempts.end(),
      [](const BusyLatencySample &a, const BusyLatencySample &b) { return a.added < b.added; });
  for (const BusyLatencySample &attempt : attempts)
    m.bestCoreShare = std::max(m.bestCoreShare, attempt.coreShare);
  m.attempts = attempts.size();
  MPI_Comm_free(&comm);
  return m;
}

/// The model's figures of an axis whose collectives add `busy` among busy
/// ranks: each kind's latency is the larger of its lockstep one and `busy`
/// (what a program pays), the axis's own figures the kinds' mean.
AxisCost axisCost(const AxisMeasurement &m, double busy) {
  AxisCost mean(0, 0);
  for (const auto &[kind, lockstep] : m.lockstep.kinds) {
    const double latency = std::max(lockstep.latency, busy);
    mean.kinds[kind] = CollectiveCost{latency, lockstep.bandwidth};
    mean.latency += latency / static_cast<double>(m.lockstep.kinds.size());
    mean.bandwidth += lockstep.bandwidth / static_cast<double>(m.lockstep.kinds.size());
  }
  return mean;
}

/// Each axis's model from `measured`: a busy latency not believed is
/// replaced by fallbackBusyLatency, with a warning on rank 0.
std::vector<AxisCost> resolveAxes(const std::vector<AxisMeasurement> &measured, int rank) {
  std::vector<double> believed;
  for (const AxisMeasurement &m : measured)
    if (m.busy >= 0)
      believed.push_back(m.busy);
  std::vector<AxisCost> costs;
  for (const AxisMeasurement &m : measured) {
    double busy = m.busy;
    if (busy >= 0 && m.disturbed && rank == 0)
      std::fprintf(stderr,
                   "shardc-calibrate: warning: axis %s - another program ran while the busy "
                   "latency was measured (the ranks had %.0f%% of their cores at best, in %zu "
                   "measurements): %.2f us written, which counts that program's time slices "
                   "too; calibrate again on a quiet machine\n",
                   m.name.c_str(), m.bestCoreShare * 100, m.attempts, busy * 1e6);
    if (busy < 0) {
      busy = fallbackBusyLatency(believed);
      std::string written = "its lockstep latencies";
      for (const AxisMeasurement &other : measured)
        if (other.busy >= 0 && other.busy == busy) {
          char figure[64];
          std::snprintf(figure, sizeof figure, " (%.2f us)", busy * 1e6);
          written = "axis " + other.name + "'s figure" + figure;
        }
      if (rank == 0)
        std::fprintf(stderr,
                     "shardc-calibrate: warning: axis %s - among busy ranks a collective added "
                     "%.2f us at least, over %.0fx its lockstep latency (%.2f us) and %.0f of "
                     "its %.2f us rounds of arithmetic, in %d measurements: another program was "
                     "likely running; written as %s; calibrate again on a quiet machine\n",
                     m.name.c_str(), m.smallestAttempt.added * 1e6, kBusyLatencyLimitRatio,
                     m.lockstepLatency * 1e6, kBusyLatencyLimitRounds,
                     m.smallestAttempt.round * 1e6, kBusyLatencyAttempts, written.c_str());
    }
    costs.push_back(axisCost(m, busy));
  }
  return costs;
}

} // namespace

std::vector<std::pair<std::string, AxisCost>> measureAxes(shardrt_context *ctx, const Mesh &mesh,
                                                          int rank, const Options &o) {
  const int cores = usableCores();
  const long rounds = busyRounds(o.gemmN >= 256 ? 250e-6 : 50e-6);
  std::vector<AxisMeasurement> measured;
  for (size_t a = 0; a < mesh.axes.size(); ++a)
    if (mesh.axes[a].size > 1)
      measured.push_back(measureAxis(ctx, mesh, a, rank, o, rounds, cores));
  const std::vector<AxisCost> costs = resolveAxes(measured, rank);
  std::vector<std::pair<std::string, AxisCost>> axes;
  for (size_t a = 0; a < measured.size(); ++a)
    axes.emplace_back(measured[a].name, costs[a]);
  return axes;
}

} // namespace shardc::calibrate
