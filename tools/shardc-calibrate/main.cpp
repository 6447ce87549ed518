// shardc-calibrate: measures the machine auto-sharding prices plans with and
// writes the cost model JSON that `shardc --cost-model` reads.
//
//   mpiexec -n 8 shardc-calibrate --mesh '<["x"=2, "y"=4]>' -o model.json
//
// Every time is the slowest rank's; repeated, a figure is the lower quartile
// of its samples (noise only adds time), see Estimate.h.
// 1. Memory bandwidth per rank (a triad); gemm per rank, f32 and f64
//    (OpenBLAS with one thread per rank as in the executables, every rank at
//    once), a square n^3 product and a skinny (n/8) x n x 4n one: the flop
//    rate and the bandwidth at which operands are moved, solved from
//    time = flops / rate + bytes / bandwidth for the two, the operands no
//    faster than the memory (fitGemm).
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
#include "tools/shardc-calibrate/Calibrate.h"
#include "tools/shardc-calibrate/Estimate.h"

#include <cblas.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

using namespace shardc;
using namespace shardc::autoshard;
using namespace shardc::calibrate;

namespace {

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

/// One m x k x n product's flops, bytes and time.
template <typename T> GemmSample gemm(const Options &o, int m, int k, int n) {
  std::vector<T> a(static_cast<size_t>(m) * k, T(1)), b(static_cast<size_t>(k) * n, T(1)),
      c(static_cast<size_t>(m) * n, T(0));
  // The products are the costliest figures (~0.1 s a run at n = 1024):
  // two runs more than asked, not twice as many.
  double seconds = timed(MPI_COMM_WORLD, o.repeats + 2, [&] {
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

/// The flop rate and operand bandwidth of `T` products (step 1), the
/// operands moving no faster than `memoryBandwidth` (fitGemm).
template <typename T> GemmRates gemmRates(const Options &o, double memoryBandwidth) {
  const int n = o.gemmN, skinny = std::max(o.gemmN / 8, 1);
  return fitGemm(gemm<T>(o, n, n, n), gemm<T>(o, skinny, n, 4 * n), memoryBandwidth);
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
  model.memoryBandwidth = memoryBandwidth(o);
  const GemmRates f32 = gemmRates<float>(o, model.memoryBandwidth);
  model.flops[DType::F32] = f32.flopRate;
  model.flops[DType::F64] = gemmRates<double>(o, model.memoryBandwidth).flopRate;
  model.gemmBandwidth = f32.operandBandwidth;
  if (rank == 0)
    std::printf("gemm f32 %.1f GFLOP/s, f64 %.1f GFLOP/s per rank, operands moved at %.2f GB/s; "
                "memory %.2f GB/s per rank\n",
                model.flops[DType::F32] / 1e9, model.flops[DType::F64] / 1e9,
                model.gemmBandwidth / 1e9, model.memoryBandwidth / 1e9);
  AxisCost worst(0, 0);
  for (const auto &[name, c] : measureAxes(ctx, mesh, rank, o)) {
    model.axes[name] = c;
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
