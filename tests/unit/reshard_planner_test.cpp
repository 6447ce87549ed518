// Unit tests for the reshard planner (passes/reshard/ReshardPlanner.h): the exact
// steps and bytes per device of each kind of transition (DESIGN.md's table),
// multi-axis, sub-axis, padded, partial and cross-mesh reshards.
#include "passes/reshard/ReshardPlanner.h"

#include "ir/ShardingLayout.h"

#include "tests/unit/TestHelpers.h"

#include <catch2/catch.hpp>

using namespace shardc;
using namespace shardc::testing;

namespace {

Sharding on(const Mesh &mesh, std::vector<std::vector<AxisRef>> dims) {
  Sharding s = Sharding::replicatedOn(mesh.name, dims.size());
  for (size_t d = 0; d < dims.size(); ++d)
    s.dims[d].axes = dims[d];
  return s;
}

std::string plan(const Mesh &from, Sharding source, const Mesh &to, Sharding target,
                 std::vector<int64_t> shape, std::vector<AxisRef> partial = {},
                 std::string kind = "sum", int64_t *bytes = nullptr) {
  ReshardRequest r;
  r.type = TensorType{std::move(shape), DType::F32};
  r.sourceMesh = &from;
  r.source = std::move(source);
  r.partialAxes = std::move(partial);
  r.partialKind = std::move(kind);
  r.targetMesh = &to;
  r.target = std::move(target);
  ReshardPlan p = planReshard(r);
  int64_t sum = 0;
  for (const ReshardStep &s : p.steps)
    sum += s.bytes;
  CHECK(sum == p.bytes);
  if (bytes)
    *bytes = p.bytes;
  return describePlan(p);
}

std::string plan(const Mesh &mesh, Sharding source, Sharding target, std::vector<int64_t> shape,
                 std::vector<AxisRef> partial = {}, std::string kind = "sum") {
  return plan(mesh, std::move(source), mesh, std::move(target), std::move(shape),
              std::move(partial), std::move(kind));
}

} // namespace

TEST_CASE("reshard planner: nothing to do", "[reshard]") {
  Mesh m = makeMesh({{"x", 2}, {"y", 4}});
  CHECK(plan(m, on(m, {{full("x")}, {}}), on(m, {{full("x")}, {}}), {64, 128}) == "");
}

TEST_CASE("reshard planner: replicated to sharded is a free local slice", "[reshard]") {
  Mesh m = makeMesh({{"x", 2}, {"y", 4}});
  CHECK(plan(m, on(m, {{}, {}}), on(m, {{full("x")}, {}}), {64, 128}) ==
        "all_slice dim=0 axes={\"x\"} bytes=0\n");
  // Two axes on one dim: one multi-axis slice.
  CHECK(plan(m, on(m, {{}, {}}), on(m, {{full("x"), full("y")}, {}}), {64, 128}) ==
        "all_slice dim=0 axes={\"x\", \"y\"} bytes=0\n");
}

TEST_CASE("reshard planner: sharded to replicated is an all_gather of (n-1)L", "[reshard]") {
  Mesh m = makeMesh({{"x", 2}, {"y", 4}});
  // L = 32x128 f32 = 16384 bytes, n = 2.
  CHECK(plan(m, on(m, {{full("x")}, {}}), on(m, {{}, {}}), {64, 128}) ==
        "all_gather dim=0 axes={\"x\"} bytes=16384\n");
  // Both axes of one dim: L = 8x128x4 = 4096, n = 8: 7 L in one collective.
  CHECK(plan(m, on(m, {{full("x"), full("y")}, {}}), on(m, {{}, {}}), {64, 128}) ==
        "all_gather dim=0 axes={\"x\", \"y\"} bytes=28672\n");
  // Only the minor axis.
  CHECK(plan(m, on(m, {{full("x"), full("y")}, {}}), on(m, {{full("x")}, {}}), {64, 128}) ==
        "all_gather dim=0 axes={\"y\"} bytes=12288\n");
}

TEST_CASE("reshard planner: moving an axis between dims is an all_to_all", "[reshard]") {
  Mesh m = makeMesh({{"x", 2}, {"y", 4}});
  // L = 16384, n = 2: (n-1)/n L = 8192, cheaper than gather (16384) + slice.
  CHECK(plan(m, on(m, {{full("x")}, {}}), on(m, {{}, {full("x")}}), {64, 128}) ==
        "all_to_all split_dim=1 concat_dim=0 axes={\"x\"} bytes=8192\n");
}

