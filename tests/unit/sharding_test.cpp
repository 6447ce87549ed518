// Unit tests for the sharding arithmetic of ir/Sharding.h: meshes and device
// order, sub-axes (overlap, merge), shard counts and local (padded) shapes,
// and the canonical order of replicated axes. Also the verifier on IR that
// the parser never builds.
#include "ir/Sharding.h"
#include "passes/Passes.h"

#include "tests/unit/TestHelpers.h"

#include <catch2/catch.hpp>

using namespace shardc;

namespace {

using namespace shardc::testing;

DimSharding dim(std::vector<AxisRef> axes) {
  DimSharding d;
  d.axes = std::move(axes);
  return d;
}

} // namespace

TEST_CASE("mesh device count, axes and kinds", "[sharding][mesh]") {
  Mesh xyz = makeMesh({{"x", 2}, {"y", 4}, {"z", 2}});
  CHECK(xyz.deviceCount() == 16);
  REQUIRE(xyz.findAxis("y") != nullptr);
  CHECK(xyz.findAxis("y")->size == 4);
  CHECK(xyz.findAxis("w") == nullptr);
  CHECK(xyz.axisIndex("x") == 0);
  CHECK(xyz.axisIndex("z") == 2);
  CHECK(xyz.axisIndex("w") == -1);
  CHECK(xyz.axisNames() == std::vector<std::string>{"x", "y", "z"});
  CHECK_FALSE(xyz.isEmpty());
  CHECK_FALSE(xyz.isMaximal());

  Mesh empty = makeMesh({});
  CHECK(empty.isEmpty());
  CHECK_FALSE(empty.isMaximal());
  CHECK(empty.deviceCount() == 1);

  Mesh maximal = makeMesh({}, {3});
  CHECK(maximal.isMaximal());
  CHECK_FALSE(maximal.isEmpty());
  CHECK(maximal.deviceAt(0) == 3);

  // A size-1 axis is legal and does not change the device count.
  CHECK(makeMesh({{"a", 4}, {"one", 1}}).deviceCount() == 4);
}

TEST_CASE("mesh deviceAt follows device_ids, else 0..N-1", "[sharding][mesh]") {
  Mesh iota = makeMesh({{"a", 4}, {"b", 2}});
  for (int64_t i = 0; i < 8; ++i)
    CHECK(iota.deviceAt(i) == i);

  Mesh reversed = makeMesh({{"a", 4}, {"b", 2}}, {7, 6, 5, 4, 3, 2, 1, 0});
  CHECK(reversed.deviceAt(0) == 7);
  CHECK(reversed.deviceAt(1) == 6);
  CHECK(reversed.deviceAt(7) == 0);

  // Shardy's spelling `<["a"=2, "b"=2], device_ids=[1, 0, 3, 2]>`: row-major,
  // so position (a=0, b=1) is linear index 1.
  Mesh swapped = makeMesh({{"a", 2}, {"b", 2}}, {1, 0, 3, 2});
  CHECK(swapped.deviceAt(0) == 1);
  CHECK(swapped.deviceAt(1) == 0);
  CHECK(swapped.deviceAt(2) == 3);
  CHECK(swapped.deviceAt(3) == 2);
}

TEST_CASE("axis refs print in the seed's notation", "[sharding][axis]") {
  CHECK(full("x").str() == "\"x\"");
  CHECK(sub("x", 2, 4).str() == "\"x\":(2)4");
  CHECK_FALSE(full("x").isSubAxis());
  CHECK(sub("x", 1, 2).isSubAxis());
  CHECK(full("x").effectivePreSize() == 1);
  CHECK(sub("x", 4, 2).effectivePreSize() == 4);
  CHECK(full("x").effectiveSize(8) == 8);
  CHECK(sub("x", 4, 2).effectiveSize(8) == 2);
  CHECK(sub("x", 2, 2).sameAs(sub("x", 2, 2)));
  CHECK_FALSE(sub("x", 2, 2).sameAs(sub("x", 2, 4)));
  CHECK_FALSE(sub("x", 1, 2).sameAs(full("x")));
  CHECK_FALSE(full("x").sameAs(full("y")));
}

