// auto-shard on parsed programs: the strategies each op kind offers (counted
// in the report), the plans chosen for matmul, elementwise, reduce and
// reshape, byte sizes, and the cost model's JSON form.
#include "passes/auto_shard/AutoShard.h"
#include "passes/auto_shard/CostModel.h"

#include "frontend/Parser.h"
#include "passes/Passes.h"

#include <catch2/catch.hpp>

using namespace shardc;

namespace {

struct AutoSharded {
  SourceFile file;
  DiagnosticEngine diags;
  std::unique_ptr<Module> module;
  AutoShardReport report;

  explicit AutoSharded(std::string text, std::optional<int64_t> budget = std::nullopt)
      : file("a.shd", std::move(text)) {
    module = parseModule(file, diags);
    REQUIRE(module);
    inferTypes(*module, diags);
    verifyShardings(*module, diags);
    REQUIRE_FALSE(diags.hasErrors());
    AutoShardOptions options;
    options.memoryBudget = budget;
    options.report = &report;
    autoShard(*module, diags, options);
  }

  std::string sharding(const std::string &name) const {
    std::string found;
    Function &main = *module->findFunction("main");
    for (const auto &arg : main.body.args)
      if (arg->name == name && arg->sharding)
        found = arg->sharding->str();
    for (const auto &op : main.body.ops)
      for (const auto &r : op->results)
        if (r->name == name && r->sharding)
          found = r->sharding->str();
    return found;
  }
};

} // namespace

TEST_CASE("auto-shard: matmul strategies on one axis", "[auto_shard]") {
  // Parameters: 3 layouts each (rows, columns, replicated). The matmul: i, j
  // or k on "x", or none; k's partial sum all_reduced or reduce_scattered
  // into either dim: 6 strategies.
  AutoSharded a(R"(@mesh = <["x"=2]>
func @main(%a: tensor<64x32xf32>, %b: tensor<32x16xf32>) -> tensor<64x16xf32> {
  %c = matmul %a, %b
  return %c
})");
  REQUIRE_FALSE(a.diags.hasErrors());
  CHECK(a.report.nodes == 3);
  CHECK(a.report.strategies == 3 + 3 + 6);
  CHECK(a.report.status == "optimal");
  // Sharding the largest operand's rows costs nothing and halves the work.
  CHECK(a.sharding("a") == R"(sharding<@mesh, [{"x"}, {}]>)");
  CHECK(a.sharding("c") == R"(sharding<@mesh, [{"x"}, {}]>)");
}

TEST_CASE("auto-shard: elementwise ops follow, reduce and reshape compute sharded",
          "[auto_shard]") {
  AutoSharded a(R"(@mesh = <["x"=2, "y"=2]>
func @main(%a: tensor<8x16xf32>) -> tensor<8xf32> {
  %e = exp %a
  %t = tanh %e
  %r = reshape %t : tensor<8x4x4xf32>
  %s = reduce_sum %r {dims = [1, 2]} : tensor<8xf32>
  return %s
})");
  REQUIRE_FALSE(a.diags.hasErrors());
  // Followers have their leader's layout.
  CHECK(a.sharding("e") == a.sharding("a"));
  CHECK(a.sharding("t") == a.sharding("a"));
  // Nothing needs moving when every op splits the batch dim.
  CHECK(a.report.edges.empty());
  CHECK(a.sharding("s").find(R"({"x", "y"})") != std::string::npos);
}

TEST_CASE("auto-shard: reshape, transpose and binary ops with a constant follow", "[auto_shard]") {
  AutoSharded a(R"(@mesh = <["x"=2, "y"=2]>
func @main(%a: tensor<8x16xf32>) -> tensor<16x8xf32> {
  %c = constant dense<2.0> : tensor<f32>
  %m = mul %a, %c
  %r = reshape %m : tensor<8x4x4xf32>
  %r2 = reshape %r : tensor<8x16xf32>
  %t = transpose %r2 {perm = [1, 0]} : tensor<16x8xf32>
  %n = neg %t
  return %n
})");
  REQUIRE_FALSE(a.diags.hasErrors());
  // %m, %r, %r2 and %t take their strategy from their operand's layout
  // (their leader's), as %n does from %t: no choice of their own.
  CHECK(a.report.followers == 5);
  CHECK(a.report.status == "optimal");
  CHECK(a.report.edges.empty());
  CHECK(a.sharding("m") == a.sharding("a"));
  CHECK(a.sharding("r2") == a.sharding("a"));
}

TEST_CASE("auto-shard: budgets", "[auto_shard]") {
  const char *text = R"(@mesh = <["x"=2]>
func @main(%x: tensor<16x256xf32>, %w: tensor<256x256xf32>) -> tensor<16x256xf32> {
  %y = matmul %x, %w
  return %y
})";
  // A small batch: splitting the weight's columns halves the work and
  // moves nothing (the result stays split by columns).
  AutoSharded free(text);
  CHECK(free.sharding("w") == R"(sharding<@mesh, [{}, {"x"}]>)");
  CHECK(free.report.peakBytes == 16 * 256 * 4 + 256 * 128 * 4 + 16 * 128 * 4);
  AutoSharded tight(text, 160 * 1024);
  REQUIRE_FALSE(tight.diags.hasErrors());
  CHECK(tight.report.peakBytes <= 160 * 1024);
  AutoSharded impossible(text, 64 * 1024);
  CHECK(impossible.diags.hasErrors());
}

