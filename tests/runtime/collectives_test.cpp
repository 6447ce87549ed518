// Every collective of the runtime against the contract (SPMD_CONTRACT.md
// section 2), under mpiexec -n 1, 2, 4 and 8: hand-computed results for a few
// cases (permuted device_ids, sub-axes), then a sweep over groups (full axes,
// sub-axes, both axis orders), dims (major and not), dtypes and padding
// against references computed here from the group members found by brute
// force (TestProgram.h).
#include "TestProgram.h"
#include "TestTensors.h"
#include "runtime/Context.h"
#include "runtime/SharedWindows.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace shardrt_test;

namespace {

struct Case {
  shardrt_context *ctx;
  const shardrt_program *program;
  int64_t mesh;
  Checker &checker;
  int64_t position() const { return shardrt_mesh_position(ctx, mesh); }
  const shardrt_mesh &meshDesc() const { return program->meshes[mesh]; }
};

std::string describe(const Case &c, const char *op, const std::vector<shardrt_axis_ref> &axes,
                     int64_t dtype, const std::vector<int64_t> &shape, int64_t dim) {
  std::string text = std::string(op) + " on @" + c.meshDesc().name + " axes {";
  for (const auto &a : axes)
    text += std::string(c.meshDesc().axis_names[a.axis]) + ":(" + std::to_string(a.pre_size) + ")" +
            std::to_string(a.size) + " ";
  text += "} dtype " + std::to_string(dtype) + " shape " + shapeString(shape) + " dim " +
          std::to_string(dim);
  return text;
}

/// The all_to_all path ctest forces on this process (SHARDRT_A2A: messages,
/// packed or direct), or "" for the runtime's own choice.
std::string forcedAllToAllPath() {
  const char *path = std::getenv("SHARDRT_A2A");
  return path ? path : "";
}

/// Whether ctest runs this process for another all_to_all path: the
/// reductions and permutes do not depend on it, and the default run checks
/// them.
bool allToAllPathRun() { return !forcedAllToAllPath().empty(); }

/// all_gather, reduce_scatter, all_slice and all_to_all along every dim. A
/// run that forces all_to_all's path checks what the path changes: all_to_all,
/// and all_gather, which such a run sends as messages instead of through a
/// shared window (GatherOverlap.cpp), in the messages run only.
void checkMovement(Case &c, const std::vector<shardrt_axis_ref> &axes, int64_t dtype) {
  const std::string path = forcedAllToAllPath();
  const bool gathers = path.empty() || path == "messages", others = path.empty();
  shardrt_group group{c.mesh, static_cast<int64_t>(axes.size()), axes.data()};
  std::vector<int64_t> members = groupMembers(c.meshDesc(), axes, c.position());
  int64_t n = static_cast<int64_t>(members.size());
  c.checker.check(shardrt_group_size(c.ctx, &group) == n, "group size");
  std::vector<int64_t> base = {2, 3, 2};
  for (int64_t dim = 0; dim < 3; ++dim) {
    // all_gather: the members' operands concatenated along dim.
    if (gathers) {
      std::vector<LocalTensor> parts;
      for (int64_t q : members)
        parts.push_back(operand(q, base, dtype));
      LocalTensor mine = operand(c.position(), base, dtype), out = zeros(base, dtype);
      out.shape[dim] *= n;
      out.values.resize(out.values.size() * n);
      Buffer in = encode(mine, dtype), result(out.values.size() * elementBytes(dtype));
      shardrt_all_gather(c.ctx, -1, &group, dtype, 3, mine.shape.data(), dim, in.data(),
                         result.data());
      expectEqual(c.checker, decode(result, out.shape, dtype), concat(parts, dim),
                  describe(c, "all_gather", axes, dtype, base, dim));
    }

    // all_slice: my block of ceil(D/n) along dim, zero-padded (D = 5: padding).
    std::vector<int64_t> odd = base;
    odd[dim] = 5;
    int64_t index = shardrt_group_index(c.ctx, &group), kept = (5 + n - 1) / n;
    if (others) {
      LocalTensor whole = operand(c.position(), odd, dtype);
      LocalTensor sliced = slice(whole, dim, index * kept, kept);
      Buffer wholeBuffer = encode(whole, dtype),
             slicedBuffer(sliced.values.size() * elementBytes(dtype));
      shardrt_all_slice(c.ctx, -1, &group, dtype, 3, odd.data(), dim, wholeBuffer.data(),
                        slicedBuffer.data());
      expectEqual(c.checker, decode(slicedBuffer, sliced.shape, dtype), sliced,
                  describe(c, "all_slice", axes, dtype, odd, dim));
    }

    // reduce_scatter (no i1 sums): the members' sum, my block along dim.
    std::vector<int64_t> divisible = base;
    divisible[dim] *= n;
    if (others && dtype != SHARDRT_I1) {
      std::vector<LocalTensor> addends;
      for (int64_t q : members)
        addends.push_back(operand(q, divisible, dtype));
      LocalTensor expected = slice(reduce(addends, SHARDRT_SUM), dim, index * base[dim], base[dim]);
      Buffer send = encode(operand(c.position(), divisible, dtype), dtype),
             received(expected.values.size() * elementBytes(dtype));
      shardrt_reduce_scatter(c.ctx, -1, &group, dtype, 3, divisible.data(), dim, send.data(),
                             received.data());
      expectEqual(c.checker, decode(received, expected.shape, dtype), expected,
                  describe(c, "reduce_scatter", axes, dtype, divisible, dim));
    }

    // An empty all_to_all (a zero dim beside the split one) returns at once.
    std::vector<int64_t> empty = divisible;
    empty[(dim + 1) % 3] = 0;
    char none[1] = {0};
    shardrt_all_to_all(c.ctx, -1, &group, dtype, 3, empty.data(), dim, (dim + 2) % 3, none, none);

    // all_to_all from split dim `dim` to every concat dim: block j of my
    // operand goes to member j; I concatenate what I get in sender order.
    for (int64_t concatDim = 0; concatDim < 3; ++concatDim) {
      std::vector<LocalTensor> blocks;
      for (int64_t q : members)
        blocks.push_back(operandSlice(q, divisible, dtype, dim, index * base[dim], base[dim]));
      LocalTensor expected = concat(blocks, concatDim);
      Buffer send = encode(operand(c.position(), divisible, dtype), dtype),
             received(expected.values.size() * elementBytes(dtype));
      shardrt_all_to_all(c.ctx, -1, &group, dtype, 3, divisible.data(), dim, concatDim, send.data(),
                         received.data());
      expectEqual(c.checker, decode(received, expected.shape, dtype), expected,
                  describe(c, "all_to_all", axes, dtype, divisible, dim) + " concat " +
                      std::to_string(concatDim));
    }
  }
}

/// The reductions that travel in 1 MiB chunks. reduce_scatter of blocks of
/// several chunks (the last one partial), along the outermost dim and along
/// dim 1 (packed first); the sum is computed here per element: member q's
/// element i is 100 q + i. all_reduce above its pipelined size, of a count
/// that no member count but 1 divides, out of place and in place.
void checkLargeReductions(Case &c, const std::vector<shardrt_axis_ref> &axes) {
  shardrt_group group{c.mesh, static_cast<int64_t>(axes.size()), axes.data()};
  std::vector<int64_t> members = groupMembers(c.meshDesc(), axes, c.position());
  int64_t n = static_cast<int64_t>(members.size()), index = shardrt_group_index(c.ctx, &group);
  double memberSum = 0;
  for (int64_t q : members)
    memberSum += 100.0 * static_cast<double>(q);
  for (int64_t dtype : {SHARDRT_F64, SHARDRT_I32}) {
    for (int64_t dim : {0, 1}) {
      int64_t rows = dim == 0 ? 1 : 2, cols = 300001 / rows;
      std::vector<int64_t> shape =
          dim == 0 ? std::vector<int64_t>{n * cols} : std::vector<int64_t>{rows, n * cols};
      LocalTensor expected =
          zeros(dim == 0 ? std::vector<int64_t>{cols} : std::vector<int64_t>{rows, cols}, dtype);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < cols; ++j)
          expected.values[static_cast<size_t>(r * cols + j)] =
              memberSum + static_cast<double>(n * (r * n * cols + index * cols + j));
      Buffer send = encode(operand(c.position(), shape, dtype), dtype),
             received(expected.values.size() * elementBytes(dtype));
      shardrt_reduce_scatter(c.ctx, -1, &group, dtype, static_cast<int64_t>(shape.size()),
                             shape.data(), dim, send.data(), received.data());
      expectEqual(c.checker, decode(received, expected.shape, dtype), expected,
                  describe(c, "reduce_scatter in chunks", axes, dtype, shape, dim));
    }
  }
  std::vector<int64_t> shape = {600001};
  for (int64_t dtype : {SHARDRT_F32, SHARDRT_F64, SHARDRT_I32}) {
    for (int64_t kind : {SHARDRT_SUM, SHARDRT_MAX}) {
      LocalTensor expected = reducedOperands(members, shape, dtype, kind);
      Buffer in = encode(reductionOperand(c.position(), shape, dtype), dtype), out(in.size());
      shardrt_all_reduce(c.ctx, -1, &group, dtype, shape[0], kind, in.data(), out.data());
      expectEqual(c.checker, decode(out, shape, dtype), expected,
                  describe(c, "all_reduce in chunks", axes, dtype, shape, kind));
      shardrt_all_reduce(c.ctx, -1, &group, dtype, shape[0], kind, in.data(), in.data());
      expectEqual(c.checker, decode(in, shape, dtype), expected,
                  describe(c, "all_reduce in chunks in place", axes, dtype, shape, kind));
    }
  }
}

