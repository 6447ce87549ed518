// Inputs: each rank reads only its own block of each .npy file, with
// positioned reads (pread) of the block's contiguous runs, the padding left
// zero (a file in Fortran order is read whole, then picked from). With
// --random-inputs SEED an input without --input gets the values of shardc's
// interpreter (interp::randomTensor(type, SEED, index)), each rank computing
// only its block's elements from their global indices with the same
// generator (support/Random.h).
#include "runtime/Layout.h"
#include "runtime/Npy.h"
#include "support/Random.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace shardrt {
namespace {

/// interp::randomTensor(type, seed, input index): floats uniform in
/// [-1, 1), integers in [-8, 8), i1 0 or 1.
void fillRandom(const shardrt_tensor &t, uint64_t seed, int64_t inputIndex, const Block &block,
                char *buffer) {
  uint64_t key = shardc::support::randomArgumentKey(seed, static_cast<uint64_t>(inputIndex));
  forEachRun(block, [&](int64_t globalOffset, int64_t localOffset, int64_t count) {
    for (int64_t i = 0; i < count; ++i) {
      uint64_t bits = shardc::support::randomBits(key, static_cast<uint64_t>(globalOffset + i));
      double unit = shardc::support::randomArgumentFloat(bits);
      int64_t small = shardc::support::randomArgumentInt(bits);
      int64_t at = localOffset + i;
      switch (t.dtype) {
      case SHARDRT_F32:
        reinterpret_cast<float *>(buffer)[at] = static_cast<float>(unit);
        break;
      case SHARDRT_F64:
        reinterpret_cast<double *>(buffer)[at] = unit;
        break;
      case SHARDRT_I32:
        reinterpret_cast<int32_t *>(buffer)[at] = static_cast<int32_t>(small);
        break;
      case SHARDRT_I64:
        reinterpret_cast<int64_t *>(buffer)[at] = small;
        break;
      default:
        buffer[at] = static_cast<char>(shardc::support::randomArgumentBool(bits));
      }
    }
  });
}

/// This rank's block of a file in Fortran order (numpy writes one for an
/// F-contiguous array, such as a transposed one: the first index varies
/// fastest). Rare and small in practice, so the whole array is read and the
/// block's elements picked from it; `readAt(out, offset, bytes)` reads the
/// data at `offset` bytes.
template <typename ReadAt>
void readFortranBlock(const shardrt_tensor &t, const Block &block, int64_t size, char *buffer,
                      ReadAt &&readAt) {
  int64_t elements = product(t.shape, 0, t.ndims);
  std::vector<char> all(static_cast<size_t>(elements * size));
  readAt(all.data(), 0, elements * size);
  std::vector<int64_t> fortranStrides(static_cast<size_t>(t.ndims), 1);
  for (int64_t d = 1; d < t.ndims; ++d)
    fortranStrides[d] = fortranStrides[d - 1] * t.shape[d - 1];
  forEachRun(block, [&](int64_t globalOffset, int64_t localOffset, int64_t count) {
    for (int64_t i = 0; i < count; ++i) {
      int64_t rowMajor = globalOffset + i, at = 0; // its Fortran-order position
      for (int64_t d = t.ndims - 1; d >= 0; --d) {
        at += rowMajor % t.shape[d] * fortranStrides[d];
        rowMajor /= t.shape[d];
      }
      std::memcpy(buffer + (localOffset + i) * size, all.data() + at * size,
                  static_cast<size_t>(size));
    }
  });
}

/// Reads this rank's block of `path`; returns "" or what went wrong.
std::string readBlock(const std::string &path, const shardrt_tensor &t, const Block &block,
                      char *buffer) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return format("cannot open: %s", std::strerror(errno));
  struct stat info;
  std::string error;
  if (fstat(fd, &info) != 0)
    error = format("cannot stat: %s", std::strerror(errno));
  else if (!S_ISREG(info.st_mode))
    error = "not a regular file";
  bool fortranOrder = false;
  int64_t dataOffset = error.empty() ? readNpyHeader(fd, info.st_size, t, error, fortranOrder) : -1;
  int64_t size = dtypeSize(t.dtype);
  auto readAt = [&](char *out, int64_t offset, int64_t bytes) {
    while (bytes > 0 && error.empty()) {
      ssize_t got = pread(fd, out, static_cast<size_t>(bytes), offset);
      if (got < 0 && errno == EINTR)
        continue;
      if (got <= 0)
        error = got < 0 ? format("read failed: %s", std::strerror(errno))
                        : std::string("file shrank while being read");
      else
        out += got, offset += got, bytes -= got;
    }
  };
  if (error.empty() && !fortranOrder)
    forEachRun(block, [&](int64_t globalOffset, int64_t localOffset, int64_t count) {
      readAt(buffer + localOffset * size, dataOffset + globalOffset * size, count * size);
    });
  else if (error.empty())
    readFortranBlock(t, block, size, buffer, [&](char *out, int64_t offset, int64_t bytes) {
      readAt(out, dataOffset + offset, bytes);
    });
  close(fd);
  if (error.empty() && t.dtype == SHARDRT_I1) // NumPy bools are 0/1; be sure
    for (int64_t i = 0; i < block.localElements(); ++i)
      buffer[i] = buffer[i] != 0;
  return error;
}

} // namespace
} // namespace shardrt

using namespace shardrt;

extern "C" void *shardrt_read_input(shardrt_context *ctx, int64_t index) {
  const shardrt_program &program = *ctx->program;
  if (index < 0 || index >= program.num_inputs)
    internalError(ctx, format("no input %lld", static_cast<long long>(index)));
  const shardrt_tensor &t = program.inputs[index];
  Block block = blockOf(ctx, t);
  int64_t bytes = block.localElements() * elementSize(ctx, t.dtype);
  auto *buffer = static_cast<char *>(shardrt_alloc(ctx, bytes));
  std::memset(buffer, 0, static_cast<size_t>(bytes));
  const std::string &path = ctx->options.inputFiles[index];
  std::string error;
  if (path.empty())
    fillRandom(t, ctx->options.randomSeed, index, block, buffer);
  else if (block.holds) {
    error = readBlock(path, t, block, buffer);
    if (!error.empty())
      error = format("input \"%s\" - %s: %s", t.name, path.c_str(), error.c_str());
  }
  if (anyRankFailed(ctx, error)) {
    shardrt_free(buffer);
    exitAll(ctx, kExitBadData);
  }
  return buffer;
}