TEST_CASE("sub-axes overlap when their pre-size ranges intersect", "[sharding][subaxis]") {
  // The seed's example: "x":(1)4 and "x":(2)4 overlap.
  CHECK(subaxis::overlaps(1, 4, 2, 4));
  CHECK(subaxis::overlaps(2, 4, 1, 4));
  // "y" of size 8 splits into (1)2, (2)2, (4)2: pairwise disjoint.
  CHECK_FALSE(subaxis::overlaps(1, 2, 2, 2));
  CHECK_FALSE(subaxis::overlaps(2, 2, 4, 2));
  CHECK_FALSE(subaxis::overlaps(1, 2, 4, 2));
  // Containment and identity overlap.
  CHECK(subaxis::overlaps(1, 8, 2, 2));
  CHECK(subaxis::overlaps(2, 2, 2, 2));
  // A full axis is (1)n: it overlaps every sub-axis of itself.
  CHECK(subaxis::overlaps(1, 16, 4, 2));
  // Adjacent but not overlapping, both directions.
  CHECK_FALSE(subaxis::overlaps(1, 4, 4, 2));
  CHECK_FALSE(subaxis::overlaps(4, 2, 1, 4));
}

TEST_CASE("sub-axes merge when one ends where the next starts", "[sharding][subaxis]") {
  // "x":(1)2 then "x":(2)2 is "x":(1)4; "x":(1)4 then "x":(4)2 is "x":(1)8.
  CHECK(subaxis::canMerge(1, 2, 2));
  CHECK(subaxis::canMerge(1, 4, 4));
  CHECK(subaxis::canMerge(2, 2, 4));
  // Not adjacent: a gap, an overlap, or the wrong order.
  CHECK_FALSE(subaxis::canMerge(1, 2, 4));
  CHECK_FALSE(subaxis::canMerge(1, 4, 2));
  CHECK_FALSE(subaxis::canMerge(2, 2, 1));
}

TEST_CASE("shard count multiplies a dim's axis sizes", "[sharding][local]") {
  Mesh mesh = makeMesh({{"x", 2}, {"y", 4}, {"z", 2}});
  CHECK(shardCount(dim({}), mesh) == 1);
  CHECK(shardCount(dim({full("x")}), mesh) == 2);
  CHECK(shardCount(dim({full("z"), full("y")}), mesh) == 8);
  CHECK(shardCount(dim({sub("y", 2, 2)}), mesh) == 2);
  CHECK(shardCount(dim({full("x"), sub("y", 1, 2)}), mesh) == 4);
}

TEST_CASE("local dim size is ceil(dim / shards)", "[sharding][local]") {
  // Divisible.
  CHECK(localDimSize(8, 1) == 8);
  CHECK(localDimSize(8, 2) == 4);
  CHECK(localDimSize(8, 8) == 1);
  // Non-divisible dims are legal and padded (the seed's 7x3x8 example).
  CHECK(localDimSize(7, 8) == 1);
  CHECK(localDimSize(3, 2) == 2);
  CHECK(localDimSize(8, 3) == 3);
  CHECK(localDimSize(10, 4) == 3);
  // A dim smaller than the shard count: one element per device, padded.
  CHECK(localDimSize(1, 4) == 1);
  CHECK(localDimSize(0, 4) == 0);
}

TEST_CASE("local shape of the seed's examples", "[sharding][local]") {
  Mesh xyz = makeMesh({{"x", 2}, {"y", 4}, {"z", 2}});

  // sharding<@mesh_xy, [{"x"}, {"z", "y"}]> : tensor<4x8xf32> -> tensor<2x1xf32>
  Sharding s;
  s.meshName = "m";
  s.dims = {dim({full("x")}), dim({full("z"), full("y")})};
  CHECK(localShape({4, 8}, s, xyz) == std::vector<int64_t>{2, 1});

  // sharding<@mesh_xyz, [{"x"}, {?}], replicated={"y"}> : tensor<4x8xf32> -> 2x8
  Sharding open;
  open.meshName = "m";
  open.dims = {dim({full("x")}), dim({})};
  open.dims[1].open = true;
  open.replicated = {full("y")};
  CHECK(localShape({4, 8}, open, xyz) == std::vector<int64_t>{2, 8});

  // @mesh_xyz = <["x"=2, "y"=8, "z"=2]>, [{"x"}, {"y":(2)2}] : 4x8 -> 2x4
  Mesh y8 = makeMesh({{"x", 2}, {"y", 8}, {"z", 2}});
  Sharding subs;
  subs.meshName = "m";
  subs.dims = {dim({full("x")}), dim({sub("y", 2, 2)})};
  CHECK(localShape({4, 8}, subs, y8) == std::vector<int64_t>{2, 4});

  // Non-divisible: <["x"=8, "y"=2, "z"=3]>, [{"x"}, {"y"}, {"z"}] : 7x3x8 -> 1x2x3
  Mesh odd = makeMesh({{"x", 8}, {"y", 2}, {"z", 3}});
  Sharding pad;
  pad.meshName = "m";
  pad.dims = {dim({full("x")}), dim({full("y")}), dim({full("z")})};
  CHECK(localShape({7, 3, 8}, pad, odd) == std::vector<int64_t>{1, 2, 3});

  // Rank 0 stays rank 0.
  Sharding scalar;
  scalar.meshName = "m";
  CHECK(localShape({}, scalar, xyz).empty());
}

