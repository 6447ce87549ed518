// Unit tests for ir/ShardingLayout.h: which block of a sharded tensor each
// device holds, for full axes, several axes per dim, sub-axes, device_ids
// orders, replicated axes, non-divisible dims and maximal meshes; and the
// JAX-style type. The pictures of ir/Visualize.h have golden lit tests
// (tests/lit/visualize); here only the edge cases the verifier lets through.
#include "ir/ShardingLayout.h"
#include "ir/Visualize.h"

#include "tests/unit/TestHelpers.h"

#include <catch2/catch.hpp>

#include <map>
#include <set>

using namespace shardc;

namespace {

using namespace shardc::testing;

/// sharding<@m, [{axes of dim 0}, {axes of dim 1}, ...]>.
Sharding sharding(std::vector<std::vector<AxisRef>> dims, std::vector<AxisRef> replicated = {}) {
  Sharding s;
  s.meshName = "m";
  for (auto &axes : dims) {
    DimSharding d;
    d.axes = std::move(axes);
    s.dims.push_back(std::move(d));
  }
  s.replicated = std::move(replicated);
  return s;
}

using Held = std::pair<std::vector<int64_t>, std::vector<int64_t>>; // start, extent

/// device -> (start, extent); also checks the list is sorted by device id.
std::map<int64_t, Held> blocksByDevice(const Mesh &mesh, const std::vector<int64_t> &shape,
                                       const Sharding &s) {
  std::vector<DeviceBlock> blocks = deviceBlocks(mesh, shape, s);
  std::map<int64_t, Held> out;
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (i > 0)
      CHECK(blocks[i - 1].device < blocks[i].device);
    CHECK(blocks[i].start.size() == shape.size());
    CHECK(blocks[i].extent.size() == shape.size());
    CHECK(blocks[i].index.size() == shape.size());
    out[blocks[i].device] = {blocks[i].start, blocks[i].extent};
  }
  return out;
}

std::vector<int64_t> extentsAlongDim0(const Mesh &mesh, int64_t dimSize, const Sharding &s) {
  std::vector<int64_t> extents;
  for (const DeviceBlock &b : deviceBlocks(mesh, {dimSize}, s))
    extents.push_back(b.extent[0]);
  return extents;
}

} // namespace

TEST_CASE("layout: mesh coordinates and positions", "[layout]") {
  Mesh m = makeMesh({{"x", 2}, {"y", 3}, {"z", 2}});
  CHECK(meshCoordinates(m, 0) == std::vector<int64_t>{0, 0, 0});
  CHECK(meshCoordinates(m, 1) == std::vector<int64_t>{0, 0, 1});
  CHECK(meshCoordinates(m, 2) == std::vector<int64_t>{0, 1, 0});
  CHECK(meshCoordinates(m, 7) == std::vector<int64_t>{1, 0, 1});
  CHECK(meshCoordinates(m, 11) == std::vector<int64_t>{1, 2, 1});
  CHECK(meshPosition(m, 5) == 5);
  CHECK_FALSE(meshPosition(m, 12).has_value());

  Mesh p = makeMesh({{"a", 2}, {"b", 2}}, {1, 0, 3, 2});
  CHECK(meshPosition(p, 0) == 1);
  CHECK(meshPosition(p, 3) == 2);
  CHECK_FALSE(meshPosition(p, 4).has_value());
  CHECK(meshCoordinates(makeMesh({}), 0).empty());
}

TEST_CASE("layout: shard start and extent, divisible and padded", "[layout]") {
  CHECK(shardStart(8, 4, 3) == 6);
  CHECK(shardExtent(8, 4, 3) == 2);
  // 7 on 4 shards: ceil(7/4) = 2 per shard, the last one short.
  for (int64_t i = 0; i < 4; ++i)
    CHECK(shardStart(7, 4, i) == 2 * i);
  CHECK(shardExtent(7, 4, 3) == 1);
  // 5 on 4: 2, 2, 1, 0; the empty shard starts at the end.
  CHECK(shardExtent(5, 4, 2) == 1);
  CHECK(shardExtent(5, 4, 3) == 0);
  CHECK(shardStart(5, 4, 3) == 5);
  // More shards than elements: 2 on 8 gives 1, 1, then nothing.
  CHECK(shardExtent(2, 8, 1) == 1);
  CHECK(shardExtent(2, 8, 2) == 0);
  CHECK(shardStart(2, 8, 7) == 2);
  // Unsharded: the whole dim.
  CHECK(shardStart(9, 1, 0) == 0);
  CHECK(shardExtent(9, 1, 0) == 9);
  CHECK(shardExtent(0, 4, 0) == 0);
}