TEST_CASE("auto-shard: byte sizes", "[auto_shard]") {
  CHECK(parseByteSize("1024") == 1024);
  CHECK(parseByteSize("512KiB") == 512 * 1024);
  CHECK(parseByteSize("2GiB") == int64_t(2) << 30);
  CHECK(parseByteSize("3MB") == 3000000);
  CHECK_FALSE(parseByteSize("0"));
  CHECK_FALSE(parseByteSize("-5"));
  CHECK_FALSE(parseByteSize("12XB"));
  CHECK_FALSE(parseByteSize("MiB"));
}

TEST_CASE("auto-shard: the cost model's JSON form", "[auto_shard]") {
  using namespace shardc::autoshard;
  CostModel model = parseCostModel(
      R"({"flops": {"f64": 1e10}, "axes": {"y": {"latency": 1e-3, "bandwidth": 1e8}}})", "m.json");
  CHECK(model.flopRate(DType::F64) == 1e10);
  CHECK(model.flopRate(DType::F32) == defaultCostModel().flopRate(DType::F32));
  CHECK(model.axisCost({"x", "y"}).latency == 1e-3);
  CHECK(model.axisCost({"x", "y"}).bandwidth == 1e8);
  CostModel again = parseCostModel(costModelToJson(model), "again.json");
  CHECK(again.axisCost({"y"}).bandwidth == 1e8);
  CHECK(again.memoryBandwidth == model.memoryBandwidth);
  CHECK_THROWS_WITH(parseCostModel(R"({"flops": {"f16": 1}})", "m.json"),
                    Catch::Contains("m.json - \"flops\" has an unknown element type: \"f16\""));
  CHECK_THROWS_WITH(parseCostModel(R"({"axes": {"x": {"latency": "fast"}}})", "m.json"),
                    Catch::Contains("\"latency\" must be a positive number"));
  CHECK_THROWS_WITH(parseCostModel("{", "m.json"), Catch::Contains("m.json - not valid JSON"));
  CHECK_THROWS_WITH(parseCostModel(R"({"bandwidth": 1})", "m.json"),
                    Catch::Contains("unknown field: \"bandwidth\""));
}

TEST_CASE("auto-shard: the cost model prices collectives per kind", "[auto_shard]") {
  using namespace shardc::autoshard;
  CostModel model = parseCostModel(R"({"gemm_bandwidth": 4e9,
      "collective": {"all_to_all": {"bandwidth": 2e9}},
      "axes": {"x": {"latency": 1e-3, "bandwidth": 1e8, "all_reduce": {"bandwidth": 5e7}}}})",
                                   "m.json");
  CHECK(model.gemmBandwidth == 4e9);
  // A kind measured apart overrides the axis; its latency defaults to the axis's.
  CHECK(model.axisCost({"x"}, "all_reduce").bandwidth == 5e7);
  CHECK(model.axisCost({"x"}, "all_reduce").latency == 1e-3);
  CHECK(model.axisCost({"x"}, "all_gather").bandwidth == 1e8);
  // An axis without its own figures keeps the collective's kinds.
  CHECK(model.axisCost({"y"}, "all_to_all").bandwidth == 2e9);
  CHECK(model.axisCost({"y"}, "all_gather").bandwidth == model.collective.bandwidth);
  // Several axes: the slowest bandwidth of each axis's figure for the kind.
  CHECK(model.axisCost({"x", "y"}, "all_to_all").bandwidth == 1e8);
  CostModel again = parseCostModel(costModelToJson(model), "again.json");
  CHECK(again.axisCost({"x"}, "all_reduce").bandwidth == 5e7);
  CHECK(again.gemmBandwidth == 4e9);
  CHECK_THROWS_WITH(parseCostModel(R"({"axes": {"x": {"all_sum": {}}}})", "m.json"),
                    Catch::Contains("m.json \"axes\".\"x\" - unknown field: \"all_sum\""));
  CHECK_THROWS_WITH(
      parseCostModel(R"({"axes": {"x": {"all_reduce": {"bandwidth": -1}}}})", "m.json"),
      Catch::Contains("\"all_reduce\" - \"bandwidth\" must be a positive number"));
}

TEST_CASE("auto-shard: a contraction pays for its flops and the bytes it packs", "[auto_shard]") {
  // Megatron's first layer as written: per device 128x1024 times 1024x2048.
  // BLAS packs the operands, so their bytes add to the flops' time (taking
  // the slower of the two priced the data-parallel MLP below Megatron, which
  // measured 25% faster).
  AutoSharded plan(R"(@mesh = <["x"=2]>
func @main(%x: tensor<128x1024xf32> sharding<@mesh, [{}, {}]>,
           %w: tensor<1024x4096xf32> sharding<@mesh, [{}, {"x"}]>)
    -> tensor<128x4096xf32> sharding<@mesh, [{}, {"x"}]> {
  %y = matmul %x, %w
  return %y
}
)");
  REQUIRE_FALSE(plan.diags.hasErrors());
  using namespace shardc::autoshard;
  CostModel model = defaultCostModel();
  double flops = 2.0 * 128 * 1024 * 2048;
  double bytes = 4.0 * (128 * 1024 + 1024 * 2048 + 128 * 2048);
  double expected = flops / model.flopRate(DType::F32) + bytes / model.gemmBandwidth;
  const AutoShardOpRow *row = nullptr;
  for (const AutoShardOpRow &r : plan.report.ops)
    if (r.what == "%y = matmul")
      row = &r;
  REQUIRE(row);
  CHECK(row->compute == Approx(expected).epsilon(1e-9));
  CHECK(row->communication == 0);
}
