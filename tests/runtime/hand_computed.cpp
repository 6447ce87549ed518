// Collective results worked out by hand from the contract, for the meshes of
// collectives_test.cpp: permuted device_ids on 4 ranks, sub-axes on 8; and
// the numerics the contract fixes (NaN wins max/min, integer sums wrap).
#include "TestProgram.h"
#include "TestTensors.h"

#include <climits>

using namespace shardrt_test;

namespace {

/// Each rank's 1-D operand [10 p, 10 p + 1], p = its position on mesh 0.
std::vector<float> pairOf(shardrt_context *ctx) {
  float p = static_cast<float>(shardrt_mesh_position(ctx, 0));
  return {10 * p, 10 * p + 1};
}

void expectFloats(Checker &checker, const std::vector<float> &got, const std::vector<float> &want,
                  const std::string &what) {
  checker.check(got == want, what);
}

/// Mesh 0 is <["x"=2, "y"=2], device_ids=[3, 1, 2, 0]>: rank 3 is position
/// 0 (x=0, y=0), rank 1 position 1 (0, 1), rank 2 position 2 (1, 0), rank 0
/// position 3 (1, 1).
void fourRanks(shardrt_context *ctx, int rank, Checker &checker) {
  shardrt_axis_ref x = full(0, 2), y = full(1, 2), yx[] = {y, x};
  shardrt_group overX{0, 1, &x}, overY{0, 1, &y}, overYX{0, 2, yx};
  const int64_t two[] = {2};
  std::vector<float> in = pairOf(ctx), out(4), scattered(1);
  // all_gather over y: the group shares x.
  const std::vector<float> byY[] = {
      {20, 21, 30, 31}, {0, 1, 10, 11}, {20, 21, 30, 31}, {0, 1, 10, 11}};
  shardrt_all_gather(ctx, -1, &overY, SHARDRT_F32, 1, two, 0, in.data(), out.data());
  expectFloats(checker, out, byY[rank], "hand: all_gather over y");
  // all_gather over x: the group shares y.
  const std::vector<float> byX[] = {
      {10, 11, 30, 31}, {10, 11, 30, 31}, {0, 1, 20, 21}, {0, 1, 20, 21}};
  shardrt_all_gather(ctx, -1, &overX, SHARDRT_F32, 1, two, 0, in.data(), out.data());
  expectFloats(checker, out, byX[rank], "hand: all_gather over x");
  // all_gather over {y, x}: index y*2 + x -> positions 0, 2, 1, 3.
  out.resize(8);
  shardrt_all_gather(ctx, -1, &overYX, SHARDRT_F32, 1, two, 0, in.data(), out.data());
  expectFloats(checker, out, {0, 1, 20, 21, 10, 11, 30, 31}, "hand: all_gather over {y, x}");
  // reduce_scatter over x: {p0, p2} sum to [20, 22], {p1, p3} to [40, 42].
  const float sums[] = {42, 40, 22, 20};
  shardrt_reduce_scatter(ctx, -1, &overX, SHARDRT_F32, 1, two, 0, in.data(), scattered.data());
  expectFloats(checker, scattered, {sums[rank]}, "hand: reduce_scatter over x");
  // axis_index.
  const int32_t xs[] = {1, 0, 1, 0}, ys[] = {1, 1, 0, 0};
  checker.check(shardrt_axis_index(ctx, 0, &x) == xs[rank] &&
                    shardrt_axis_index(ctx, 0, &y) == ys[rank],
                "hand: axis_index");
  // collective_permute 0->1, 1->2, 2->3 (positions): position 0 gets zeros.
  const int64_t pairs[] = {0, 1, 1, 2, 2, 3};
  const std::vector<float> moved[] = {{20, 21}, {0, 1}, {10, 11}, {0, 0}};
  out.resize(2);
  shardrt_collective_permute(ctx, -1, 0, 3, pairs, SHARDRT_F32, 2, in.data(), out.data());
  expectFloats(checker, out, moved[rank], "hand: collective_permute on positions");
  // The same pairs as device ids (mesh -1): device d sends to d + 1.
  const std::vector<float> byDevice[] = {{0, 0}, {30, 31}, {10, 11}, {20, 21}};
  shardrt_collective_permute(ctx, -1, -1, 3, pairs, SHARDRT_F32, 2, in.data(), out.data());
  expectFloats(checker, out, byDevice[rank], "hand: collective_permute on device ids");
}

/// Mesh 0 is <["x"=2, "y"=4], device_ids=[7, ..., 0]>: rank r is position
/// 7 - r. "y":(2)2 is y % 2 and "y":(1)2 is y / 2.
void eightRanks(shardrt_context *ctx, int rank, Checker &checker) {
  shardrt_axis_ref low = sub(1, 2, 2), high = sub(1, 1, 2);
  shardrt_group overLow{0, 1, &low}, overHigh{0, 1, &high};
  float p = static_cast<float>(7 - rank);
  const int64_t one[] = {1};
  std::vector<float> out(2);
  // Rank 2 is position 5 (x=1, y=1): y % 2 groups it with y=0 (position 4),
  // y / 2 with y=3 (position 7).
  shardrt_all_gather(ctx, -1, &overLow, SHARDRT_F32, 1, one, 0, &p, out.data());
  if (rank == 2)
    expectFloats(checker, out, {4, 5}, "hand: all_gather over y:(2)2");
  shardrt_all_gather(ctx, -1, &overHigh, SHARDRT_F32, 1, one, 0, &p, out.data());
  if (rank == 2)
    expectFloats(checker, out, {5, 7}, "hand: all_gather over y:(1)2");
  // Rank 1 is position 6 (x=1, y=2): digits 0 and 1.
  if (rank == 1)
    checker.check(shardrt_axis_index(ctx, 0, &low) == 0 && shardrt_axis_index(ctx, 0, &high) == 1,
                  "hand: axis_index of sub-axes");
}

} // namespace