/// all_to_all of blocks that travel in several 128 KiB chunks (the runtime's
/// pipelined exchange): a 29x37x41 block per member (2.7 chunks of f64, 1.4
/// of i32, so the last chunk is partial and chunk boundaries fall inside the
/// pieces of every layout), split along each dim and concatenated along each.
void checkLargeAllToAll(Case &c, const std::vector<shardrt_axis_ref> &axes) {
  shardrt_group group{c.mesh, static_cast<int64_t>(axes.size()), axes.data()};
  std::vector<int64_t> members = groupMembers(c.meshDesc(), axes, c.position());
  int64_t n = static_cast<int64_t>(members.size()), index = shardrt_group_index(c.ctx, &group);
  std::vector<int64_t> base = {29, 37, 41};
  for (int64_t dtype : {SHARDRT_F64, SHARDRT_I32}) {
    for (int64_t dim = 0; dim < 3; ++dim) {
      std::vector<int64_t> divisible = base;
      divisible[dim] *= n;
      std::vector<LocalTensor> blocks;
      for (int64_t q : members)
        blocks.push_back(operandSlice(q, divisible, dtype, dim, index * base[dim], base[dim]));
      Buffer send = encode(operand(c.position(), divisible, dtype), dtype);
      for (int64_t concatDim = 0; concatDim < 3; ++concatDim) {
        LocalTensor expected = concat(blocks, concatDim);
        Buffer received(expected.values.size() * elementBytes(dtype));
        shardrt_all_to_all(c.ctx, -1, &group, dtype, 3, divisible.data(), dim, concatDim,
                           send.data(), received.data());
        expectEqual(c.checker, decode(received, expected.shape, dtype), expected,
                    describe(c, "all_to_all in chunks", axes, dtype, divisible, dim) + " concat " +
                        std::to_string(concatDim));
      }
    }
  }
}

