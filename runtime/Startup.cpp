// shardrt_init and shardrt_finalize: MPI, the command line, the rank count,
// and where this rank sits on every mesh.
#include "runtime/CommandLine.h"
#include "runtime/Communicators.h"
#include "runtime/Outputs.h"
#include "runtime/SharedWindows.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace shardrt {
namespace {

/// MPI_MAX/MPI_MIN on floats return whichever operand the comparison picks,
/// so a NaN may vanish; these keep it (SPMD_CONTRACT.md: NaN wins).
template <typename T, bool isMax> void reduceKeepingNan(T *in, T *inout, int count) {
  for (int i = 0; i < count; ++i) {
    T a = in[i], b = inout[i];
    if (std::isnan(a) || std::isnan(b))
      inout[i] = NAN;
    else
      inout[i] = isMax ? (a > b ? a : b) : (a < b ? a : b);
  }
}

template <bool isMax> void floatReduction(void *in, void *inout, int *count, MPI_Datatype *type) {
  if (*type == MPI_DOUBLE)
    reduceKeepingNan<double, isMax>(static_cast<double *>(in), static_cast<double *>(inout),
                                    *count);
  else
    reduceKeepingNan<float, isMax>(static_cast<float *>(in), static_cast<float *>(inout), *count);
}

void placeOnMeshes(shardrt_context *ctx) {
  const shardrt_program &program = *ctx->program;
  for (int64_t m = 0; m < program.num_meshes; ++m) {
    const shardrt_mesh &mesh = program.meshes[m];
    int64_t position = positionOfRank(mesh, ctx->rank);
    ctx->positions.push_back(position);
    ctx->coords.push_back(position < 0 ? std::vector<int64_t>() : coordinatesOf(mesh, position));
  }
}

std::string wrongRankCountMessage(const shardrt_context *ctx) {
  long long devices = static_cast<long long>(ctx->program->num_devices);
  const char *name = ctx->programName.c_str();
  std::string message = format("this program runs on %lld devices, one MPI rank each, but it was "
                               "started on %d rank%s: run `mpirun -n %lld %s`",
                               devices, ctx->ranks, ctx->ranks == 1 ? "" : "s", devices, name);
  // A launcher of the other MPI starts every rank as an unrelated singleton:
  // the loader chose this library against the launcher (SHARDRT_MPI).
  const char *launcher = std::getenv("OMPI_COMM_WORLD_SIZE") ? "openmpi"
                         : std::getenv("PMI_SIZE")           ? "mpich"
                                                             : nullptr;
  if (ctx->ranks == 1 && launcher && std::strcmp(launcher, SHARDRT_MPI_NAME) != 0) {
    auto mpiName = [](const char *mpi) {
      return std::strcmp(mpi, "mpich") == 0 ? "MPICH" : "Open MPI";
    };
    const char *forced = std::getenv("SHARDRT_MPI");
    if (forced && *forced)
      message += format(" (this launcher is %s's but SHARDRT_MPI=%s loaded libshardrt-%s.so: "
                        "unset SHARDRT_MPI)",
                        mpiName(launcher), forced, SHARDRT_MPI_NAME);
    else
      message += format(" (this launcher is %s's but this run loaded libshardrt-%s.so: set "
                        "SHARDRT_MPI=%s)",
                        mpiName(launcher), SHARDRT_MPI_NAME, launcher);
  }
  return message;
}

/// Whether a launcher (mpiexec, mpirun, srun) started this process: each
/// sets its process-management variables for MPI_Init to find.
bool startedByLauncher() {
  for (const char *name : {"PMI_RANK", "PMI_FD", "PMI_PORT", "PMIX_RANK", "OMPI_COMM_WORLD_SIZE"})
    if (std::getenv(name))
      return true;
  return false;
}

/// --help, or the error of a command line that does not parse, on rank 0;
/// the caller then ends every rank with the status returned.
int answerCommandLine(shardrt_context *ctx, const ParsedCommandLine &parsed,
                      const std::vector<int64_t> *nodeOfRank) {
  const shardrt_program &program = *ctx->program;
  if (!parsed.error.empty()) {
    if (ctx->rank == 0)
      std::fprintf(stderr, "%s: error: %s\nrun '%s --help' for the options\n",
                   ctx->programName.c_str(), parsed.error.c_str(), ctx->programName.c_str());
    return kExitUsage;
  }
  std::string text = helpText(program, ctx->programName);
  // Under a launcher of the right size: where this launch puts the axes.
  if (nodeOfRank)
    text += "\nthis launch: " + nodesText(program, *nodeOfRank);
  else
    text += format("\nrun `mpirun -n %lld %s --help` to see which mesh axes cross node "
                   "boundaries in a launch\n",
                   static_cast<long long>(program.num_devices), ctx->programName.c_str());
  if (ctx->rank == 0)
    std::fputs(text.c_str(), stdout);
  return 0;
}

} // namespace

