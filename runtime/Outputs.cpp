// Writing outputs as .npy files. No partial file is ever visible under its
// final name:
//   1. rank 0 creates DIR/resultN.npy.tmp with the header and the full length;
//   2. every rank that writes a block (one per set of replicas, Layout.h)
//      fills its runs with positioned writes (pwrite);
//   3. after all ranks agree that every write succeeded, rank 0 renames the
//      files into place. A failure at any step removes the temporaries.
#include "runtime/Outputs.h"
#include "runtime/Npy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace shardrt {
namespace {

std::string resultPath(const shardrt_context *ctx, int64_t index) {
  return format("%s/result%lld.npy", ctx->options.outputDir.c_str(), static_cast<long long>(index));
}

/// Writes `bytes` bytes at `offset`; "" or the error.
std::string writeAt(int fd, const char *data, int64_t bytes, int64_t offset) {
  while (bytes > 0) {
    ssize_t put = pwrite(fd, data, static_cast<size_t>(bytes), offset);
    if (put < 0 && errno == EINTR)
      continue;
    if (put < 0)
      return format("write failed: %s", std::strerror(errno));
    data += put, offset += put, bytes -= put;
  }
  return "";
}

/// Step 1 (rank 0): a temporary file with the header, at its full length.
std::string createFile(const std::string &path, const shardrt_tensor &t) {
  int fd = open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0)
    return format("cannot create: %s", std::strerror(errno));
  std::string header = npyHeader(t);
  int64_t length =
      static_cast<int64_t>(header.size()) + product(t.shape, 0, t.ndims) * dtypeSize(t.dtype);
  std::string error = writeAt(fd, header.data(), static_cast<int64_t>(header.size()), 0);
  if (error.empty() && ftruncate(fd, length) != 0)
    error = format("cannot extend to %lld bytes: %s", static_cast<long long>(length),
                   std::strerror(errno));
  if (close(fd) != 0 && error.empty())
    error = format("close failed: %s", std::strerror(errno));
  return error;
}

/// Step 2: this rank's block, when it is the block's writer.
std::string writeBlock(shardrt_context *ctx, const std::string &path, const shardrt_tensor &t,
                       const void *buffer) {
  Block block = blockOf(ctx, t);
  if (!block.writes)
    return "";
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return format("cannot open: %s", std::strerror(errno));
  int64_t size = dtypeSize(t.dtype), dataOffset = static_cast<int64_t>(npyHeader(t).size());
  std::string error;
  forEachRun(block, [&](int64_t globalOffset, int64_t localOffset, int64_t count) {
    if (error.empty())
      error = writeAt(fd, static_cast<const char *>(buffer) + localOffset * size, count * size,
                      dataOffset + globalOffset * size);
  });
  if (close(fd) != 0 && error.empty())
    error = format("close failed: %s", std::strerror(errno));
  return error;
}

/// Ends the run after a failed step: rank 0 removes every file it made.
[[noreturn]] void abandon(shardrt_context *ctx, const std::vector<std::string> &paths) {
  if (ctx->rank == 0)
    for (const std::string &path : paths)
      unlink(path.c_str());
  exitAll(ctx, kExitBadData);
}

} // namespace

void checkOutputDir(shardrt_context *ctx) {
  const std::string &dir = ctx->options.outputDir;
  std::string error;
  struct stat info;
  if (ctx->rank != 0) {
  } else if (stat(dir.c_str(), &info) != 0) {
    if (errno != ENOENT || mkdir(dir.c_str(), 0777) != 0)
      error = format("--output-dir %s - cannot create the directory: %s", dir.c_str(),
                     std::strerror(errno));
  } else if (!S_ISDIR(info.st_mode)) {
    error = format("--output-dir %s - not a directory", dir.c_str());
  }
  if (ctx->rank == 0 && error.empty())
    error = probeWritable(format("%s/.shardrt-probe-%d", dir.c_str(), static_cast<int>(getpid())),
                          "--output-dir", dir);
  if (anyRankFailed(ctx, error))
    exitAll(ctx, kExitBadData);
}

} // namespace shardrt

using namespace shardrt;

extern "C" {

void *shardrt_alloc_output(shardrt_context *ctx, int64_t index) {
  if (index < 0 || index >= ctx->program->num_outputs)
    internalError(ctx, format("no output %lld", static_cast<long long>(index)));
  const shardrt_tensor &t = ctx->program->outputs[index];
  int64_t bytes = blockOf(ctx, t).localElements() * elementSize(ctx, t.dtype);
  void *buffer = shardrt_alloc(ctx, bytes);
  std::memset(buffer, 0, static_cast<size_t>(bytes));
  return buffer;
}

void shardrt_write_outputs(shardrt_context *ctx, const void *const *outputs) {
  if (ctx->options.outputDir.empty()) {
    printOutputSummary(ctx, outputs);
    return;
  }
  const shardrt_program &program = *ctx->program;
  std::vector<std::string> finals, temps;
  for (int64_t i = 0; i < program.num_outputs; ++i) {
    finals.push_back(resultPath(ctx, i));
    temps.push_back(finals.back() + ".tmp");
  }
  std::string error;
  for (int64_t i = 0; ctx->rank == 0 && error.empty() && i < program.num_outputs; ++i) {
    error = createFile(temps[i], program.outputs[i]);
    if (!error.empty())
      error = format("output result%lld - %s: %s", static_cast<long long>(i), temps[i].c_str(),
                     error.c_str());
  }
  if (anyRankFailed(ctx, error))
    abandon(ctx, temps);
  for (int64_t i = 0; error.empty() && i < program.num_outputs; ++i) {
    error = writeBlock(ctx, temps[i], program.outputs[i], outputs[i]);
    if (!error.empty())
      error = format("output result%lld - %s: %s", static_cast<long long>(i), temps[i].c_str(),
                     error.c_str());
  }
  if (anyRankFailed(ctx, error))
    abandon(ctx, temps);
  std::vector<std::string> made = temps;
  for (int64_t i = 0; ctx->rank == 0 && error.empty() && i < program.num_outputs; ++i) {
    if (std::rename(temps[i].c_str(), finals[i].c_str()) != 0)
      error = format("output result%lld - cannot rename %s to %s: %s", static_cast<long long>(i),
                     temps[i].c_str(), finals[i].c_str(), std::strerror(errno));
    else
      made.push_back(finals[i]);
  }
  if (anyRankFailed(ctx, error))
    abandon(ctx, made);
}

} // extern "C"