/// all_reduce sum / max / min, out of place and in place.
void checkReductions(Case &c, const std::vector<shardrt_axis_ref> &axes, int64_t dtype) {
  shardrt_group group{c.mesh, static_cast<int64_t>(axes.size()), axes.data()};
  std::vector<int64_t> members = groupMembers(c.meshDesc(), axes, c.position());
  std::vector<int64_t> shape = {3, 5};
  for (int64_t kind : {SHARDRT_SUM, SHARDRT_MAX, SHARDRT_MIN}) {
    if (dtype == SHARDRT_I1 && kind == SHARDRT_SUM)
      continue;
    std::vector<LocalTensor> parts;
    for (int64_t q : members)
      parts.push_back(reductionOperand(q, shape, dtype));
    LocalTensor expected = reduce(parts, kind);
    Buffer in = encode(reductionOperand(c.position(), shape, dtype), dtype), out(in.size());
    shardrt_all_reduce(c.ctx, -1, &group, dtype, 15, kind, in.data(), out.data());
    expectEqual(c.checker, decode(out, shape, dtype), expected,
                describe(c, "all_reduce", axes, dtype, shape, kind));
    shardrt_all_reduce(c.ctx, -1, &group, dtype, 15, kind, in.data(), in.data());
    expectEqual(c.checker, decode(in, shape, dtype), expected,
                describe(c, "all_reduce in place", axes, dtype, shape, kind));
  }
}

