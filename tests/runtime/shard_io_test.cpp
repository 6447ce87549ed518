// The .npy shard reader and writer, under mpiexec -n 1, 2, 4 and 8:
//   1. every rank fills its blocks of a set of outputs (padding, sub-axes,
//      non-major dims, scalars, i1, empty and maximal meshes, empty shards)
//      and shardrt_write_outputs writes them; rank 0 reads the files back
//      with its own reader and checks every element and header;
//   2. a second program reads the files as inputs under other shardings and
//      every rank checks its block, padding zero;
//   3. --random-inputs gives the same values whatever the sharding.
// Usage: mpiexec -n N shard_io_test DIR
#include "TestLayout.h"
#include "TestProgram.h"
#include "TestTensors.h"

#include <dirent.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <sstream>

using namespace shardrt_test;

namespace {

/// The value of global element g of tensor t: distinct per tensor and element.
double globalValue(int64_t t, int64_t dtype, int64_t g) {
  if (dtype == SHARDRT_I1)
    return (g * 7 + t) % 3 == 0;
  return 1000.0 * static_cast<double>(t) + static_cast<double>(g) +
         (dtype == SHARDRT_F32 || dtype == SHARDRT_F64 ? 0.5 : 0.0);
}

/// A .npy file read without the runtime: descr, shape and data bytes.
struct NpyFile {
  std::string descr, error;
  std::vector<int64_t> shape;
  Buffer data;
};

NpyFile readNpyFile(const std::string &path) {
  NpyFile file;
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < 10 || bytes.compare(0, 8, std::string("\x93NUMPY\x01\x00", 8)) != 0) {
    file.error = "bad magic or version";
    return file;
  }
  size_t length = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
  std::string header = bytes.substr(10, length);
  if ((10 + length) % 64 != 0 || header.back() != '\n')
    file.error = "header not padded to 64 bytes";
  size_t d = header.find("'descr': '"), s = header.find("'shape': (");
  if (d == std::string::npos || s == std::string::npos ||
      header.find("'fortran_order': False") == std::string::npos) {
    file.error = "header: " + header;
    return file;
  }
  file.descr = header.substr(d + 10, header.find('\'', d + 10) - d - 10);
  std::istringstream shape(header.substr(s + 10, header.find(')', s) - s - 10));
  std::string item;
  while (std::getline(shape, item, ','))
    if (item.find_first_not_of(' ') != std::string::npos)
      file.shape.push_back(std::stoll(item));
  file.data.assign(bytes.begin() + 10 + length, bytes.end());
  return file;
}

/// The tensors of the test, for a program on `ranks` devices: mesh 0 has
/// axes x (and y), mesh 1 is empty, mesh 2 is the last rank's maximal mesh.
/// `alternative` gives each the other sharding used for reading back.
std::vector<Tensor> tensors(int ranks, bool alternative) {
  shardrt_axis_ref x = full(0, ranks == 1 ? 1 : 2);
  shardrt_axis_ref y = ranks >= 4 ? full(1, ranks / 2) : x;
  shardrt_axis_ref yLow = ranks == 8 ? sub(1, 2, 2) : y;
  using Dims = std::vector<std::vector<shardrt_axis_ref>>;
  std::vector<shardrt_axis_ref> onlyY; // {y} where the mesh has a second axis
  if (ranks >= 4)
    onlyY.push_back(y);
  std::vector<Tensor> list = {
      {"", SHARDRT_F32, {7, 5}, 0, alternative ? Dims{{}, {y}} : Dims{{x}, {}}},
      {"", SHARDRT_F64, {5, 6, 3}, 0, alternative ? Dims{{x}} : Dims{{}, onlyY, {x}}},
      {"",
       SHARDRT_I32,
       {9},
       0,
       alternative  ? Dims{{}}
       : ranks >= 4 ? Dims{{yLow, x}}
                    : Dims{{x}}},
      {"", SHARDRT_I64, {}, 0, {}},
      {"", SHARDRT_I1, {3, 4}, 0, alternative ? Dims{{x}, {}} : Dims{{}, {yLow}}},
      {"", SHARDRT_F32, {4, 3}, 1, {}},
      {"", SHARDRT_I32, {6}, 2, {}},
      {"", SHARDRT_F32, {0, 3}, 0, alternative ? Dims{} : Dims{{x}}},
      {"", SHARDRT_F64, {3}, 0, ranks >= 4 ? Dims{{x, y}} : Dims{{x}}},
  };
  for (size_t i = 0; i < list.size(); ++i)
    list[i].name = alternative ? "in" + std::to_string(i) : "";
  return list;
}

