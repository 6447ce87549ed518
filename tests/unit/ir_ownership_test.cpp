// Unit tests of how the IR hands out and keeps its objects: an op's regions
// (an inline list, in execution order) and the global ops partitioning
// replaces, which the module keeps until it dies.
#include "CompileForTest.h"
#include "pipeline/Pipeline.h"

#include <catch2/catch.hpp>

#include <set>
#include <string>

using namespace shardc;

namespace {

/// `text` compiled through `emit` (empty: the checks only).
std::unique_ptr<Module> compiled(const std::string &text, std::string_view emit) {
  return shardc::testing::compileForTest("ir_ownership.shd", text, emit);
}

const char *const kLoops = R"(
func @main(%x: tensor<4xf32>, %p: tensor<i1>) -> tensor<4xf32> {
  %zero = constant dense<0> : tensor<i64>
  %cap = constant dense<3> : tensor<i64>
  %one = constant dense<1> : tensor<i64>
  %y, %n = while carry(%v = %x, %k = %zero) cond {
    %more = lt %k, %cap
    return %more
  } do {
    %v2 = neg %v
    %k2 = add %k, %one
    return %v2, %k2
  } : tensor<4xf32>, tensor<i64>
  %r = if %p {
    %t = neg %y
    return %t
  } else {
    return %y
  } : tensor<4xf32>
  return %r
}
)";

} // namespace

TEST_CASE("an op's regions come in execution order", "[ir]") {
  std::unique_ptr<Module> module = compiled(kLoops, "");
  const Function *main = module->findFunction("main");
  REQUIRE(main);
  const Op *loop = nullptr, *branch = nullptr, *constant = nullptr;
  for (const auto &op : main->body.ops) {
    if (op->kind == OpKind::While)
      loop = op.get();
    else if (op->kind == OpKind::If)
      branch = op.get();
    else if (op->kind == OpKind::Constant && !constant)
      constant = op.get();
  }
  REQUIRE(loop);
  REQUIRE(branch);
  REQUIRE(constant);

  RegionList loopRegions = loop->regions();
  REQUIRE(loopRegions.size() == 2);
  CHECK(loopRegions[0] == loop->cond.get()); // cond before body
  CHECK(loopRegions[1] == loop->body.get());

  RegionList branchRegions = branch->regions();
  REQUIRE(branchRegions.size() == 2);
  CHECK(branchRegions[0] == branch->body.get()); // then before else
  CHECK(branchRegions[1] == branch->elseBody.get());

  RegionList none = constant->regions();
  CHECK(none.empty());
  CHECK(none.begin() == none.end());

  // walkOps visits each op before the ops of its regions, cond first.
  std::vector<OpKind> order;
  walkOps(main->body, [&](Op &op) { order.push_back(op.kind); });
  std::vector<OpKind> expected = {OpKind::Constant, OpKind::Constant, OpKind::Constant,
                                  OpKind::While,    OpKind::Lt,       OpKind::Neg,
                                  OpKind::Add,      OpKind::If,       OpKind::Neg};
  CHECK(order == expected);
}

TEST_CASE("partitioning leaves the global ops it replaced to the module", "[ir]") {
  std::unique_ptr<Module> module = compiled(R"(
@mesh = <["x"=2, "y"=4]>
func @main(%x: tensor<64x128xf32> sharding<@mesh, [{"x"}, {}]>,
           %w: tensor<128x512xf32> sharding<@mesh, [{}, {"y"}]>) -> tensor<64x512xf32> {
  %h = matmul %x, %w
  %a = tanh %h
  return %a
}
)",
                                            "spmd");
  // The body is now one manual_computation over the mesh...
  const Function *main = module->findFunction("main");
  REQUIRE(main);
  REQUIRE(main->body.ops.size() == 1);
  CHECK(main->body.ops[0]->kind == OpKind::ManualComputation);
  // ...and the global matmul and tanh are still alive, with their values
  // (freed with the module, not during the pass).
  std::set<std::string> retired;
  for (const auto &op : module->retiredOps)
    for (const auto &r : op->results)
      retired.insert(std::string(op->name()) + " %" + r->name);
  CHECK(retired == std::set<std::string>{"matmul %h", "tanh %a"});
}