/// axis_index along every axis and sub-axis used, against the coordinates.
void checkAxisIndex(Case &c, const std::vector<shardrt_axis_ref> &axes) {
  std::vector<int64_t> coords = coordinates(c.meshDesc(), c.position());
  for (const auto &axis : axes)
    c.checker.check(shardrt_axis_index(c.ctx, c.mesh, &axis) ==
                        digit(c.meshDesc(), axis, coords[axis.axis]),
                    "axis_index");
}

/// collective_permute: each position sends to the next one; the last
/// position has no target of its own and the first receives nothing (zeros).
void checkPermute(Case &c, int64_t dtype) {
  const shardrt_mesh &mesh = c.meshDesc();
  int64_t devices = 1;
  for (int64_t a = 0; a < mesh.num_axes; ++a)
    devices *= mesh.axis_sizes[a];
  std::vector<int64_t> pairs;
  for (int64_t p = 0; p + 1 < devices; ++p)
    pairs.insert(pairs.end(), {p, p + 1});
  std::vector<int64_t> shape = {4};
  int64_t p = c.position();
  LocalTensor expected = p == 0 ? zeros(shape, dtype) : operand(p - 1, shape, dtype);
  Buffer in = encode(operand(p, shape, dtype), dtype), out(in.size(), 0x55);
  shardrt_collective_permute(c.ctx, -1, c.mesh, devices - 1, pairs.data(), dtype, 4, in.data(),
                             out.data());
  expectEqual(c.checker, decode(out, shape, dtype), expected, "collective_permute shift");
  // Every position to itself: a local copy.
  std::vector<int64_t> identity;
  for (int64_t q = 0; q < devices; ++q)
    identity.insert(identity.end(), {q, q});
  shardrt_collective_permute(c.ctx, -1, c.mesh, devices, identity.data(), dtype, 4, in.data(),
                             out.data());
  expectEqual(c.checker, decode(out, shape, dtype), operand(p, shape, dtype),
              "collective_permute identity");
}

/// The sweep: every group of interest on every mesh of this rank count.