void checkHandComputed(shardrt_context *ctx, const shardrt_program *, int ranks, Checker &checker) {
  int rank = static_cast<int>(shardrt_rank(ctx));
  if (ranks == 4)
    fourRanks(ctx, rank, checker);
  if (ranks == 8)
    eightRanks(ctx, rank, checker);
}

void checkNumerics(shardrt_context *ctx, const shardrt_program *program, Checker &checker) {
  // Every rank is in mesh 0's group over all its axes.
  const shardrt_mesh &mesh = program->meshes[0];
  std::vector<shardrt_axis_ref> all;
  int64_t ranks = 1;
  for (int64_t a = 0; a < mesh.num_axes; ++a) {
    all.push_back(full(a, mesh.axis_sizes[a]));
    ranks *= mesh.axis_sizes[a];
  }
  shardrt_group group{0, static_cast<int64_t>(all.size()), all.data()};
  int rank = static_cast<int>(shardrt_rank(ctx));
  // One NaN anywhere makes max and min NaN, whichever rank holds it.
  for (int64_t kind : {SHARDRT_MAX, SHARDRT_MIN}) {
    double in[2] = {rank == 0 ? NAN : 1.0 * rank, rank == ranks - 1 ? NAN : -1.0 * rank}, out[2];
    shardrt_all_reduce(ctx, -1, &group, SHARDRT_F64, 2, kind, in, out);
    checker.check(std::isnan(out[0]) && std::isnan(out[1]), "all_reduce keeps NaN (f64)");
    float fin[1] = {rank == ranks / 2 ? NAN : 2.0f}, fout[1];
    shardrt_all_reduce(ctx, -1, &group, SHARDRT_F32, 1, kind, fin, fout);
    checker.check(std::isnan(fout[0]), "all_reduce keeps NaN (f32)");
  }
  // Integer sums wrap: INT32_MAX on every rank sums to INT32_MAX * ranks mod 2^32.
  int32_t big = INT32_MAX, sum = 0;
  shardrt_all_reduce(ctx, -1, &group, SHARDRT_I32, 1, SHARDRT_SUM, &big, &sum);
  uint32_t wrapped = static_cast<uint32_t>(INT32_MAX) * static_cast<uint32_t>(ranks);
  checker.check(static_cast<uint32_t>(sum) == wrapped, "i32 all_reduce sum wraps");
  int64_t big64 = INT64_MAX, sum64 = 0;
  shardrt_all_reduce(ctx, -1, &group, SHARDRT_I64, 1, SHARDRT_SUM, &big64, &sum64);
  checker.check(static_cast<uint64_t>(sum64) ==
                    static_cast<uint64_t>(INT64_MAX) * static_cast<uint64_t>(ranks),
                "i64 all_reduce sum wraps");
}
