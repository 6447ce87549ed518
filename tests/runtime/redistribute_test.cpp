// shardrt_redistribute under mpiexec -n 1/2/4/8: every ordered pair of
// layouts of the same tensor -- meshes with permuted device ids, sub-axes,
// non-divisible dims (padding), replicated dims, the empty mesh (every
// device holds all), maximal meshes of one device -- moves every element to
// every rank that holds it under the target layout, with zeroed padding. The
// expected blocks come from TestLayout.h (the contract worked out here, not
// the runtime's own layout code); the source's padding holds a sentinel that
// must never arrive anywhere.
#include "TestLayout.h"
#include "TestProgram.h"
#include "TestTensors.h"

#include <cstdio>
#include <string>

using namespace shardrt_test;

namespace {

/// Global element g's value: distinct per element (and 0/1 for i1).
double valueAt(int64_t dtype, int64_t g) {
  return dtype == SHARDRT_I1 ? static_cast<double>((g * 7 + 1) % 3 == 0)
                             : 3.0 * g + 1.5 * (dtype < 2);
}

struct Layouts {
  int64_t dtype;
  std::vector<int64_t> shape;
  std::vector<std::pair<int64_t, std::vector<std::vector<shardrt_axis_ref>>>> layouts; // mesh, dims
};

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (ranks != 1 && ranks != 2 && ranks != 4 && ranks != 8) {
    if (rank == 0)
      std::fprintf(stderr, "usage: mpiexec -n 1|2|4|8 redistribute_test\n");
    MPI_Finalize();
    return 2;
  }
  Program program(ranks);
  // Mesh 0: x by y, device ids reversed. Mesh 1: p by q, ids interleaved.
  // Mesh 2: empty. Meshes 3 and 4: the first and the last device alone.
  std::vector<int64_t> reversed, interleaved;
  for (int64_t d = ranks - 1; d >= 0; --d)
    reversed.push_back(d);
  for (int64_t i = 0; i < ranks; ++i)
    interleaved.push_back(ranks >= 4 ? (i % 2) * (ranks / 2) + i / 2 : i);
  int64_t x = ranks >= 4 ? 2 : ranks, y = ranks >= 4 ? ranks / 2 : 1;
  program.addMesh("a", {{"x", x}, {"y", y}}, reversed);
  program.addMesh("b", {{"p", ranks >= 4 ? ranks / 2 : ranks}, {"q", ranks >= 4 ? 2 : 1}},
                  interleaved);
  program.addMesh("every", {});
  program.addMesh("first", {}, {0});
  program.addMesh("last", {}, {ranks - 1});
  shardrt_axis_ref ax = full(0, x), ay = full(1, y);
  shardrt_axis_ref bp = full(0, ranks >= 4 ? ranks / 2 : ranks), bq = full(1, ranks >= 4 ? 2 : 1);
  // A sub-axis of p where it is big enough to split: "p":(2)2 of p=4.
  shardrt_axis_ref bpLow = ranks == 8 ? sub(0, 2, 2) : bp;
  using Dims = std::vector<std::vector<shardrt_axis_ref>>;
  const std::vector<Layouts> cases = {
      {SHARDRT_F32,
       {7, 5},
       {{0, Dims{{ax}, {ay}}},
        {0, Dims{{ay, ax}, {}}},
        {1, Dims{{bq}, {bp}}},
        {1, Dims{{}, {bpLow}}},
        {2, Dims{}},
        {3, Dims{}},
        {4, Dims{}}}},
      {SHARDRT_F64, {3, 2, 5}, {{0, Dims{{}, {ax}, {ay}}}, {1, Dims{{bp, bq}}}, {4, Dims{}}}},
      {SHARDRT_I32, {9}, {{0, Dims{{ax, ay}}}, {1, Dims{{bpLow}}}, {2, Dims{}}, {3, Dims{}}}},
      {SHARDRT_I64, {}, {{0, Dims{}}, {1, Dims{}}, {3, Dims{}}}},
      {SHARDRT_I1, {3, 4}, {{0, Dims{{}, {ay}}}, {1, Dims{{bq}, {bp}}}, {2, Dims{}}}},
      {SHARDRT_F32, {0, 3}, {{0, Dims{{ax}}}, {1, Dims{{}, {bq}}}}},
  };
  std::vector<std::pair<size_t, size_t>> pairs; // indices into outputs, same tensor type
  size_t next = 0;
  for (const Layouts &c : cases) {
    size_t first = next;
    for (const auto &[mesh, dims] : c.layouts) {
      program.addOutput(Tensor{"", c.dtype, c.shape, mesh, dims});
      ++next;
    }
    for (size_t i = first; i < next; ++i)
      for (size_t j = first; j < next; ++j)
        pairs.emplace_back(i, j);
  }
  const shardrt_program *described = program.get();
  char name[] = "redistribute_test";
  char *args[] = {name, nullptr};
  shardrt_context *ctx = shardrt_init(described, 1, args);
  Checker checker(rank);
  for (const auto &[i, j] : pairs) {
    const shardrt_tensor &from = described->outputs[i], &to = described->outputs[j];
    TestBlock source = testBlock(*described, from, rank), target = testBlock(*described, to, rank);
    LocalTensor in = zeros(source.local, from.dtype);
    std::vector<int64_t> globals = globalIndices(from, source);
    const double sentinel = from.dtype == SHARDRT_I1 ? 1 : -7;
    for (size_t l = 0; l < globals.size(); ++l)
      in.values[l] = globals[l] < 0 ? sentinel : valueAt(from.dtype, globals[l]);
    Buffer inBytes = encode(in, from.dtype);
    Buffer outBytes(static_cast<size_t>(elementCount(target.local) * elementBytes(to.dtype)) + 1,
                    0xAB);
    shardrt_redistribute(ctx, -1, &from, &to, inBytes.data(), outBytes.data());
    if (!target.holds)
      continue;
    LocalTensor want = zeros(target.local, to.dtype);
    std::vector<int64_t> wanted = globalIndices(to, target);
    for (size_t l = 0; l < wanted.size(); ++l)
      want.values[l] = wanted[l] < 0 ? 0 : valueAt(to.dtype, wanted[l]);
    std::string what = "layout " + std::to_string(i) + " -> " + std::to_string(j);
    expectEqual(checker, decode(outBytes, target.local, to.dtype), want, what);
    checker.check(outBytes.back() == 0xAB, what + ": wrote past the local shard");
  }
  int status = checker.finish("redistribute_test");
  shardrt_finalize(ctx); // MPI was started here, so it is finalized here
  MPI_Finalize();
  return status;
}