TEST_CASE("reshard planner: swapping the axes of two dims", "[reshard]") {
  Mesh m = makeMesh({{"x", 2}, {"y", 2}});
  // Same tiling (2 x 2 blocks), other devices: one collective_permute of L.
  CHECK(plan(m, on(m, {{full("x")}, {full("y")}}), on(m, {{full("y")}, {full("x")}}), {8, 8}) ==
        "collective_permute bytes=64\n");
  CHECK(plan(m, on(m, {{full("x")}, {}}), on(m, {{full("y")}, {}}), {8, 8}) ==
        "collective_permute bytes=128\n");
}

TEST_CASE("reshard planner: a permutation on a large mesh", "[reshard]") {
  // 2 x 2 x 65536 devices: each of the 4 blocks has 65536 holders before and
  // after, and half the devices change block. Each takes the lowest device of
  // its new block not taken yet (the pairing once searched and erased each
  // block's list per device: 2^35 steps here).
  const int64_t z = 65536;
  Mesh m = makeMesh({{"x", 2}, {"y", 2}, {"z", z}});
  ReshardRequest r;
  r.type = TensorType{{8}, DType::F32};
  r.sourceMesh = r.targetMesh = &m;
  r.source = on(m, {{full("x"), full("y")}});
  r.target = on(m, {{full("y"), full("x")}});
  ReshardPlan p = planReshard(r);
  REQUIRE(p.steps.size() == 1);
  REQUIRE(p.steps[0].kind == ReshardStepKind::CollectivePermute);
  const auto &pairs = p.steps[0].pairs;
  REQUIRE(pairs.size() == static_cast<size_t>(4 * z));
  // Device (x, y, k) is at x * 2z + y * z + k; it holds block 2x + y before,
  // 2y + x after. Devices with x == y keep theirs; (0, 1, k) takes its block
  // from the lowest holder of it, (1, 0, k), and the other way round.
  std::vector<int64_t> sourceOf(static_cast<size_t>(4 * z), -1);
  bool eachTargetOnce = true;
  for (auto [source, target] : pairs) {
    eachTargetOnce = eachTargetOnce && sourceOf[static_cast<size_t>(target)] == -1;
    sourceOf[static_cast<size_t>(target)] = source;
  }
  REQUIRE(eachTargetOnce);
  for (int64_t k : {int64_t{0}, int64_t{1}, z - 1}) {
    CHECK(sourceOf[static_cast<size_t>(k)] == k);
    CHECK(sourceOf[static_cast<size_t>(z + k)] == 2 * z + k);
    CHECK(sourceOf[static_cast<size_t>(2 * z + k)] == z + k);
    CHECK(sourceOf[static_cast<size_t>(3 * z + k)] == 3 * z + k);
  }
}

TEST_CASE("reshard planner: permutation pairs of sub-axes match the shard indices", "[reshard]") {
  // The pairs against a direct reading of the rule: each device's block
  // before and after from shardIndex; a device keeps its own block where it
  // can, every other takes the lowest holder of its new block not taken yet.
  auto expected = [](const Mesh &m, const Sharding &from, const Sharding &to) {
    const int64_t n = m.deviceCount();
    std::vector<int64_t> sizes;
    for (const MeshAxis &a : m.axes)
      sizes.push_back(a.size);
    auto blocks = [&](const Sharding &s) {
      std::vector<std::vector<int64_t>> out;
      for (int64_t p = 0; p < n; ++p) {
        std::vector<int64_t> coords(sizes.size());
        for (size_t i = sizes.size(), rest = static_cast<size_t>(p); i-- > 0;) {
          coords[i] = static_cast<int64_t>(rest) % sizes[i];
          rest /= static_cast<size_t>(sizes[i]);
        }
        std::vector<int64_t> block;
        for (const DimSharding &dim : s.dims)
          block.push_back(shardIndex(m, dim, coords));
        out.push_back(block);
      }
      return out;
    };
    auto before = blocks(from), after = blocks(to);
    std::vector<bool> taken(static_cast<size_t>(n), false);
    std::vector<std::pair<int64_t, int64_t>> pairs;
    for (int64_t p = 0; p < n; ++p)
      if (before[p] == after[p]) {
        taken[static_cast<size_t>(p)] = true;
        pairs.push_back({p, p});
      }
    for (int64_t p = 0; p < n; ++p) {
      if (before[p] == after[p])
        continue;
      for (int64_t q = 0; q < n; ++q)
        if (!taken[static_cast<size_t>(q)] && before[q] == after[p]) {
          taken[static_cast<size_t>(q)] = true;
          pairs.push_back({q, p});
          break;
        }
    }
    std::sort(pairs.begin(), pairs.end());
    return pairs;
  };
  Mesh x8 = makeMesh({{"x", 8}});
  Mesh m3 = makeMesh({{"x", 4}, {"y", 3}, {"z", 2}});
  struct Case {
    const Mesh *mesh;
    Sharding from, to;
  };
  std::vector<Case> cases = {
      {&x8, on(x8, {{sub("x", 1, 2)}, {sub("x", 2, 4)}}),
       on(x8, {{sub("x", 4, 2)}, {sub("x", 1, 4)}})},
      {&x8, on(x8, {{sub("x", 1, 4)}, {}}), on(x8, {{sub("x", 2, 4)}, {}})},
      {&m3, on(m3, {{full("x"), full("z")}, {full("y")}}),
       on(m3, {{full("z"), full("x")}, {full("y")}})},
      {&m3, on(m3, {{sub("x", 1, 2), full("y")}, {full("z")}}),
       on(m3, {{full("y"), sub("x", 2, 2)}, {full("z")}})},
      {&m3, on(m3, {{full("z")}, {sub("x", 2, 2)}}), on(m3, {{sub("x", 1, 2)}, {full("z")}})},
  };
  for (const Case &c : cases) {
    ReshardRequest r;
    r.type = TensorType{{48, 48}, DType::F32};
    r.sourceMesh = r.targetMesh = c.mesh;
    r.source = c.from;
    r.target = c.to;
    ReshardPlan p = planReshard(r);
    INFO(c.from.str() << " -> " << c.to.str() << ": " << describePlan(p));
    REQUIRE(p.steps.size() == 1);
    REQUIRE(p.steps[0].kind == ReshardStepKind::CollectivePermute);
    CHECK(p.steps[0].pairs == expected(*c.mesh, c.from, c.to));
  }
}

