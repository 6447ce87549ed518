// Unit tests for the kernel plan of control flow (backend/llvm/KernelPlan.h):
// values read inside a loop keep their bytes until the loop's last step, the
// carried storage and an if's results share bytes with nothing in their
// regions, a body returning another carried value copies through a
// temporary, and values read inside a region are materialized.
#include "CompileForTest.h"
#include "TestHelpers.h"

#include "backend/llvm/KernelPlan.h"
#include "pipeline/Pipeline.h"

#include <catch2/catch.hpp>

using namespace shardc;
using namespace shardc::llvmgen;

namespace {

/// The op of `block` (regions included) with a result named `name` + "_...".
const Value *find(const Block &block, const std::string &name) {
  const Value *found = nullptr;
  walkOps(block, [&](Op &op) {
    for (const auto &r : op.results)
      if (r->name.rfind(name + "_", 0) == 0)
        found = r.get();
  });
  if (!found)
    FAIL("no value " << name);
  return found;
}

/// True when the arena bytes of `a` and `b` intersect.
bool overlap(const KernelPlan &plan, const Value *a, const Value *b) {
  auto bytes = [&](const Value *v) { return plan.localType(v).bytes(); };
  int64_t x = plan.arenaOffset(a), y = plan.arenaOffset(b);
  return x < y + bytes(b) && y < x + bytes(a);
}

const Op &firstOf(const Block &block, OpKind kind) {
  for (const auto &op : block.ops)
    if (op->kind == kind)
      return *op;
  FAIL("no such op");
  throw std::logic_error("unreachable");
}

} // namespace

TEST_CASE("kernel plan: a value read in a loop keeps its bytes until the loop ends", "[llvm]") {
  // %t is last read by the loop's first op: without the loop, %v and %x,
  // written after that read, could take its bytes; the next iteration reads
  // %t again. %c (elemental, read only inside the loop) is materialized.
  std::unique_ptr<Module> module = shardc::testing::compileForTest("loop_plan.shd", R"(
@mesh = <["x"=2]>
func @main(%a: tensor<8x4xf32> sharding<@mesh, [{"x"}, {}]>, %w: tensor<4x4xf32>)
    -> tensor<8x4xf32> sharding<@mesh, [{"x"}, {}]> {
  %r = manual_computation (%a, %w) in_shardings=[sharding<@mesh, [{"x"}, {}]>, sharding<@mesh, [{}, {}]>]
      out_shardings=[sharding<@mesh, [{"x"}, {}]>] manual_axes={"x"}
      (%la: tensor<4x4xf32>, %lw: tensor<4x4xf32>) {
    %t = matmul %la, %lw : tensor<4x4xf32>
    %c = exp %la : tensor<4x4xf32>
    %y = for %i = 0 to 4 carry(%h = %la) {
      %u = add %h, %t : tensor<4x4xf32>
      %v = matmul %u, %lw : tensor<4x4xf32>
      %x = mul %v, %c : tensor<4x4xf32>
      %z = matmul %x, %lw : tensor<4x4xf32>
      return %z
    } : tensor<4x4xf32>
    %o = neg %y : tensor<4x4xf32>
    return %o
  } : tensor<8x4xf32>
  return %r
}
)",
                                                                   "spmd");
  REQUIRE(module);
  const Function &main = *module->findFunction("main");
  KernelPlan plan(*module, main);
  const Block &body = *main.body.ops.front()->body;
  const Op &loop = firstOf(body, OpKind::For);
  const Value *t = find(body, "t"), *c = find(body, "c");
  const Value *h = KernelPlan::carriedStorage(loop, 0);
  CHECK(plan.hasStorage(c));
  for (const char *inner : {"u", "v", "x", "z"}) {
    INFO(inner);
    const Value *v = find(*loop.body, inner);
    REQUIRE(plan.hasStorage(v));
    CHECK_FALSE(overlap(plan, t, v));
    CHECK_FALSE(overlap(plan, c, v));
    if (std::string(inner) != "z")
      CHECK_FALSE(overlap(plan, h, v));
  }
  // %h is last read by %u: the returned %z is written straight into it.
  CHECK(plan.storageOf(find(*loop.body, "z")) == h);
  CHECK(plan.storageOf(loop.result()) == h);
  CHECK(plan.copyTemporary(loop, 0) == nullptr);
}