TEST_CASE("layout: 1-D on one axis", "[layout]") {
  Mesh m = makeMesh({{"x", 4}});
  auto blocks = blocksByDevice(m, {8}, sharding({{full("x")}}));
  REQUIRE(blocks.size() == 4);
  for (int64_t d = 0; d < 4; ++d)
    CHECK(blocks[d] == Held{{2 * d}, {2}});
}

TEST_CASE("layout: 2-D, one axis per dim", "[layout]") {
  // The seed's basic structure: [[0, 1], [2, 3]], [{"x"}, {"y"}] on 4x4.
  Mesh m = makeMesh({{"x", 2}, {"y", 2}});
  auto blocks = blocksByDevice(m, {4, 4}, sharding({{full("x")}, {full("y")}}));
  CHECK(blocks[0] == Held{{0, 0}, {2, 2}});
  CHECK(blocks[1] == Held{{0, 2}, {2, 2}});
  CHECK(blocks[2] == Held{{2, 0}, {2, 2}});
  CHECK(blocks[3] == Held{{2, 2}, {2, 2}});

  // Transposed: dim 0 on "y", dim 1 on "x".
  auto t = blocksByDevice(m, {4, 4}, sharding({{full("y")}, {full("x")}}));
  CHECK(t[1] == Held{{2, 0}, {2, 2}});
  CHECK(t[2] == Held{{0, 2}, {2, 2}});
}

TEST_CASE("layout: several axes on one dim, major to minor", "[layout]") {
  // The seed: mesh x=2, y=4, z=2; tensor<4x8>, [{"x"}, {"z", "y"}]; local 2x1.
  Mesh m = makeMesh({{"x", 2}, {"y", 4}, {"z", 2}});
  Sharding s = sharding({{full("x")}, {full("z"), full("y")}});
  std::vector<DeviceBlock> blocks = deviceBlocks(m, {4, 8}, s);
  REQUIRE(blocks.size() == 16);
  for (const DeviceBlock &b : blocks) {
    std::vector<int64_t> c = meshCoordinates(m, b.device);
    CHECK(b.index[0] == c[0]);
    // "z" is major: index = z * 4 + y.
    CHECK(b.index[1] == c[2] * 4 + c[1]);
    CHECK(b.start == std::vector<int64_t>{2 * c[0], c[2] * 4 + c[1]});
    CHECK(b.extent == std::vector<int64_t>{2, 1});
  }
  CHECK(localShape({4, 8}, s, m) == std::vector<int64_t>{2, 1});
  // Device 1 = (x=0, y=0, z=1): column 4.
  CHECK(blocks[1].start == std::vector<int64_t>{0, 4});
  // Device 2 = (x=0, y=1, z=0): column 1.
  CHECK(blocks[2].start == std::vector<int64_t>{0, 1});
}

