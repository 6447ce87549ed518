// shardc-calibrate: measures the machine auto-sharding prices plans with and
// writes the cost model JSON that `shardc --cost-model` reads.
//
//   mpiexec -n 8 shardc-calibrate --mesh '<["x"=2, "y"=4]>' -o model.json
//
// Every time is the slowest rank's; repeated, a figure is the lower quartile
// of its samples (noise only adds time), see Estimate.h.
// 1. gemm per rank, f32 and f64 (OpenBLAS with one thread per rank as in
//    the executables, every rank at once), a square n^3 product and a
//    skinny (n/8) x n x 4n one:
//    the flop rate and the bandwidth at which operands are moved, solved from
//    time = flops / rate + bytes / bandwidth for the two; memory bandwidth per
//    rank (a triad).
// 2. Per mesh axis of size > 1, on the groups of the devices that differ
//    only in that axis's coordinate: the runtime's own all_gather,
//    all_reduce, reduce_scatter and all_to_all (libshardrt, the calls the
//    executables make: nonblocking MPI with a yielding wait, so ranks that
//    share a core measure what a program sees, not the time slices a
//    blocking MPI call spins away) at a small and a large size;
//    latency = the small size's time, bandwidth = the bytes the
//    reshard planner counts per device for that collective ((p-1)/p of the
//    buffer, twice that for all_reduce) over the large size's time less the
//    latency. Each kind is written apart; the axis's own figures are their
//    mean. Also the time a collective adds among ranks that compute between
//    collectives (busyLatency): where ranks share cores it is far above the
//    lockstep latency, and the larger of the two is written as the latency.
//    A busy latency past its limit (busyLatencyLimit: far above the lockstep
//    latency and more than rounds of arithmetic between collectives) is
//    measured again (twice at most) and, still past it, replaced by another
//    axis's believed figure (or dropped) with a warning on stderr.
// Bad arguments (no or bad mesh, a mesh of another size than -n): exit 2.
#include "frontend/Parser.h"
#include "passes/auto_shard/CostModel.h"
#include "runtime/shardrt.h"
#include "tools/shardc-calibrate/Estimate.h"

#include <cblas.h>
#include <mpi.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

using namespace shardc;
using namespace shardc::autoshard;
using namespace shardc::calibrate;

namespace {

struct Options {
  std::string mesh, output;
  int gemmN = 1024;
  size_t streamBytes = 64u << 20;
  size_t collectiveBytes = 8u << 20;
  int repeats = 5;
};

/// The usage error of `argv`, or "" when the options are good.
std::string parseArgs(int argc, char **argv, Options &o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> const char * { return i + 1 < argc ? argv[++i] : nullptr; };
    const char *v = nullptr;
    if (a == "--mesh" || a == "-o" || a == "--gemm-n" || a == "--bytes" || a == "--repeats") {
      v = value();
      if (!v)
        return a + " needs a value";
    }
    if (a == "--mesh")
      o.mesh = v;
    else if (a == "-o")
      o.output = v;
    else if (a == "--gemm-n" && (o.gemmN = std::atoi(v)) > 0)
      continue;
    else if (a == "--bytes" && std::atol(v) >= 1024)
      o.collectiveBytes = o.streamBytes = static_cast<size_t>(std::atol(v));
    else if (a == "--repeats" && (o.repeats = std::atoi(v)) > 0)
      continue;
    else if (a == "--quick") {
      o.gemmN = 64;
      o.streamBytes = o.collectiveBytes = 64 << 10;
      o.repeats = 2;
    } else
      return "bad argument: " + a;
  }
  if (o.mesh.empty() || o.output.empty())
    return "usage: shardc-calibrate --mesh '<[\"x\"=2, \"y\"=4]>' -o model.json [--quick] "
           "[--gemm-n N] [--bytes B] [--repeats K]";
  return "";
}