void releaseScratch(shardrt_context *ctx) {
  for (int slot = 0; slot < 2; ++slot) {
    shardrt_free(ctx->scratch[slot]);
    ctx->scratch[slot] = nullptr;
    ctx->scratchBytes[slot] = 0;
  }
}

void releaseContext(shardrt_context *ctx) {
  ctx->windows.reset();
  ctx->comms.reset();
  if (ctx->floatMax != MPI_OP_NULL)
    MPI_Op_free(&ctx->floatMax);
  if (ctx->floatMin != MPI_OP_NULL)
    MPI_Op_free(&ctx->floatMin);
  if (ctx->world != MPI_COMM_NULL)
    MPI_Comm_free(&ctx->world);
  releaseScratch(ctx);
  if (ctx->startedMpi) {
    ctx->startedMpi = false;
    MPI_Finalize();
  }
}

} // namespace shardrt

using namespace shardrt;

extern "C" {

shardrt_context *shardrt_init(const shardrt_program *program, int argc, char **argv) {
  auto *ctx = new shardrt_context;
  ctx->program = program;
  ctx->programName = argc > 0 && argv[0] ? argv[0] : "program";
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized && !startedByLauncher()) {
    // `./program --help` or a mistyped flag, run by hand: answered without
    // MPI, whose start as a singleton takes longer than the rest (80 ms here).
    ParsedCommandLine parsed = parseCommandLine(*program, argc, argv);
    if (parsed.help || !parsed.error.empty()) {
      validateProgram(ctx);
      std::vector<int64_t> oneNode{0};
      int status = answerCommandLine(ctx, parsed, program->num_devices == 1 ? &oneNode : nullptr);
      std::fflush(stdout);
      std::exit(status);
    }
  }
  if (!initialized) {
    if (MPI_Init(nullptr, nullptr) != MPI_SUCCESS) {
      std::fprintf(stderr, "%s: error: MPI_Init failed\n", ctx->programName.c_str());
      std::exit(kExitBadData);
    }
    ctx->startedMpi = true;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &ctx->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ctx->ranks);
  installSignalHandlers(ctx);
  validateProgram(ctx);

  // Every rank parses the same argv and reaches the same verdict.
  ParsedCommandLine parsed = parseCommandLine(*program, argc, argv);
  if (!parsed.error.empty() || parsed.help) {
    std::vector<int64_t> nodes;
    if (parsed.error.empty() && ctx->ranks == program->num_devices)
      nodes = nodeOfEveryRank(ctx, MPI_COMM_WORLD);
    exitAll(ctx, answerCommandLine(ctx, parsed, nodes.empty() ? nullptr : &nodes));
  }
  ctx->options = parsed.options;
  if (ctx->ranks != program->num_devices) {
    if (ctx->rank == 0)
      std::fprintf(stderr, "%s: error: %s\n", ctx->programName.c_str(),
                   wrongRankCountMessage(ctx).c_str());
    exitAll(ctx, kExitBadData);
  }

  // MPI_Comm_dup would block, and a blocked MPICH rank busy-polls the core
  // that a rank still starting up needs (8 ranks on 2 cores).
  MPI_Request duplicated;
  checkMpi(ctx, MPI_Comm_idup(MPI_COMM_WORLD, &ctx->world, &duplicated), "MPI_Comm_idup");
  waitAll(ctx, 1, &duplicated, "MPI_Comm_idup");
  placeOnMeshes(ctx);
  ctx->comms = std::make_unique<Communicators>(ctx);
  ctx->windows = std::make_unique<SharedWindows>(ctx);
  checkMpi(ctx, MPI_Op_create(floatReduction<true>, 1, &ctx->floatMax), "MPI_Op_create");
  checkMpi(ctx, MPI_Op_create(floatReduction<false>, 1, &ctx->floatMin), "MPI_Op_create");
  ctx->opStats.resize(static_cast<size_t>(program->num_ops));
  if (ctx->options.profile)
    ctx->nodeOfRank = nodeOfEveryRank(ctx, ctx->world);
  if (!ctx->options.outputDir.empty())
    checkOutputDir(ctx);
  if (!ctx->options.tracePath.empty())
    checkTracePath(ctx);
  for (int64_t g = 0; g < program->num_groups; ++g)
    ctx->comms->get(program->groups[g]);
  return ctx;
}

void shardrt_finalize(shardrt_context *ctx) {
  releaseContext(ctx);
  delete ctx;
}

} // extern "C"