void sweep(shardrt_context *ctx, const shardrt_program *program, Checker &checker,
           const std::vector<std::vector<std::vector<shardrt_axis_ref>>> &groupsPerMesh) {
  const bool reductions = !allToAllPathRun();
  for (int64_t m = 0; m < program->num_meshes; ++m) {
    Case c{ctx, program, m, checker};
    if (c.position() < 0)
      continue; // a maximal mesh of another rank: its ops don't run here
    if (reductions && !groupsPerMesh[m].empty())
      checkLargeReductions(c, groupsPerMesh[m].front());
    // The first of the largest groups (every rank of the mesh at 2 and 8 ranks).
    const std::vector<shardrt_axis_ref> *largest = nullptr;
    int64_t members = 1;
    for (const auto &axes : groupsPerMesh[m]) {
      int64_t count = static_cast<int64_t>(groupMembers(c.meshDesc(), axes, c.position()).size());
      if (count > members) {
        largest = &axes;
        members = count;
      }
    }
    if (largest)
      checkLargeAllToAll(c, *largest);
    for (const auto &axes : groupsPerMesh[m]) {
      checkAxisIndex(c, axes);
      for (int64_t dtype : {SHARDRT_F32, SHARDRT_F64, SHARDRT_I32, SHARDRT_I64, SHARDRT_I1}) {
        checkMovement(c, axes, dtype);
        if (reductions)
          checkReductions(c, axes, dtype);
      }
    }
    if (reductions) {
      checkPermute(c, SHARDRT_F32);
      checkPermute(c, SHARDRT_I64);
    }
  }
}

} // namespace

void checkHandComputed(shardrt_context *ctx, const shardrt_program *program, int ranks,
                       Checker &checker);
void checkNumerics(shardrt_context *ctx, const shardrt_program *program, Checker &checker);

/// An all_gather along an inner dim gathers into scratch, then unpacks: the
/// scratch is kept for the next collective, unless the program asks for it
/// to be freed on return (programs built under a memory budget).
void checkScratchRelease(shardrt_context *ctx, Program &program, Checker &checker) {
  // Mesh 0's first axis (of 1 to 4 devices).
  int64_t size = program.mesh(0).axis_sizes[0];
  std::vector<shardrt_axis_ref> axes{full(0, size)};
  shardrt_group group{0, 1, axes.data()};
  std::vector<int64_t> shape = {2, 3};
  std::vector<float> in(6, 1.0f), out(6 * static_cast<size_t>(size));
  int64_t held = 0; // window data bytes after the all_to_all below
  for (bool release : {false, true}) {
    program.releaseScratch(release);
    shardrt_all_gather(ctx, -1, &group, SHARDRT_F32, 2, shape.data(), 1, in.data(), out.data());
    bool kept = ctx->scratch[0] != nullptr;
    checker.check(size == 1 || kept != release, release
                                                    ? "scratch freed when the collective returns"
                                                    : "scratch kept for the next collective");
    // A strided all_to_all (its blocks are columns): a packed exchange's
    // window data is freed likewise, and the result is right either way.
    std::vector<int64_t> wide = {2, 3 * size};
    std::vector<float> operand(static_cast<size_t>(6 * size)), blocks(operand.size());
    int64_t me = shardrt_group_index(ctx, &group);
    for (size_t i = 0; i < operand.size(); ++i)
      operand[i] = static_cast<float>(100 * me) + static_cast<float>(i);
    shardrt_all_to_all(ctx, -1, &group, SHARDRT_F32, 2, wide.data(), 1, 0, operand.data(),
                       blocks.data());
    bool right = true;
    for (int64_t k = 0; k < size; ++k) // member k's block: its columns 3 me .. 3 me + 2
      for (int64_t r = 0; r < 2; ++r)
        for (int64_t col = 0; col < 3; ++col)
          right = right && blocks[static_cast<size_t>((k * 2 + r) * 3 + col)] ==
                               static_cast<float>(100 * k + r * 3 * size + 3 * me + col);
    checker.check(right, "strided all_to_all under release_scratch " + std::to_string(release));
    std::string path = forcedAllToAllPath();
    if (size > 1 && path == "packed") { // this group's window: the first pass's held
      if (release)
        checker.check(ctx->windows->dataBytes() < held,
                      "window data freed when the all_to_all returns");
      held = ctx->windows->dataBytes();
      checker.check(release || held > 0, "window data kept for the next all_to_all");
    }
  }
  program.releaseScratch(false);
}