/// The mesh written as `<["x"=2, ...]>`; its error text in `error`.
Mesh parseMesh(const std::string &text, std::string &error) {
  SourceFile file("--mesh", "@calibrate = " + text + "\n");
  DiagnosticEngine diags;
  std::unique_ptr<Module> module = parseModule(file, diags);
  if (!module || diags.hasErrors() || module->meshes.size() != 1 ||
      module->meshes[0]->axes.empty()) {
    error = "--mesh - not a mesh: " + text;
    return {};
  }
  return *module->meshes[0];
}

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// Waits for `request` giving the core up between polls: a rank spinning in
/// a blocking MPI call would hold a core that a rank of another group needs
/// when ranks outnumber cores, and the time slices it spins away would land
/// in the other group's measurement.
void waitYielding(MPI_Request &request) {
  int done = 0;
  for (MPI_Test(&request, &done, MPI_STATUS_IGNORE); !done;
       MPI_Test(&request, &done, MPI_STATUS_IGNORE))
    sched_yield();
}

/// The slowest rank's time of `body` on `comm`, `repeats` times (after a
/// warm-up run unless `warmUp` is false).
std::vector<double> samples(MPI_Comm comm, int repeats, const std::function<void()> &body,
                            bool warmUp = true) {
  if (warmUp)
    body();
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    MPI_Request request;
    MPI_Ibarrier(comm, &request);
    waitYielding(request);
    double start = now();
    body();
    double local = now() - start, slowest = 0;
    MPI_Iallreduce(&local, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm, &request);
    waitYielding(request);
    times.push_back(std::max(slowest, 1e-9));
  }
  return times;
}

/// The time of `body` on `comm` from `repeats` samples (oneSidedTime).
double timed(MPI_Comm comm, int repeats, const std::function<void()> &body) {
  return oneSidedTime(samples(comm, repeats, body));
}

/// Flops, bytes and seconds of one m x k x n product.
struct GemmSample {
  double flops, bytes, seconds;
};

template <typename T> GemmSample gemm(const Options &o, int m, int k, int n) {
  std::vector<T> a(static_cast<size_t>(m) * k, T(1)), b(static_cast<size_t>(k) * n, T(1)),
      c(static_cast<size_t>(m) * n, T(0));
  double seconds = timed(MPI_COMM_WORLD, 2 * o.repeats, [&] {
    if constexpr (sizeof(T) == 4)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a.data(), k, b.data(),
                  n, 0.0f, c.data(), n);
    else
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, a.data(), k, b.data(), n,
                  0.0, c.data(), n);
  });
  double bytes = sizeof(T) * (static_cast<double>(a.size()) + b.size() + c.size());
  return {2.0 * m * static_cast<double>(k) * n, bytes, seconds};
}

/// The flop rate and operand bandwidth of `T` products (step 1). When noise
/// makes the two-shape solve meaningless, the square product's rate with
/// operands free (an infinite bandwidth, written as a very large one).
template <typename T> std::pair<double, double> gemmRates(const Options &o) {
  const int n = o.gemmN, skinny = std::max(o.gemmN / 8, 1);
  GemmSample sq = gemm<T>(o, n, n, n), sk = gemm<T>(o, skinny, n, 4 * n);
  // sq.seconds = sq.flops x + sq.bytes y, sk.seconds = sk.flops x + sk.bytes y.
  double det = sq.flops * sk.bytes - sk.flops * sq.bytes;
  double y = det != 0 ? (sq.flops * sk.seconds - sk.flops * sq.seconds) / det : 0;
  double x = (sq.seconds - sq.bytes * y) / sq.flops;
  if (!(x > 0) || !(y > 0))
    return {sq.flops / sq.seconds, 1e15};
  return {1 / x, 1 / y};
}

double memoryBandwidth(const Options &o) {
  size_t n = std::max<size_t>(o.streamBytes / (3 * sizeof(double)), 1024);
  std::vector<double> a(n, 0.0), b(n, 1.0), c(n, 2.0);
  double seconds = timed(MPI_COMM_WORLD, 2 * o.repeats, [&] {
    for (size_t i = 0; i < n; ++i)
      a[i] = b[i] + 3.0 * c[i];
  });
  return 3.0 * sizeof(double) * static_cast<double>(n) / seconds;
}

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

/// The mesh described to the runtime: its axes, and one group per axis made
/// at start-up (outside the timed calls). Owns the arrays it points to.
struct RuntimeMesh {
  std::vector<std::string> names;
  std::vector<const char *> namePointers;
  std::vector<int64_t> sizes;
  std::vector<shardrt_axis_ref> refs;
  std::vector<shardrt_group> groups;
  shardrt_mesh mesh{};
  shardrt_program program{};