TEST_CASE("layout: sub-axes", "[layout]") {
  Mesh x4 = makeMesh({{"x", 4}});
  // The seed's reshape: tensor<2x4> on [{"x":(1)2}, {"x":(2)2}] keeps every
  // element where tensor<8> on [{"x"}] had it: device d holds elements 2d, 2d+1,
  // i.e. row d/2, columns 2*(d%2) and the next.
  auto blocks = blocksByDevice(x4, {2, 4}, sharding({{sub("x", 1, 2)}, {sub("x", 2, 2)}}));
  for (int64_t d = 0; d < 4; ++d)
    CHECK(blocks[d] == Held{{d / 2, 2 * (d % 2)}, {1, 2}});

  // "y":(2)2 of y=8 is the middle bit of y: (y / 2) % 2.
  Mesh m = makeMesh({{"x", 2}, {"y", 8}, {"z", 2}});
  Sharding s = sharding({{full("x")}, {sub("y", 2, 2)}});
  CHECK(localShape({4, 8}, s, m) == std::vector<int64_t>{2, 4});
  for (const DeviceBlock &b : deviceBlocks(m, {4, 8}, s)) {
    std::vector<int64_t> c = meshCoordinates(m, b.device);
    CHECK(b.index[1] == (c[1] / 2) % 2);
    CHECK(b.start[1] == 4 * ((c[1] / 2) % 2));
  }

  // The seed: mesh_full "devices"=8 with [{"devices":(1)4}, {"devices":(4)2}]
  // lays data out exactly like mesh_xy x=4, y=2 with [{"x"}, {"y"}].
  Mesh flat = makeMesh({{"devices", 8}});
  Mesh xy = makeMesh({{"x", 4}, {"y", 2}});
  auto a = blocksByDevice(flat, {4, 4}, sharding({{sub("devices", 1, 4)}, {sub("devices", 4, 2)}}));
  auto b = blocksByDevice(xy, {4, 4}, sharding({{full("x")}, {full("y")}}));
  CHECK(a == b);
}

TEST_CASE("layout: ill-formed sub-axes stay in range (unverified IR, e.g. hover)", "[layout]") {
  Mesh x4 = makeMesh({{"x", 4}});
  Sharding s = sharding({{sub("x", 3, 2)}, {sub("x", 1, 8)}, {full("nope")}});
  for (const DeviceBlock &b : deviceBlocks(x4, {8, 8, 8}, s)) {
    CHECK(b.index[0] >= 0);
    CHECK(b.index[0] < 2);
    CHECK(b.index[1] < 8);
    CHECK(b.index[2] == 0);
  }
}

TEST_CASE("layout: device_ids permute which device holds which block", "[layout]") {
  // Reversed order: position p holds block p, and is device 7 - p.
  Mesh rev = makeMesh({{"a", 4}, {"b", 2}}, {7, 6, 5, 4, 3, 2, 1, 0});
  auto blocks = blocksByDevice(rev, {8}, sharding({{full("a"), full("b")}}));
  for (int64_t d = 0; d < 8; ++d)
    CHECK(blocks[d] == Held{{7 - d}, {1}});

  // examples/two_meshes.shd: @col = <["a"=4, "b"=2], device_ids=[0, 4, 1, 5,
  // 2, 6, 3, 7]> with [{"b"}, {"a"}] places every element where @row =
  // <["x"=2, "y"=4]> with [{"x"}, {"y"}] does.
  Mesh row = makeMesh({{"x", 2}, {"y", 4}});
  Mesh col = makeMesh({{"a", 4}, {"b", 2}}, {0, 4, 1, 5, 2, 6, 3, 7});
  CHECK(blocksByDevice(col, {16, 64}, sharding({{full("b")}, {full("a")}})) ==
        blocksByDevice(row, {16, 64}, sharding({{full("x")}, {full("y")}})));

  // Shardy's own spelling: <["a"=2, "b"=2], device_ids=[1, 0, 3, 2]>.
  Mesh p = makeMesh({{"a", 2}, {"b", 2}}, {1, 0, 3, 2});
  auto pb = blocksByDevice(p, {4}, sharding({{full("a"), full("b")}}));
  CHECK(pb[1] == Held{{0}, {1}});
  CHECK(pb[0] == Held{{1}, {1}});
  CHECK(pb[3] == Held{{2}, {1}});
  CHECK(pb[2] == Held{{3}, {1}});
}