TEST_CASE("kernel plan: a swap of carried values copies through a temporary", "[llvm]") {
  std::unique_ptr<Module> module = shardc::testing::compileForTest("swap_plan.shd", R"(
@mesh = <["x"=2]>
func @main(%a: tensor<8xf32> sharding<@mesh, [{"x"}]>, %b: tensor<8xf32> sharding<@mesh, [{"x"}]>)
    -> tensor<8xf32> sharding<@mesh, [{"x"}]> {
  %r = manual_computation (%a, %b) in_shardings=[sharding<@mesh, [{"x"}]>, sharding<@mesh, [{"x"}]>]
      out_shardings=[sharding<@mesh, [{"x"}]>] manual_axes={"x"}
      (%la: tensor<4xf32>, %lb: tensor<4xf32>) {
    %p, %q, %s = for %i = 0 to 3 carry(%u = %la, %w = %lb, %k = %la) {
      %k2 = add %k, %u : tensor<4xf32>
      return %w, %u, %k2
    } : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
    %o = add %p, %q : tensor<4xf32>
    %o2 = add %o, %s : tensor<4xf32>
    return %o2
  } : tensor<8xf32>
  return %r
}
)",
                                                                   "spmd");
  REQUIRE(module);
  const Function &main = *module->findFunction("main");
  KernelPlan plan(*module, main);
  const Op &loop = firstOf(*main.body.ops.front()->body, OpKind::For);
  REQUIRE(plan.copyTemporary(loop, 0) != nullptr);
  REQUIRE(plan.copyTemporary(loop, 1) != nullptr);
  CHECK(plan.copyTemporary(loop, 2) == nullptr); // %k2 is no carried value
  for (size_t i = 0; i < 2; ++i)
    for (size_t j = 0; j < 3; ++j)
      CHECK_FALSE(overlap(plan, plan.copyTemporary(loop, i), KernelPlan::carriedStorage(loop, j)));
  CHECK_FALSE(overlap(plan, plan.copyTemporary(loop, 0), plan.copyTemporary(loop, 1)));
}

TEST_CASE("kernel plan: an if's results share bytes with nothing in its branches", "[llvm]") {
  // The then-branch writes %r at its end; the else-branch's %e and %g must
  // not take %r's bytes (the plan cannot know which branch runs); nor when
  // nothing reads the result after the if (%unused).
  std::unique_ptr<Module> module = shardc::testing::compileForTest("if_plan.shd", R"(
@mesh = <["x"=2]>
func @main(%a: tensor<8x4xf32> sharding<@mesh, [{"x"}, {}]>, %w: tensor<4x4xf32>, %p: tensor<i1>)
    -> tensor<8x4xf32> sharding<@mesh, [{"x"}, {}]> {
  %r = manual_computation (%a, %w, %p)
      in_shardings=[sharding<@mesh, [{"x"}, {}]>, sharding<@mesh, [{}, {}]>, sharding<@mesh, []>]
      out_shardings=[sharding<@mesh, [{"x"}, {}]>] manual_axes={"x"}
      (%la: tensor<4x4xf32>, %lw: tensor<4x4xf32>, %lp: tensor<i1>) {
    %y = if %lp {
      %d = matmul %la, %lw : tensor<4x4xf32>
      return %d
    } else {
      %e = matmul %lw, %la : tensor<4x4xf32>
      %g = matmul %e, %lw : tensor<4x4xf32>
      return %g
    } : tensor<4x4xf32>
    %unused = if %lp {
      %d2 = matmul %la, %lw : tensor<4x4xf32>
      return %d2
    } else {
      %e2 = matmul %lw, %la : tensor<4x4xf32>
      %g2 = matmul %e2, %lw : tensor<4x4xf32>
      return %g2
    } : tensor<4x4xf32>
    %o = matmul %y, %lw : tensor<4x4xf32>
    return %o
  } : tensor<8x4xf32>
  return %r
}
)",
                                                                   "spmd");
  REQUIRE(module);
  const Function &main = *module->findFunction("main");
  KernelPlan plan(*module, main);
  for (const auto &op : main.body.ops.front()->body->ops) {
    if (op->kind != OpKind::If)
      continue;
    for (const Block *region : {op->body.get(), op->elseBody.get()})
      for (const auto &inner : region->ops)
        CHECK_FALSE(overlap(plan, op->result(), inner->result()));
  }
}

