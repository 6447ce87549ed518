// Unit tests for buffer reuse by liveness (backend/llvm/BufferPlan.h,
// KernelPlan.h): the arena placement never lets two buffers that are live at
// the same step share a byte, reuses memory when live ranges are disjoint,
// and the kernel plan sees a fused value's reads where its consumer runs.
#include "CompileForTest.h"
#include "TestHelpers.h"

#include "backend/llvm/BufferPlan.h"
#include "backend/llvm/KernelPlan.h"
#include "pipeline/Pipeline.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

using namespace shardc;
using namespace shardc::llvmgen;

namespace {

bool liveTogether(const BufferRequest &a, const BufferRequest &b) {
  return a.firstStep <= b.lastStep && b.firstStep <= a.lastStep;
}

void checkPlan(const std::vector<BufferRequest> &requests, const ArenaPlan &plan) {
  REQUIRE(plan.offsets.size() == requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    CHECK(plan.offsets[i] % kArenaAlignment == 0);
    CHECK(plan.offsets[i] + requests[i].bytes <= plan.bytes);
    for (size_t j = i + 1; j < requests.size(); ++j) {
      if (!liveTogether(requests[i], requests[j]) || requests[i].bytes == 0 ||
          requests[j].bytes == 0)
        continue;
      bool disjoint = plan.offsets[i] + requests[i].bytes <= plan.offsets[j] ||
                      plan.offsets[j] + requests[j].bytes <= plan.offsets[i];
      CHECK(disjoint);
    }
  }
}

} // namespace

TEST_CASE("arena: buffers live at the same time never share bytes (random requests)", "[llvm]") {
  std::mt19937_64 random(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<BufferRequest> requests(1 + random() % 40);
    for (BufferRequest &r : requests) {
      r.bytes = static_cast<int64_t>(random() % 5000);
      r.firstStep = static_cast<int64_t>(random() % 30);
      r.lastStep = r.firstStep + static_cast<int64_t>(random() % 10);
    }
    ArenaPlan plan = planArena(requests);
    checkPlan(requests, plan);
    int64_t total = 0;
    for (const BufferRequest &r : requests)
      total += (r.bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
    CHECK(plan.bytes <= total);
  }
}

TEST_CASE("arena: a chain of temporaries reuses two buffers", "[llvm]") {
  // v0 -> v1 -> v2 -> ... each read only by the next: two are live at once.
  std::vector<BufferRequest> requests;
  for (int64_t i = 0; i < 10; ++i)
    requests.push_back({1024, i, i + 1});
  ArenaPlan plan = planArena(requests);
  checkPlan(requests, plan);
  CHECK(plan.bytes == 2 * 1024);
}

namespace {

/// The value of the manual body whose name starts with `name` + "_".
const Value *bodyValue(const Block &body, const std::string &name) {
  for (const auto &op : body.ops)
    for (const auto &r : op->results)
      if (r->name.rfind(name + "_", 0) == 0)
        return r.get();
  FAIL("no value " << name);
  return nullptr;
}

} // namespace

TEST_CASE("kernel plan: fused values hold no buffer; their reads keep leaves alive", "[llvm]") {
  // %e and %s fuse into %r's loop: only %a (an input), %r and %m are stored,
  // and %a's storage is the input's, not the arena's.
  std::unique_ptr<Module> module = shardc::testing::compileForTest("plan.shd", R"(
@mesh = <["x"=2]>
func @main(%a: tensor<8x4xf32> sharding<@mesh, [{"x"}, {}]>)
    -> (tensor<8x4xf32> sharding<@mesh, [{"x"}, {}]>, tensor<8x4xf32> sharding<@mesh, [{"x"}, {}]>) {
  %e = exp %a : tensor<8x4xf32>
  %s = add %e, %a : tensor<8x4xf32>
  %r = mul %s, %s : tensor<8x4xf32>
  %m = neg %r : tensor<8x4xf32>
  return %r, %m
}
)",
                                                                   "spmd");
  REQUIRE(module);
  const Function &main = *module->findFunction("main");
  KernelPlan plan(*module, main);
  const Block &body = *main.body.ops.front()->body;
  CHECK(plan.inputIndexOf(body.args[0].get()) == 0);
  CHECK(plan.hasStorage(bodyValue(body, "r")));
  CHECK(plan.hasStorage(bodyValue(body, "m")));
  CHECK_FALSE(plan.hasStorage(bodyValue(body, "e")));
  // %r and %m are the results: each is written in its output buffer.
  CHECK(plan.outputIndexOf(bodyValue(body, "r")) == 0);
  CHECK(plan.outputIndexOf(bodyValue(body, "m")) == 1);
}

TEST_CASE("kernel plan: a result is computed in its output buffer unless it cannot be", "[llvm]") {
  // Result 0 is the parameter itself (its storage is the input buffer);
  // results 1 and 2 are one value (one storage: output 1, copied to 2);
  // %t (a matmul's result) is a temporary in the arena, read by %r.
  std::unique_ptr<Module> module = shardc::testing::compileForTest("outputs.shd", R"(
@mesh = <["x"=2]>
func @main(%a: tensor<8x4xf32> sharding<@mesh, [{"x"}, {}]>, %w: tensor<4x4xf32>)
    -> (tensor<8x4xf32> sharding<@mesh, [{"x"}, {}]>, tensor<8x4xf32> sharding<@mesh, [{"x"}, {}]>,
        tensor<8x4xf32> sharding<@mesh, [{"x"}, {}]>) {
  %t = matmul %a, %w : tensor<8x4xf32>
  %r = exp %t : tensor<8x4xf32>
  return %a, %r, %r
}
)",
                                                                   "spmd");
  REQUIRE(module);
  const Function &main = *module->findFunction("main");
  KernelPlan plan(*module, main);
  const Block &body = *main.body.ops.front()->body;
  CHECK(plan.inputIndexOf(body.args[0].get()) == 0);
  CHECK(plan.outputIndexOf(body.args[0].get()) == -1);
  CHECK(plan.outputIndexOf(bodyValue(body, "r")) == 1);
  CHECK(plan.outputIndexOf(bodyValue(body, "t")) == -1);
  CHECK(plan.arenaOffset(bodyValue(body, "t")) == 0);
  CHECK(plan.arenaBytes() == 4 * 4 * 4);
}

TEST_CASE("arena: a chain of same-size values fits in two buffers whatever the request order",
          "[llvm]") {
  // v_i is written at step i and read at step i + 1 (v_5 until the end).
  std::vector<BufferRequest> chain;
  for (int64_t i = 1; i <= 5; ++i)
    chain.push_back(BufferRequest{4096, i, i == 5 ? 9 : i + 1});
  std::vector<size_t> order{0, 1, 2, 3, 4};
  do {
    std::vector<BufferRequest> requests;
    for (size_t i : order)
      requests.push_back(chain[i]);
    ArenaPlan plan = planArena(requests);
    checkPlan(requests, plan);
    CHECK(plan.bytes == 2 * 4096);
  } while (std::next_permutation(order.begin(), order.end()));
}