TEST_CASE("layout: replicated axes hold the same block", "[layout]") {
  Mesh m = makeMesh({{"x", 2}, {"y", 4}, {"z", 2}});
  // The seed: [{"x"}, {?}], replicated={"y"} on 4x8: local 2x8. "y" and
  // "z" (implicitly) replicate: 8 devices per block.
  Sharding s = sharding({{full("x")}, {}}, {full("y")});
  CHECK(localShape({4, 8}, s, m) == std::vector<int64_t>{2, 8});
  std::map<std::vector<int64_t>, std::set<int64_t>> holders;
  for (const DeviceBlock &b : deviceBlocks(m, {4, 8}, s)) {
    CHECK(b.extent == std::vector<int64_t>{2, 8});
    holders[b.start].insert(b.device);
  }
  REQUIRE(holders.size() == 2);
  CHECK(holders[{0, 0}] == std::set<int64_t>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(holders[{2, 0}] == std::set<int64_t>{8, 9, 10, 11, 12, 13, 14, 15});

  // Fully replicated: everyone holds everything.
  for (const DeviceBlock &b : deviceBlocks(m, {4, 8}, sharding({{}, {}}))) {
    CHECK(b.start == std::vector<int64_t>{0, 0});
    CHECK(b.extent == std::vector<int64_t>{4, 8});
  }

  // Sharded on the minor axis only: devices differing in "x" share a block.
  Mesh xy = makeMesh({{"x", 2}, {"y", 2}});
  auto blocks = blocksByDevice(xy, {6}, sharding({{full("y")}}));
  CHECK(blocks[0] == blocks[2]);
  CHECK(blocks[1] == blocks[3]);
  CHECK(blocks[1] == Held{{3}, {3}});
}

TEST_CASE("layout: non-divisible dims are padded", "[layout]") {
  Mesh m = makeMesh({{"x", 4}});
  Sharding s = sharding({{full("x")}});
  CHECK(extentsAlongDim0(m, 7, s) == std::vector<int64_t>{2, 2, 2, 1});
  CHECK(extentsAlongDim0(m, 5, s) == std::vector<int64_t>{2, 2, 1, 0});
  CHECK(extentsAlongDim0(m, 3, s) == std::vector<int64_t>{1, 1, 1, 0});
  CHECK(localShape({7}, s, m) == std::vector<int64_t>{2});
  CHECK(localShape({5}, s, m) == std::vector<int64_t>{2});

  // The seed's divisibility example: x=8, y=2, z=3; tensor<7x3x8> on
  // [{"x"}, {"y"}, {"z"}]: local 1x2x3.
  Mesh xyz = makeMesh({{"x", 8}, {"y", 2}, {"z", 3}});
  Sharding s3 = sharding({{full("x")}, {full("y")}, {full("z")}});
  CHECK(localShape({7, 3, 8}, s3, xyz) == std::vector<int64_t>{1, 2, 3});
  int64_t elements = 0;
  for (const DeviceBlock &b : deviceBlocks(xyz, {7, 3, 8}, s3)) {
    std::vector<int64_t> c = meshCoordinates(xyz, b.device);
    CHECK(b.extent[0] == (c[0] < 7 ? 1 : 0));
    CHECK(b.extent[1] == (c[1] == 0 ? 2 : 1));
    CHECK(b.extent[2] == (c[2] < 2 ? 3 : 2));
    elements += b.extent[0] * b.extent[1] * b.extent[2];
  }
  // No replication here: the blocks tile the tensor exactly once.
  CHECK(elements == 7 * 3 * 8);
}

TEST_CASE("layout: maximal and empty meshes", "[layout]") {
  Mesh maximal = makeMesh({}, {3});
  std::vector<DeviceBlock> blocks = deviceBlocks(maximal, {4, 5}, sharding({{}, {}}));
  REQUIRE(blocks.size() == 1);
  CHECK(blocks[0].device == 3);
  CHECK(blocks[0].start == std::vector<int64_t>{0, 0});
  CHECK(blocks[0].extent == std::vector<int64_t>{4, 5});

  std::vector<DeviceBlock> scalar = deviceBlocks(maximal, {}, sharding({}));
  REQUIRE(scalar.size() == 1);
  CHECK(scalar[0].device == 3);
  CHECK(scalar[0].start.empty());

  std::vector<DeviceBlock> empty = deviceBlocks(makeMesh({}), {2}, sharding({{}}));
  REQUIRE(empty.size() == 1);
  CHECK(empty[0].device == 0);
  CHECK(empty[0].extent == std::vector<int64_t>{2});
}

TEST_CASE("layout: a sharding with fewer dims leaves the rest unsharded", "[layout]") {
  Mesh m = makeMesh({{"x", 2}});
  auto blocks = blocksByDevice(m, {4, 6}, sharding({{full("x")}}));
  CHECK(blocks[1] == Held{{2, 0}, {2, 6}});
}

TEST_CASE("layout: JAX-style types", "[layout]") {
  TensorType t{{8, 16}, DType::F32};
  CHECK(jaxType(t, nullptr) == "f32[8, 16]");
  Sharding xyz = sharding({{full("x")}, {full("y"), full("z")}});
  CHECK(jaxType(t, &xyz) == "f32[8@x, 16@{y,z}]");
  Sharding subAxes = sharding({{sub("x", 2, 2)}, {}});
  CHECK(jaxType(t, &subAxes) == "f32[8@x:(2)2, 16]");
  Sharding open = sharding({{}, {}});
  open.dims[1].open = true;
  CHECK(jaxType(TensorType{{4, 4}, DType::I32}, &open) == "i32[4, 4]");
  CHECK(jaxType(TensorType{{}, DType::F64}, nullptr) == "f64[]");
  Sharding rank0 = sharding({});
  CHECK(jaxType(TensorType{{}, DType::I1}, &rank0) == "i1[]");
}

TEST_CASE("visualize: edge cases draw or say why not", "[layout][visualize]") {
  VisualizeOptions plain;
  Mesh x4 = makeMesh({{"x", 4}});
  // Rank 0: one box with every device.
  std::string scalar = visualizeSharding(x4, TensorType{{}, DType::F32}, sharding({}), plain);
  CHECK(scalar.find("0-3") != std::string::npos);
  // A zero-size dim: every block is empty, so shaded.
  std::string zero =
      visualizeSharding(x4, TensorType{{0, 4}, DType::F32}, sharding({{full("x")}, {}}), plain);
  CHECK(zero.find("\u2591") != std::string::npos);
  CHECK(zero.find("dim 0") == std::string::npos); // 0 = 0+0+0+0 pads nothing
  // 5 on 4: the empty block is shaded and the note sums the extents.
  std::string five =
      visualizeSharding(x4, TensorType{{5}, DType::F32}, sharding({{full("x")}}), plain);
  CHECK(five.find("\u2591 3 \u2591") != std::string::npos);
  CHECK(five.find("dim 0: 5 = 2+2+1+0 (3 padded)") != std::string::npos);
  // Too many blocks along a drawn dim, or leading-dim pictures beyond 16.
  Mesh x128 = makeMesh({{"x", 128}});
  CHECK(visualizeSharding(x128, TensorType{{128}, DType::F32}, sharding({{full("x")}}), plain) ==
        "(dim 0 has 128 blocks: too many to draw)\n");
  std::string lead = visualizeSharding(x128, TensorType{{128, 2, 2}, DType::F32},
                                       sharding({{full("x")}, {}, {}}), plain);
  CHECK(lead.find("[dim0 block 15/128]") != std::string::npos);
  CHECK(lead.find("[dim0 block 16/128]") == std::string::npos);
  CHECK(lead.find("(112 more blocks of the leading dims not drawn)") != std::string::npos);
  // Long device lists are shortened.
  Mesh xy = makeMesh({{"x", 64}, {"y", 2}});
  std::string strided =
      visualizeSharding(xy, TensorType{{4}, DType::F32}, sharding({{full("y")}}), plain);
  CHECK(strided.find("0,2,...,126 (64 devices)") != std::string::npos);
  // An axis the mesh lacks (unverified IR) draws as unsharded.
  std::string unknown =
      visualizeSharding(x4, TensorType{{4}, DType::F32}, sharding({{full("nope")}}), plain);
  CHECK(unknown.find("0-3") != std::string::npos);
  // Colour: one background per block.
  VisualizeOptions colour;
  colour.color = true;
  std::string coloured =
      visualizeSharding(x4, TensorType{{4}, DType::F32}, sharding({{full("x")}}), colour);
  CHECK(coloured.find("\x1b[44m") != std::string::npos);
  CHECK(coloured.find("\x1b[42m") != std::string::npos);
}