TEST_CASE("kernel plan: a returned value is written into its carried storage only when "
          "nothing reads that storage from then on",
          "[llvm]") {
  // In each loop the returned value's op is the last reader of %h or comes
  // after it (in place), or %h is still read from there on (a copy): by the
  // op itself (%b), through a fused elemental value read later (%d via %f),
  // by a later op (%g), inside a later region (%q), or by another returned
  // value (%s2 returns %s).
  std::unique_ptr<Module> module = shardc::testing::compileForTest("in_place_plan.shd", R"(
@mesh = <["x"=2]>
func @main(%a: tensor<8x4xf32> sharding<@mesh, [{"x"}, {}]>, %w: tensor<4x4xf32>)
    -> tensor<8x4xf32> sharding<@mesh, [{"x"}, {}]> {
  %r = manual_computation (%a, %w) in_shardings=[sharding<@mesh, [{"x"}, {}]>, sharding<@mesh, [{}, {}]>]
      out_shardings=[sharding<@mesh, [{"x"}, {}]>] manual_axes={"x"}
      (%la: tensor<4x4xf32>, %lw: tensor<4x4xf32>) {
    %y1 = for %i = 0 to 3 carry(%h = %la) {
      %m = matmul %h, %lw : tensor<4x4xf32>
      %n = tanh %m : tensor<4x4xf32>
      return %n
    } : tensor<4x4xf32>
    %y2 = for %i = 0 to 3 carry(%h = %y1) {
      %b = matmul %h, %lw : tensor<4x4xf32>
      return %b
    } : tensor<4x4xf32>
    %y3 = for %i = 0 to 3 carry(%h = %y2) {
      %f = neg %h : tensor<4x4xf32>
      %d = matmul %lw, %lw : tensor<4x4xf32>
      %e = add %d, %f : tensor<4x4xf32>
      return %d
    } : tensor<4x4xf32>
    %y4 = for %i = 0 to 3 carry(%h = %y3) {
      %g1 = matmul %lw, %lw : tensor<4x4xf32>
      %g = matmul %h, %g1 : tensor<4x4xf32>
      return %g1
    } : tensor<4x4xf32>
    %y5 = for %i = 0 to 3 carry(%h = %y4) {
      %q1 = matmul %lw, %lw : tensor<4x4xf32>
      %q = for %j = 0 to 2 carry(%k = %q1) {
        %q2 = add %k, %h : tensor<4x4xf32>
        return %q2
      } : tensor<4x4xf32>
      return %q1
    } : tensor<4x4xf32>
    %y6, %y7 = for %i = 0 to 3 carry(%s = %y5, %t = %y5) {
      %s1 = matmul %lw, %lw : tensor<4x4xf32>
      return %s1, %s
    } : tensor<4x4xf32>, tensor<4x4xf32>
    %o = add %y6, %y7 : tensor<4x4xf32>
    return %o
  } : tensor<8x4xf32>
  return %r
}
)",
                                                                   "spmd");
  REQUIRE(module);
  const Function &main = *module->findFunction("main");
  KernelPlan plan(*module, main);
  std::vector<const Op *> loops;
  for (const auto &op : main.body.ops.front()->body->ops)
    if (op->kind == OpKind::For)
      loops.push_back(op.get());
  REQUIRE(loops.size() == 6);
  auto inPlace = [&](const Op *loop, size_t i) {
    return plan.storageOf(loop->body->returned[i]) == KernelPlan::carriedStorage(*loop, i);
  };
  CHECK(inPlace(loops[0], 0));       // %n: %h's last reader is %m
  CHECK_FALSE(inPlace(loops[1], 0)); // %b reads %h itself
  CHECK_FALSE(inPlace(loops[2], 0)); // %e reads %h through the fused %f
  CHECK_FALSE(inPlace(loops[3], 0)); // %g reads %h after %g1
  CHECK_FALSE(inPlace(loops[4], 0)); // the inner loop reads %h
  CHECK_FALSE(inPlace(loops[5], 0)); // %t's new value is %s's old one
  // A value not written in place keeps bytes of its own, apart from %h.
  CHECK_FALSE(overlap(plan, loops[1]->body->returned[0], KernelPlan::carriedStorage(*loops[1], 0)));
}
