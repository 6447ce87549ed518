// shardc-calibrate step 2: per mesh axis, the runtime's collectives timed in
// lockstep at a small and a large size, and what a collective adds among
// ranks that compute between collectives (the busy latency), bounded as
// Estimate.h says.
#include "tools/shardc-calibrate/Calibrate.h"
#include "tools/shardc-calibrate/Estimate.h"

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

/// A rank's share of arithmetic: `rounds` multiply-adds in a dependent chain.
double busyWork(long rounds) {
  static volatile double sink;
  double a = 1.0;
  for (long i = 0; i < rounds; ++i)
    a = a * 1.0000001 + 1e-9;
  sink = a;
  return a;
}

/// Rounds of busyWork taking about `seconds` on one core (rank 0's
/// measurement, the same on every rank).
long busyRounds(double seconds) {
  long rounds = 1 << 16;
  double start = now();
  busyWork(rounds);
  double taken = std::max(now() - start, 1e-9);
  long wanted = std::max(1L, static_cast<long>(rounds * seconds / taken));
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
/// microseconds, which a plan with more collectives pays each time.
BusyLatencySample busyLatency(shardrt_context *ctx, const shardrt_group &group, MPI_Comm comm,
                              const Options &o, long rounds) {
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
  for (int pair = 0; pair < 2 * o.repeats + 1; ++pair) {
    const bool warmUp = pair == 0;
    for (bool synchronize : {pair % 2 == 0, pair % 2 != 0})
      (synchronize ? synchronized : free)
          .push_back(samples(comm, 1, block(synchronize), warmUp).front());
  }
  return busyLatencyEstimate(synchronized, free, count);
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
};

/// Step 2 for the axis `axis` of `mesh`; prints each kind on rank 0.
AxisMeasurement measureAxis(shardrt_context *ctx, const Mesh &mesh, size_t axis, int rank,
                            const Options &o, long rounds) {
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
  // A busy latency past the bound is measured again after a pause (a burst
  // of another program's work may have passed), by every group of the axis
  // at once, so that they share the cores as the first time.
  std::vector<BusyLatencySample> attempts;
  for (int attempt = 0; attempt < kBusyLatencyAttempts; ++attempt) {
    if (attempt > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    attempts.push_back(busyLatency(ctx, group, comm, o, rounds));
    m.busy = chooseBusyLatency(attempts, m.lockstepLatency);
    const double limit = busyLatencyLimit(attempts.back(), m.lockstepLatency);
    if (rank == 0)
      std::printf("%s: among busy ranks a collective adds %.2f us to a %.2f us round%s\n",
                  label.c_str(), attempts.back().added * 1e6, attempts.back().round * 1e6,
                  attempts.back().added <= limit ? "" : " (past the limit)");
    int again = m.busy < 0, anyAgain = 0;
    MPI_Request request;
    MPI_Iallreduce(&again, &anyAgain, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &request);
    waitYielding(request);
    if (!anyAgain)
      break;
  }
  m.smallestAttempt = *std::min_element(
      attempts.begin(), attempts.end(),
      [](const BusyLatencySample &a, const BusyLatencySample &b) { return a.added < b.added; });
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
  const long rounds = busyRounds(o.gemmN >= 256 ? 250e-6 : 50e-6);
  std::vector<AxisMeasurement> measured;
  for (size_t a = 0; a < mesh.axes.size(); ++a)
    if (mesh.axes[a].size > 1)
      measured.push_back(measureAxis(ctx, mesh, a, rank, o, rounds));
  const std::vector<AxisCost> costs = resolveAxes(measured, rank);
  std::vector<std::pair<std::string, AxisCost>> axes;
  for (size_t a = 0; a < measured.size(); ++a)
    axes.emplace_back(measured[a].name, costs[a]);
  return axes;
}

} // namespace shardc::calibrate