TEST_CASE("reshard planner: swap on 2x4 beats gathering everything", "[reshard]") {
  Mesh m = makeMesh({{"x", 2}, {"y", 4}});
  int64_t bytes = 0;
  std::string steps = plan(m, on(m, {{full("x")}, {full("y")}}), m,
                           on(m, {{full("y")}, {full("x")}}), {64, 128}, {}, "sum", &bytes);
  // Gathering both dims costs L(3) + 4L(1) = 7 L = 28672 for L = 4096.
  // Here: gather x (L), move y to dim 0 (3/4 of 2L), slice x: 2.5 L.
  CHECK(bytes < 28672);
  CHECK(steps == "all_gather dim=0 axes={\"x\"} bytes=4096\n"
                 "all_to_all split_dim=0 concat_dim=1 axes={\"y\"} bytes=6144\n"
                 "all_slice dim=1 axes={\"x\"} bytes=0\n");
}

TEST_CASE("reshard planner: partial sums", "[reshard]") {
  Mesh m = makeMesh({{"x", 2}, {"y", 4}});
  // L = 32x128x4 = 16384 on [{"x"}, {}], partial over y (n = 4).
  CHECK(plan(m, on(m, {{full("x")}, {}}), on(m, {{full("x")}, {}}), {64, 128}, {full("y")}) ==
        "all_reduce axes={\"y\"} bytes=24576\n");
  // The user wants dim 1 sharded on y: reduce_scatter, (n-1)/n L, not
  // all_reduce + slice (2(n-1)/n L).
  CHECK(plan(m, on(m, {{full("x")}, {}}), on(m, {{full("x")}, {full("y")}}), {64, 128},
             {full("y")}) == "reduce_scatter dim=1 axes={\"y\"} bytes=12288\n");
  // Partial over both axes: one all_reduce of the group of 8.
  CHECK(plan(m, on(m, {{}, {}}), on(m, {{}, {}}), {64, 128}, {full("x"), full("y")}) ==
        "all_reduce axes={\"x\", \"y\"} bytes=57344\n");
  // A partial max cannot reduce_scatter. Reducing it whole would cost
  // 2(n-1)/n L = 49152; slicing the free axis x first halves the reduction
  // and gathering x back costs less than that half (24576 + 4096).
  CHECK(plan(m, on(m, {{}, {}}), on(m, {{full("y")}, {}}), {64, 128}, {full("y")}, "max") ==
        "all_slice dim=1 axes={\"x\"} bytes=0\n"
        "all_reduce axes={\"y\"} kind=max bytes=24576\n"
        "all_slice dim=0 axes={\"y\"} bytes=0\n"
        "all_gather dim=1 axes={\"x\"} bytes=4096\n");
}