/// Which way the strided all_to_alls went: SHARDRT_A2A forces one (ctest
/// runs this test under each); unset, a group on one node (every group here)
/// exchanges through its shared window (directly where the kernel copies
/// between the ranks and they have a core each, else packed).
void checkAllToAllPath(shardrt_context *ctx, int ranks, Checker &checker) {
  if (ranks == 1)
    return;
  std::string path = forcedAllToAllPath();
  int64_t direct = ctx->windows->directExchanges, packed = ctx->windows->packedExchanges;
  if (path == "messages")
    checker.check(direct == 0 && packed == 0, "SHARDRT_A2A=messages: no shared window");
  else if (path == "packed")
    checker.check(direct == 0 && packed > 0, "SHARDRT_A2A=packed: packed exchanges only");
  else if (path == "direct")
    checker.check(direct > 0 && packed == 0, "SHARDRT_A2A=direct: direct exchanges only");
  else
    checker.check(direct + packed > 0, "all_to_all on one node: through a shared window");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  Program program(ranks);
  std::vector<std::vector<std::vector<shardrt_axis_ref>>> groups;
  std::vector<int64_t> reversed;
  for (int64_t d = ranks - 1; d >= 0; --d)
    reversed.push_back(d);
  if (ranks == 1) {
    program.addMesh("x1", {{"x", 1}});
    groups.push_back({{}, {full(0, 1)}});
  } else if (ranks == 2) {
    program.addMesh("x2", {{"x", 2}});
    program.addMesh("x2_reversed", {{"x", 2}}, reversed);
    groups.push_back({{}, {full(0, 2)}});
    groups.push_back({{full(0, 2)}});
  } else if (ranks == 4) {
    program.addMesh("x2_y2", {{"x", 2}, {"y", 2}}, {3, 1, 2, 0});
    program.addMesh("z4", {{"z", 4}});
    groups.push_back(
        {{full(0, 2)}, {full(1, 2)}, {full(0, 2), full(1, 2)}, {full(1, 2), full(0, 2)}});
    groups.push_back({{full(0, 4)}, {sub(0, 1, 2)}, {sub(0, 2, 2)}, {sub(0, 2, 2), sub(0, 1, 2)}});
  } else if (ranks == 8) {
    program.addMesh("x2_y4", {{"x", 2}, {"y", 4}}, reversed);
    program.addMesh("a2_b2_c2", {{"a", 2}, {"b", 2}, {"c", 2}});
    groups.push_back({{full(0, 2)},
                      {full(1, 4)},
                      {full(1, 4), full(0, 2)},
                      {sub(1, 1, 2)},
                      {sub(1, 2, 2)},
                      {full(0, 2), sub(1, 2, 2)},
                      {sub(1, 2, 2), full(0, 2)},
                      {sub(1, 2, 2), sub(1, 1, 2)}});
    groups.push_back({{full(1, 2)}, {full(0, 2), full(2, 2)}, {full(2, 2), full(0, 2)}});
  } else {
    if (rank == 0)
      std::fprintf(stderr, "collectives_test runs on 1, 2, 4 or 8 ranks\n");
    MPI_Finalize();
    return 2;
  }
  // An empty and a maximal mesh too: groups there have no axes.
  program.addMesh("empty", {});
  program.addMesh("on_last", {}, {ranks - 1});
  groups.push_back({{}});
  groups.push_back({{}});
  // Mesh 0's groups are made at start-up, the others on first use.
  for (const auto &axes : groups[0])
    program.addGroup(0, axes);

  char name[] = "collectives_test";
  char *args[] = {name, nullptr};
  shardrt_context *ctx = shardrt_init(program.get(), 1, args);
  Checker checker(rank);
  checkHandComputed(ctx, program.get(), ranks, checker);
  if (!allToAllPathRun())
    checkNumerics(ctx, program.get(), checker); // all_reduce only
  sweep(ctx, program.get(), checker, groups);
  checkScratchRelease(ctx, program, checker);
  checkAllToAllPath(ctx, ranks, checker);
  shardrt_finalize(ctx);
  int status = checker.finish("collectives_test");
  MPI_Finalize();
  return status;
}