void addMeshes(Program &program, int ranks) {
  std::vector<int64_t> reversed;
  for (int64_t d = ranks - 1; d >= 0; --d)
    reversed.push_back(d);
  if (ranks >= 4)
    program.addMesh("mesh", {{"x", 2}, {"y", ranks / 2}}, reversed);
  else
    program.addMesh("mesh", {{"x", ranks}}, reversed);
  program.addMesh("empty", {});
  program.addMesh("on_last", {}, {ranks - 1});
}

std::vector<char *> arguments(std::vector<std::string> &words) {
  std::vector<char *> argv;
  for (std::string &w : words)
    argv.push_back(w.data());
  argv.push_back(nullptr);
  return argv;
}

/// Step 1: write, then rank 0 checks the files.
void writeAndCheck(const std::string &dir, int rank, int ranks, Checker &checker) {
  Program program(ranks);
  addMeshes(program, ranks);
  std::vector<Tensor> list = tensors(ranks, false);
  for (const Tensor &t : list)
    program.addOutput(t);
  std::vector<std::string> words = {"shard_io_test", "--output-dir", dir};
  std::vector<char *> argv = arguments(words);
  shardrt_context *ctx = shardrt_init(program.get(), static_cast<int>(words.size()), argv.data());
  std::vector<void *> buffers;
  for (size_t i = 0; i < list.size(); ++i) {
    const shardrt_tensor &t = program.get()->outputs[i];
    TestBlock block = testBlock(*program.get(), t, rank);
    checker.check(shardrt_local_elements(ctx, &t) == elementCount(block.local), "local size");
    LocalTensor local = zeros(block.local, t.dtype);
    std::vector<int64_t> globals = globalIndices(t, block);
    // Padding, and the copies no one should write, hold values that would show.
    for (size_t l = 0; l < globals.size(); ++l)
      local.values[l] = globals[l] < 0 || !block.canonical ? (t.dtype == SHARDRT_I1 ? 0 : -7.0)
                                                           : globalValue(i, t.dtype, globals[l]);
    Buffer bytes = encode(local, t.dtype);
    buffers.push_back(shardrt_alloc_output(ctx, static_cast<int64_t>(i)));
    if (!bytes.empty())
      std::memcpy(buffers.back(), bytes.data(), bytes.size());
  }
  shardrt_write_outputs(ctx, buffers.data());
  for (void *b : buffers)
    shardrt_free(b);
  shardrt_finalize(ctx);
  if (rank != 0)
    return;
  const char *descrs[] = {"<f4", "<f8", "<i4", "<i8", "|b1"};
  for (size_t i = 0; i < list.size(); ++i) {
    std::string path = dir + "/result" + std::to_string(i) + ".npy";
    NpyFile file = readNpyFile(path);
    const Tensor &t = list[i];
    if (!checker.check(file.error.empty() && file.descr == descrs[t.dtype] && file.shape == t.shape,
                       path + ": header " + file.error))
      continue;
    LocalTensor expected = zeros(t.shape, t.dtype);
    for (size_t g = 0; g < expected.values.size(); ++g)
      expected.values[g] = globalValue(i, t.dtype, static_cast<int64_t>(g));
    checker.check(file.data.size() == expected.values.size() * elementBytes(t.dtype),
                  path + ": data length");
    if (file.data.size() == expected.values.size() * elementBytes(t.dtype))
      expectEqual(checker, decode(file.data, t.shape, t.dtype), expected, path + ": values");
  }
  DIR *listing = opendir(dir.c_str());
  for (dirent *entry; listing && (entry = readdir(listing));)
    checker.check(std::string(entry->d_name).find(".tmp") == std::string::npos,
                  std::string("no temporary file left: ") + entry->d_name);
  if (listing)
    closedir(listing);
}

