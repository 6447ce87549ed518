// Errors, MPI checks, waiting, element types and mesh arithmetic: the small
// pieces every other file of the runtime uses.
#include "runtime/Context.h"

#include "support/BlockLayout.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace shardrt {

std::string format(const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  va_list copy;
  va_copy(copy, args);
  int length = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  std::string text(length > 0 ? static_cast<size_t>(length) : 0, '\0');
  std::vsnprintf(text.data(), text.size() + 1, fmt, args);
  va_end(args);
  return text;
}

std::string probeWritable(const std::string &probe, const char *flag, const std::string &shown) {
  int fd = open(probe.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0)
    return format("%s %s - cannot write there: %s", flag, shown.c_str(), std::strerror(errno));
  close(fd);
  unlink(probe.c_str());
  return "";
}

namespace {

void printError(const shardrt_context *ctx, const std::string &message) {
  // One write, so that lines of different ranks never interleave.
  std::string line =
      format("%s: rank %d: error: %s\n", ctx->programName.c_str(), ctx->rank, message.c_str());
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
}

} // namespace

void fail(shardrt_context *ctx, const std::string &message, int status) {
  printError(ctx, message);
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) {
    // mpiexec forwards a rank's stderr through a pipe to its proxy; MPI_Abort
    // kills the proxies at once, which can drop the message unread. Give
    // them a moment to pass it on (this path ends the job anyway).
    usleep(300 * 1000);
    MPI_Abort(MPI_COMM_WORLD, status);
  }
  std::exit(status);
}

void internalError(shardrt_context *ctx, const std::string &message) {
  fail(ctx, "internal error: " + message, kExitInternal);
}

void checkMpi(shardrt_context *ctx, int code, const char *call) {
  if (code == MPI_SUCCESS)
    return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    std::snprintf(text, sizeof text, "error code %d", code);
  fail(ctx, format("%s failed: %s", call, text));
}

int64_t dtypeSize(int64_t dtype) {
  switch (dtype) {
  case SHARDRT_F32:
  case SHARDRT_I32:
    return 4;
  case SHARDRT_F64:
  case SHARDRT_I64:
    return 8;
  case SHARDRT_I1:
    return 1;
  default:
    return 0;
  }
}

int64_t elementSize(shardrt_context *ctx, int64_t dtype) {
  int64_t size = dtypeSize(dtype);
  if (size == 0)
    internalError(ctx, format("unknown dtype code %lld", static_cast<long long>(dtype)));
  return size;
}

const char *dtypeName(int64_t dtype) {
  static const char *const names[] = {"f32", "f64", "i32", "i64", "i1"};
  return dtype >= 0 && dtype <= SHARDRT_I1 ? names[dtype] : "?";
}

MPI_Datatype mpiType(int64_t dtype) {
  switch (dtype) {
  case SHARDRT_F32:
    return MPI_FLOAT;
  case SHARDRT_F64:
    return MPI_DOUBLE;
  case SHARDRT_I32:
    return MPI_INT32_T;
  case SHARDRT_I64:
    return MPI_INT64_T;
  default:
    return MPI_UINT8_T;
  }
}

int64_t product(const int64_t *shape, int64_t begin, int64_t end) {
  int64_t p = 1;
  for (int64_t d = begin; d < end; ++d)
    p *= shape[d];
  return p;
}

int64_t meshDevices(const shardrt_mesh &mesh) { return product(mesh.axis_sizes, 0, mesh.num_axes); }

int64_t meshDeviceAt(const shardrt_mesh &mesh, int64_t position) {
  return mesh.device_ids ? mesh.device_ids[position] : position;
}

int64_t axisStride(const shardrt_mesh &mesh, const shardrt_axis_ref &axis) {
  return shardc::support::subAxisStride(mesh.axis_sizes[axis.axis], axis.pre_size, axis.size);
}

int64_t axisDigit(const shardrt_mesh &mesh, const shardrt_axis_ref &axis, int64_t coord) {
  return shardc::support::subAxisDigit(coord, mesh.axis_sizes[axis.axis], axis.pre_size, axis.size);
}

void waitAll(shardrt_context *ctx, int count, MPI_Request *requests, const char *call) {
  for (;;) {
    int done = 0;
    checkMpi(ctx, MPI_Testall(count, requests, &done, MPI_STATUSES_IGNORE), call);
    if (done)
      return;
    sched_yield();
  }
}

bool anyRankFailed(shardrt_context *ctx, const std::string &myError) {
  int mine = myError.empty() ? ctx->ranks : ctx->rank, first = ctx->ranks;
  MPI_Request request;
  checkMpi(ctx, MPI_Iallreduce(&mine, &first, 1, MPI_INT, MPI_MIN, ctx->world, &request),
           "MPI_Iallreduce");
  waitAll(ctx, 1, &request, "MPI_Iallreduce");
  if (first == ctx->rank)
    printError(ctx, myError);
  return first < ctx->ranks;
}

void exitAll(shardrt_context *ctx, int status) {
  std::fflush(stdout);
  releaseContext(ctx);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized)
    MPI_Finalize();
  std::exit(status);
}

} // namespace shardrt

using namespace shardrt;

extern "C" {

void shardrt_fail(shardrt_context *ctx, const char *message) { fail(ctx, message); }

int64_t shardrt_rank(const shardrt_context *ctx) { return ctx->rank; }

int64_t shardrt_mesh_position(const shardrt_context *ctx, int64_t mesh) {
  if (mesh < 0 || mesh >= static_cast<int64_t>(ctx->positions.size()))
    return -1;
  return ctx->positions[mesh];
}

int64_t shardrt_repeat_count(const shardrt_context *ctx) { return ctx->options.repeat; }

} // extern "C"