  explicit RuntimeMesh(const Mesh &m) {
    for (const MeshAxis &a : m.axes) {
      names.push_back(a.name);
      sizes.push_back(a.size);
    }
    for (size_t a = 0; a < names.size(); ++a) {
      namePointers.push_back(names[a].c_str());
      refs.push_back({static_cast<int64_t>(a), 1, sizes[a]});
    }
    for (const shardrt_axis_ref &ref : refs)
      groups.push_back({0, 1, &ref});
    mesh = {"calibrate", static_cast<int64_t>(sizes.size()), namePointers.data(), sizes.data(),
            nullptr};
    int64_t devices = 1;
    for (int64_t size : sizes)
      devices *= size;
    program.name = "shardc-calibrate";
    program.num_devices = devices;
    program.num_meshes = 1;
    program.meshes = &mesh;
    program.num_groups = static_cast<int64_t>(groups.size());
    program.groups = groups.data();
  }
  RuntimeMesh(const RuntimeMesh &) = delete;
};

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  Options o;
  std::string error = parseArgs(argc, argv, o);
  Mesh mesh;
  if (error.empty())
    mesh = parseMesh(o.mesh, error);
  if (error.empty()) {
    int64_t devices = 1;
    for (const MeshAxis &a : mesh.axes)
      devices *= a.size;
    if (devices != ranks)
      error = "--mesh - the mesh has " + std::to_string(devices) + " devices but mpiexec started " +
              std::to_string(ranks) + " ranks";
  }
  if (!error.empty()) {
    if (rank == 0)
      std::fprintf(stderr, "shardc-calibrate: %s\n", error.c_str());
    MPI_Finalize();
    return 2;
  }
  // One BLAS thread per rank, as the executables run (backend/llvm/Target.cpp).
  openblas_set_num_threads(1);
  RuntimeMesh runtimeMesh(mesh);
  char *runtimeArgs[] = {argv[0], nullptr};
  shardrt_context *ctx = shardrt_init(&runtimeMesh.program, 1, runtimeArgs);
  CostModel model = defaultCostModel();
  auto [f32Rate, operandBandwidth] = gemmRates<float>(o);
  model.flops[DType::F32] = f32Rate;
  model.flops[DType::F64] = gemmRates<double>(o).first;
  model.gemmBandwidth = operandBandwidth;
  model.memoryBandwidth = memoryBandwidth(o);
  if (rank == 0)
    std::printf("gemm f32 %.1f GFLOP/s, f64 %.1f GFLOP/s per rank, operands moved at %.2f GB/s; "
                "memory %.2f GB/s per rank\n",
                model.flops[DType::F32] / 1e9, model.flops[DType::F64] / 1e9,
                model.gemmBandwidth / 1e9, model.memoryBandwidth / 1e9);
  const long rounds = busyRounds(o.gemmN >= 256 ? 250e-6 : 50e-6);
  std::vector<AxisMeasurement> measured;
  for (size_t a = 0; a < mesh.axes.size(); ++a)
    if (mesh.axes[a].size > 1)
      measured.push_back(measureAxis(ctx, mesh, a, rank, o, rounds));
  const std::vector<AxisCost> costs = resolveAxes(measured, rank);
  AxisCost worst(0, 0);
  for (size_t a = 0; a < measured.size(); ++a) {
    const AxisCost &c = costs[a];
    model.axes[measured[a].name] = c;
    worst.latency = std::max(worst.latency, c.latency);
    worst.bandwidth = worst.bandwidth == 0 ? c.bandwidth : std::min(worst.bandwidth, c.bandwidth);
    for (const auto &[kind, k] : c.kinds) {
      auto [it, fresh] = worst.kinds.emplace(kind, k);
      it->second.latency = std::max(it->second.latency, k.latency);
      it->second.bandwidth = std::min(it->second.bandwidth, k.bandwidth);
    }
  }
  if (worst.bandwidth > 0)
    model.collective = worst;
  int status = 0;
  if (rank == 0) {
    std::ofstream out(o.output);
    out << costModelToJson(model);
    if (!out) {
      std::fprintf(stderr, "shardc-calibrate: %s - cannot write\n", o.output.c_str());
      status = 1;
    } else {
      std::printf("wrote %s\n", o.output.c_str());
    }
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  shardrt_finalize(ctx);
  MPI_Finalize();
  return status;
}