/// Step 2: read the files back under other shardings.
void readBack(const std::string &dir, int rank, int ranks, Checker &checker) {
  Program program(ranks);
  addMeshes(program, ranks);
  std::vector<Tensor> list = tensors(ranks, true);
  std::vector<std::string> words = {"shard_io_test"};
  for (size_t i = 0; i < list.size(); ++i) {
    program.addInput(list[i]);
    words.push_back("--input");
    words.push_back(list[i].name + "=" + dir + "/result" + std::to_string(i) + ".npy");
  }
  std::vector<char *> argv = arguments(words);
  shardrt_context *ctx = shardrt_init(program.get(), static_cast<int>(words.size()), argv.data());
  for (size_t i = 0; i < list.size(); ++i) {
    const shardrt_tensor &t = program.get()->inputs[i];
    TestBlock block = testBlock(*program.get(), t, rank);
    std::vector<int64_t> globals = globalIndices(t, block);
    LocalTensor expected = zeros(block.local, t.dtype);
    for (size_t l = 0; l < globals.size(); ++l)
      expected.values[l] = globals[l] < 0 ? 0 : globalValue(i, t.dtype, globals[l]);
    void *buffer = shardrt_read_input(ctx, static_cast<int64_t>(i));
    expectEqual(checker, decode(buffer, block.local, t.dtype), expected,
                "read back " + list[i].name);
    shardrt_free(buffer);
  }
  shardrt_finalize(ctx);
}

/// Step 3: --random-inputs, under two shardings, written out: same file.
void randomInputs(const std::string &dir, int rank, int ranks, Checker &checker) {
  for (int variant = 0; variant < 2; ++variant) {
    Program program(ranks);
    addMeshes(program, ranks);
    Tensor t = tensors(ranks, variant == 1)[1]; // f64 5x6x3
    t.name = "r";
    program.addInput(t);
    program.addOutput(t);
    std::vector<std::string> words = {"shard_io_test", "--random-inputs", "0", "--output-dir",
                                      dir + "/random" + std::to_string(variant)};
    std::vector<char *> argv = arguments(words);
    shardrt_context *ctx = shardrt_init(program.get(), static_cast<int>(words.size()), argv.data());
    const void *buffer = shardrt_read_input(ctx, 0);
    shardrt_write_outputs(ctx, &buffer);
    shardrt_free(const_cast<void *>(buffer));
    shardrt_finalize(ctx);
  }
  if (rank != 0)
    return;
  NpyFile a = readNpyFile(dir + "/random0/result0.npy"),
          b = readNpyFile(dir + "/random1/result0.npy");
  checker.check(a.error.empty() && a.data == b.data && !a.data.empty(),
                "random inputs do not depend on the sharding");
  LocalTensor values = decode(a.data, {5, 6, 3}, SHARDRT_F64);
  bool inRange = true, varied = false;
  for (double v : values.values) {
    inRange = inRange && v >= -1 && v < 1;
    varied = varied || v != values.values[0];
  }
  checker.check(inRange && varied, "random inputs are varied values in [-1, 1)");
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (argc != 2 || (ranks != 1 && ranks != 2 && ranks != 4 && ranks != 8)) {
    if (rank == 0)
      std::fprintf(stderr, "usage: mpiexec -n 1|2|4|8 shard_io_test DIR\n");
    MPI_Finalize();
    return 2;
  }
  std::string dir = argv[1];
  Checker checker(rank);
  writeAndCheck(dir, rank, ranks, checker);
  MPI_Barrier(MPI_COMM_WORLD);
  readBack(dir, rank, ranks, checker);
  randomInputs(dir, rank, ranks, checker);
  int status = checker.finish("shard_io_test");
  MPI_Finalize();
  return status;
}