TEST_CASE("reshard planner: sub-axes", "[reshard]") {
  Mesh m = makeMesh({{"x", 4}});
  // Only the minor half of x moves: L = 2x8x4 = 64, n = 2.
  CHECK(plan(m, on(m, {{full("x")}, {}}), on(m, {{sub("x", 1, 2)}, {sub("x", 2, 2)}}), {8, 8}) ==
        "all_to_all split_dim=1 concat_dim=0 axes={\"x\":(2)2} bytes=32\n");
  CHECK(plan(m, on(m, {{sub("x", 1, 2)}, {}}), on(m, {{full("x")}, {}}), {8, 8}) ==
        "all_slice dim=0 axes={\"x\":(2)2} bytes=0\n");
  CHECK(plan(m, on(m, {{full("x")}, {}}), on(m, {{sub("x", 1, 2)}, {}}), {8, 8}) ==
        "all_gather dim=0 axes={\"x\":(2)2} bytes=64\n");
}

TEST_CASE("reshard planner: explicitly replicated axes are not sharded", "[reshard]") {
  Mesh m = makeMesh({{"x", 2}, {"y", 4}});
  Sharding target = on(m, {{full("x")}, {}});
  target.replicated = {full("y")};
  CHECK(plan(m, on(m, {{}, {}}), target, {64, 128}) == "all_slice dim=0 axes={\"x\"} bytes=0\n");
}

TEST_CASE("reshard planner: padded dims", "[reshard]") {
  Mesh m = makeMesh({{"x", 2}, {"y", 2}});
  // 7 on [x, y]: blocks of 2 nest in blocks of 4 (ceil(7/2)): one axis at a time.
  CHECK(plan(m, on(m, {{full("x"), full("y")}}), on(m, {{full("x")}}), {7}) ==
        "all_gather dim=0 axes={\"y\"} bytes=8\n");
  Mesh big = makeMesh({{"x", 2}, {"y", 4}});
  // 10 on [x, y]: blocks of 2 do not nest in blocks of 5: the whole dim is
  // gathered (7 L, L = 8 bytes) and x sliced again.
  CHECK(plan(big, on(big, {{full("x"), full("y")}}), on(big, {{full("x")}}), {10}) ==
        "all_gather dim=0 axes={\"x\", \"y\"} bytes=56\nall_slice dim=0 axes={\"x\"} bytes=0\n");
}

TEST_CASE("reshard planner: across meshes", "[reshard]") {
  Mesh row = makeMesh({{"x", 2}, {"y", 4}});
  row.name = "row";
  Mesh col = makeMesh({{"a", 4}, {"b", 2}}, {0, 4, 1, 5, 2, 6, 3, 7});
  col.name = "col";
  // examples/two_meshes.shd: the same blocks on the same devices.
  CHECK(plan(row, on(row, {{full("x")}, {full("y")}}), col, on(col, {{full("b")}, {full("a")}}),
             {16, 64}) == "relabel bytes=0\n");
  // Same tiling, other devices: one collective_permute of L = 8x16x4.
  Mesh plain = makeMesh({{"a", 4}, {"b", 2}});
  plain.name = "plain";
  CHECK(plan(row, on(row, {{full("x")}, {full("y")}}), plain, on(plain, {{full("b")}, {full("a")}}),
             {16, 64}) == "collective_permute bytes=512\n");
  // Another tiling: move on the source mesh first, then relabel.
  int64_t bytes = 0;
  std::string steps = plan(row, on(row, {{full("x")}, {full("y")}}), col,
                           on(col, {{full("a")}, {full("b")}}), {16, 64}, {}, "sum", &bytes);
  // @col's [a] is @row's [y]: the cheapest plan moves half of y to dim 0
  // on @row (1/2 L), then permutes (L), 1.5 L in all; the same tiling on
  // @row ([y], [x]) and a relabel would cost 2.5 L.
  CHECK(bytes < 7 * 512);
  CHECK(steps == "all_to_all split_dim=0 concat_dim=1 axes={\"y\":(2)2} bytes=256\n"
                 "collective_permute bytes=512\n");
}

TEST_CASE("reshard planner: maximal meshes", "[reshard]") {
  Mesh m = makeMesh({{"x", 2}});
  Mesh one = makeMesh({}, {1});
  one.name = "one";
  // From one device to all: a broadcast of the whole value, then a free slice.
  CHECK(plan(one, on(one, {{}}), m, on(m, {{full("x")}}), {8}) ==
        "broadcast bytes=32\nall_slice dim=0 axes={\"x\"} bytes=0\n");
  // To one device: gather, then every device (the target among them) has it.
  CHECK(plan(m, on(m, {{full("x")}}), one, on(one, {{}}), {8}) ==
        "all_gather dim=0 axes={\"x\"} bytes=16\nrelabel bytes=0\n");
}