TEST_CASE("replicated axes sort into mesh order", "[sharding][replicated]") {
  // The seed: mesh <["c"=2, "a"=2, "b"=2]>, {"a", "c"} is written {"c", "a"}.
  Mesh cab = makeMesh({{"c", 2}, {"a", 2}, {"b", 2}});
  std::vector<AxisRef> axes = {full("a"), full("c")};
  canonicalizeReplicated(axes, cab);
  CHECK(names(axes) == std::vector<std::string>{"\"c\"", "\"a\""});

  axes = {full("b"), full("a"), full("c")};
  canonicalizeReplicated(axes, cab);
  CHECK(names(axes) == std::vector<std::string>{"\"c\"", "\"a\"", "\"b\""});

  // The seed: {"y":(4)2, "x", "y":(1)2} ~> {"x", "y":(1)2, "y":(4)2}.
  Mesh xyz = makeMesh({{"x", 2}, {"y", 8}, {"z", 2}});
  axes = {sub("y", 4, 2), full("x"), sub("y", 1, 2)};
  canonicalizeReplicated(axes, xyz);
  CHECK(names(axes) == std::vector<std::string>{"\"x\"", "\"y\":(1)2", "\"y\":(4)2"});

  // Already canonical lists are left alone.
  axes = {full("x"), sub("y", 2, 2), full("z")};
  canonicalizeReplicated(axes, xyz);
  CHECK(names(axes) == std::vector<std::string>{"\"x\"", "\"y\":(2)2", "\"z\""});

  axes.clear();
  canonicalizeReplicated(axes, xyz);
  CHECK(axes.empty());
}

TEST_CASE("replicated shardings of a rank", "[sharding]") {
  Sharding s = Sharding::replicatedOn("mesh", 3);
  CHECK(s.meshName == "mesh");
  REQUIRE(s.dims.size() == 3);
  for (const DimSharding &d : s.dims) {
    CHECK(d.axes.empty());
    CHECK(d.isEmptyClosed());
  }
  CHECK(s.replicated.empty());
  CHECK(s.isClosed());

  s.dims[1].open = true;
  CHECK_FALSE(s.isClosed());
  CHECK_FALSE(s.dims[1].isEmptyClosed());
}

// ---- verify-shardings on IR the parser never builds ------------------------
// The builder rejects `p-1` and `"x":(0)2` itself; the verifier still checks
// the IR invariants for IR made by passes.

namespace {

std::vector<std::string> verifyDecl(Sharding sharding, std::vector<int64_t> shape) {
  Module module;
  module.meshes.push_back(std::make_unique<Mesh>(makeMesh({{"a", 8}, {"b", 2}})));
  ShardedTypeDecl decl;
  decl.sharding = std::move(sharding);
  decl.type.shape = std::move(shape);
  module.typeDecls.push_back(std::move(decl));
  DiagnosticEngine diags;
  bool ok = verifyShardings(module, diags);
  std::vector<std::string> messages;
  for (const Diagnostic &d : diags.diagnostics())
    messages.push_back(d.message);
  CHECK(ok == messages.empty());
  return messages;
}

Sharding onMesh(std::vector<DimSharding> dims, std::vector<AxisRef> replicated = {}) {
  Sharding s;
  s.meshName = "m";
  s.dims = std::move(dims);
  s.replicated = std::move(replicated);
  return s;
}

} // namespace

TEST_CASE("verifier: negative priorities", "[verify]") {
  DimSharding d = dim({full("a")});
  d.priority = -1;
  CHECK(verifyDecl(onMesh({d}), {8}) ==
        std::vector<std::string>{"dim 0 - priority must be non-negative: p-1"});
}

TEST_CASE("verifier: sub-axis pre-size below 1", "[verify]") {
  CHECK(verifyDecl(onMesh({dim({sub("a", 0, 2)})}), {8}) ==
        std::vector<std::string>{"sub-axis pre-size must be at least 1: \"a\":(0)2"});
  CHECK(verifyDecl(onMesh({dim({sub("a", -1, 2)})}), {8}) ==
        std::vector<std::string>{"sub-axis pre-size must be at least 1: \"a\":(-1)2"});
}

TEST_CASE("verifier: legal shardings give no diagnostics", "[verify]") {
  CHECK(verifyDecl(onMesh({dim({full("a")}), dim({})}, {full("b")}), {7, 3}).empty());
  CHECK(verifyDecl(onMesh({dim({sub("a", 1, 2), sub("a", 4, 2)})}, {sub("a", 2, 2)}), {8}).empty());
}
