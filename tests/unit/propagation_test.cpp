// Unit tests for sharding propagation (passes/propagate/FactorPropagation.h):
// axis arithmetic, the projection of dim shardings onto factors (splitting
// axes into sub-axes by gcd) and back (merging them), and the per-factor
// decision on rules built by hand; the whole pass on parsed programs (closing,
// origins).
#include "frontend/Parser.h"
#include "passes/Passes.h"
#include "passes/propagate/FactorPropagation.h"

#include "tests/unit/TestHelpers.h"

#include <catch2/catch.hpp>

using namespace shardc;
using namespace shardc::propagation;

namespace {

using namespace shardc::testing;

using Names = std::vector<std::string>;

/// A sharding on "m" with the given dims (open when `open`).
Sharding sharding(std::vector<std::vector<AxisRef>> dims, bool open = false,
                  std::vector<AxisRef> replicated = {}) {
  Sharding s;
  s.meshName = "m";
  for (auto &axes : dims) {
    DimSharding d;
    d.axes = std::move(axes);
    d.open = open;
    s.dims.push_back(std::move(d));
  }
  s.replicated = std::move(replicated);
  return s;
}

ShardingRule rule(std::vector<int64_t> sizes, std::vector<FactorKind> kinds,
                  std::vector<TensorFactors> operands, std::vector<TensorFactors> results) {
  ShardingRule r;
  r.factorSizes = std::move(sizes);
  r.factorKinds = std::move(kinds);
  r.operands = std::move(operands);
  r.results = std::move(results);
  return r;
}

const auto P = FactorKind::PassThrough;
const auto R = FactorKind::Reduction;

auto both = [](int) { return Direction::Both; };

/// Projects every tensor of `r` (operands then results) and runs the
/// per-factor decision; returns the new dims of every tensor.
std::vector<std::vector<Names>> propagate(const ShardingRule &r,
                                          const std::vector<const Sharding *> &tensors,
                                          const Mesh &mesh,
                                          const std::vector<int64_t> &elements = {}) {
  Projection p;
  p.numOperands = r.operands.size();
  std::vector<const TensorFactors *> maps;
  for (const auto &t : r.operands)
    maps.push_back(&t);
  for (const auto &t : r.results)
    maps.push_back(&t);
  for (size_t t = 0; t < tensors.size(); ++t) {
    p.tensors.push_back(projectTensor(tensors[t], *maps[t], r, mesh, {}));
    p.tensors.back().elements = t < elements.size() ? elements[t] : 1;
  }
  propagateFactors(p, r, both, false, mesh);
  std::vector<std::vector<Names>> out;
  for (size_t t = 0; t < tensors.size(); ++t) {
    std::vector<Names> dims;
    for (auto &axes :
         projectBack(p.tensors[t], *maps[t], r, mesh, tensors[t] ? &tensors[t]->dims : nullptr))
      dims.push_back(names(axes));
    out.push_back(dims);
  }
  return out;
}

} // namespace

TEST_CASE("axis arithmetic: prefixes, containment, overlap", "[propagation]") {
  Mesh mesh = makeMesh({{"x", 8}, {"y", 2}});
  CHECK(isPrefixOf(sub("x", 1, 2), full("x"), mesh));
  CHECK(isPrefixOf(full("x"), full("x"), mesh));
  CHECK_FALSE(isPrefixOf(sub("x", 2, 2), full("x"), mesh));
  CHECK(contains(full("x"), sub("x", 2, 2), mesh));
  CHECK_FALSE(contains(sub("x", 1, 2), sub("x", 2, 2), mesh));
  CHECK(overlaps(sub("x", 1, 4), sub("x", 2, 2), mesh));
  CHECK_FALSE(overlaps(sub("x", 1, 2), sub("x", 2, 4), mesh));
  CHECK_FALSE(overlaps(full("x"), full("y"), mesh));
  // The part of "x" before "x":(4)2 is "x":(1)4; nothing of "x":(2)2 precedes "x".
  CHECK(prefixWithoutOverlap(full("x"), sub("x", 4, 2), mesh)->str() == "\"x\":(1)4");
  CHECK_FALSE(prefixWithoutOverlap(sub("x", 2, 2), full("x"), mesh));
  CHECK(makeAxis("x", 1, 8, mesh).str() == "\"x\"");
}

TEST_CASE("axis arithmetic: sub-axes of one decomposition coexist", "[propagation]") {
  Mesh mesh = makeMesh({{"a", 6}, {"x", 16}});
  // 6 = 2 * 3: the major 2 and the minor 3 coexist, the major 2 and the minor
  // 2 do not (6 is not 2 * k * 2), nor the major 2 and the major 3.
  CHECK(canCoexist(sub("a", 1, 2), sub("a", 2, 3), mesh));
  CHECK_FALSE(canCoexist(sub("a", 1, 2), sub("a", 3, 2), mesh));
  CHECK_FALSE(canCoexist(sub("a", 3, 2), sub("a", 1, 2), mesh));
  CHECK_FALSE(canCoexist(sub("a", 1, 2), sub("a", 1, 3), mesh));
  // Overlapping sub-axes of one decomposition coexist; a gap that is a
  // sub-axis too is fine; a full axis or another axis always coexists.
  CHECK(canCoexist(sub("x", 1, 4), sub("x", 2, 4), mesh));
  CHECK(canCoexist(sub("x", 1, 2), sub("x", 4, 2), mesh));
  CHECK(canCoexist(full("a"), sub("a", 3, 2), mesh));
  CHECK(canCoexist(sub("a", 1, 2), sub("x", 3, 2), mesh));
  // prefixWithoutOverlap gives nothing for sub-axes that cannot coexist.
  CHECK_FALSE(prefixWithoutOverlap(sub("a", 1, 2), sub("a", 3, 2), mesh));
  CHECK(prefixWithoutOverlap(sub("a", 1, 2), sub("a", 2, 3), mesh)->str() == "\"a\":(1)2");
}

TEST_CASE("axis lists: merging and prefix status", "[propagation]") {
  Mesh mesh = makeMesh({{"x", 4}, {"y", 2}});
  std::vector<AxisRef> axes;
  appendMerging(axes, sub("x", 1, 2), mesh);
  appendMerging(axes, sub("x", 2, 2), mesh);
  CHECK(names(axes) == Names{"\"x\""});
  appendMerging(axes, full("y"), mesh);
  CHECK(names(axes) == Names{"\"x\"", "\"y\""});

  CHECK(axisListPrefix({}, {full("x")}, mesh) == PrefixStatus::StrictPrefix);
  CHECK(axisListPrefix({full("x")}, {full("x")}, mesh) == PrefixStatus::Equal);
  CHECK(axisListPrefix({sub("x", 1, 2)}, {full("x"), full("y")}, mesh) ==
        PrefixStatus::StrictPrefix);
  CHECK(axisListPrefix({full("y")}, {full("x")}, mesh) == PrefixStatus::NotAPrefix);
}

TEST_CASE("projection splits an axis over two factors by gcd", "[propagation]") {
  // tensor<8> sharded {"x"} with x=4, dim mapped to [i=2, j=4].
  Mesh mesh = makeMesh({{"x", 4}});
  ShardingRule r = rule({2, 4}, {P, P}, {{{0, 1}}}, {{{0}, {1}}});
  Sharding s = sharding({{full("x")}});
  TensorProjection t = projectTensor(&s, r.operands[0], r, mesh, {});
  CHECK(names(t.factors[0].axes) == Names{"\"x\":(1)2"});
  CHECK(names(t.factors[1].axes) == Names{"\"x\":(2)2"});
  CHECK_FALSE(t.factors[0].minorMost);
  CHECK(t.factors[1].minorMost);
  // ... and merges them back.
  auto back = projectBack(t, r.operands[0], r, mesh, &s.dims);
  CHECK(names(back[0]) == Names{"\"x\""});
}

TEST_CASE("projection: several axes, non-divisible minor-most, overflow", "[propagation]") {
  Mesh mesh = makeMesh({{"x", 2}, {"y", 4}, {"z", 3}});
  // dim 16 over [i=4, j=4] sharded {"x", "y"}: i takes "x" and "y":(1)2.
  ShardingRule r = rule({4, 4}, {P, P}, {{{0, 1}}}, {});
  Sharding s = sharding({{full("x"), full("y")}});
  TensorProjection t = projectTensor(&s, r.operands[0], r, mesh, {});
  CHECK(names(t.factors[0].axes) == Names{"\"x\"", "\"y\":(1)2"});
  CHECK(names(t.factors[1].axes) == Names{"\"y\":(2)2"});
  CHECK(names(projectBack(t, r.operands[0], r, mesh, &s.dims)[0]) == Names{"\"x\"", "\"y\""});

  // dim 2 over a single factor sharded {"y"}=4: the minor-most factor takes
  // it although 4 does not divide 2 (padding).
  ShardingRule one = rule({2}, {P}, {{{0}}}, {});
  Sharding s4 = sharding({{full("y")}});
  CHECK(names(projectTensor(&s4, one.operands[0], one, mesh, {}).factors[0].axes) ==
        Names{"\"y\""});

  // dim 6 over [i=2, j=3] sharded {"z"}=3: 2 and 3 are coprime, "z" overflows
  // on i and j is closed; projecting back gives {"z"} again.
  ShardingRule six = rule({2, 3}, {P, P}, {{{0, 1}}}, {});
  Sharding sz = sharding({{full("z")}}, true);
  TensorProjection tz = projectTensor(&sz, six.operands[0], six, mesh, {});
  CHECK(tz.factors[0].axes.empty());
  CHECK(names(tz.factors[0].overflow) == Names{"\"z\""});
  CHECK(tz.factors[1].closed);
  CHECK_FALSE(canGrow(tz, 0, six, mesh));
  CHECK(names(projectBack(tz, six.operands[0], six, mesh, &sz.dims)[0]) == Names{"\"z\""});
}

TEST_CASE("projection: only the first unfilled factor of a dim can grow", "[propagation]") {
  Mesh mesh = makeMesh({{"x", 2}, {"y", 4}});
  ShardingRule r = rule({2, 4}, {P, P}, {{{0, 1}}}, {});
  TensorProjection empty = projectTensor(nullptr, r.operands[0], r, mesh, {});
  CHECK(canGrow(empty, 0, r, mesh));
  CHECK_FALSE(canGrow(empty, 1, r, mesh)); // i is not full yet
  Sharding s = sharding({{full("x")}}, true);
  TensorProjection half = projectTensor(&s, r.operands[0], r, mesh, {});
  CHECK(canGrow(half, 1, r, mesh)); // i = "x" is full
  Sharding closed = sharding({{full("x")}}, false);
  CHECK_FALSE(canGrow(projectTensor(&closed, r.operands[0], r, mesh, {}), 1, r, mesh));
}

TEST_CASE("factors: reshape split and merge with sub-axes", "[propagation]") {
  Mesh mesh = makeMesh({{"x", 4}});
  // 8 -> 2x4: ([ij])->([i], [j]).
  ShardingRule split = rule({2, 4}, {P, P}, {{{0, 1}}}, {{{0}, {1}}});
  Sharding in = sharding({{full("x")}});
  auto out = propagate(split, {&in, nullptr}, mesh);
  CHECK(out[1] == std::vector<Names>{{"\"x\":(1)2"}, {"\"x\":(2)2"}});

  // 2x4 -> 8, the reverse: the operand's sub-axes merge back into "x".
  ShardingRule merge = rule({2, 4}, {P, P}, {{{0}, {1}}}, {{{0, 1}}});
  Sharding parts = sharding({{sub("x", 1, 2)}, {sub("x", 2, 2)}});
  auto merged = propagate(merge, {&parts, nullptr}, mesh);
  CHECK(merged[1] == std::vector<Names>{{"\"x\""}});
}

TEST_CASE("factors: elementwise both ways, replicated axes block", "[propagation]") {
  Mesh mesh = makeMesh({{"x", 2}, {"y", 2}});
  ShardingRule add = rule({8, 8}, {P, P}, {{{0}, {1}}, {{0}, {1}}}, {{{0}, {1}}});
  Sharding a = sharding({{full("x")}, {}}, true);
  Sharding b = sharding({{}, {}}, true, {full("x")});
  auto out = propagate(add, {&a, &b, nullptr}, mesh);
  CHECK(out[0] == std::vector<Names>{{"\"x\""}, {}});
  CHECK(out[1] == std::vector<Names>{{}, {}}); // "x" is explicitly replicated on b
  CHECK(out[2] == std::vector<Names>{{"\"x\""}, {}});

  // Backward: only the result is sharded.
  Sharding c = sharding({{}, {full("y")}});
  auto back = propagate(add, {nullptr, nullptr, &c}, mesh);
  CHECK(back[0] == std::vector<Names>{{}, {"\"y\""}});
  CHECK(back[1] == std::vector<Names>{{}, {"\"y\""}});
}

TEST_CASE("factors: compatible axes extend a shorter sub-axis", "[propagation]") {
  Mesh mesh = makeMesh({{"x", 4}, {"y", 2}});
  ShardingRule id = rule({16}, {P}, {{{0}}, {{0}}}, {});
  Sharding a = sharding({{sub("x", 1, 2)}}, true);
  Sharding b = sharding({{full("x"), full("y")}}, true);
  auto out = propagate(id, {&a, &b}, mesh);
  CHECK(out[0] == std::vector<Names>{{"\"x\"", "\"y\""}});
  // Conflicting lists agree only on their common prefix.
  Sharding c = sharding({{full("y")}}, true);
  auto none = propagate(id, {&b, &c}, mesh);
  CHECK(none[0] == std::vector<Names>{{"\"x\"", "\"y\""}});
  CHECK(none[1] == std::vector<Names>{{"\"y\""}});
}

TEST_CASE("factors: matmul, k stays off the result, larger tensor wins", "[propagation]") {
  Mesh mesh = makeMesh({{"x", 2}, {"y", 4}});
  // ([i, k], [k, j]) -> ([i, j]), a 8x16, b 16x64, c 8x64.
  ShardingRule mm = rule({8, 64, 16}, {P, P, R}, {{{0}, {2}}, {{2}, {1}}}, {{{0}, {1}}});
  Sharding a = sharding({{full("x")}, {full("y")}}, true);
  Sharding b = sharding({{}, {}}, true);
  auto out = propagate(mm, {&a, &b, nullptr}, mesh, {128, 1024, 512});
  CHECK(out[1] == std::vector<Names>{{"\"y\""}, {}}); // k passes to b
  CHECK(out[2] == std::vector<Names>{{"\"x\""}, {}}); // but never to the result

  // Conflict: a wants "x" on i, b wants "x" on j; b is larger, so j wins.
  Sharding a2 = sharding({{full("x")}, {}});
  Sharding b2 = sharding({{}, {full("x")}});
  auto conflict = propagate(mm, {&a2, &b2, nullptr}, mesh, {128, 1024, 512});
  CHECK(conflict[2] == std::vector<Names>{{}, {"\"x\""}});
  // With a larger than b, i wins.
  auto other = propagate(mm, {&a2, &b2, nullptr}, mesh, {4096, 1024, 512});
  CHECK(other[2] == std::vector<Names>{{"\"x\""}, {}});
}

TEST_CASE("factors: closed dims never change, existing axes stay", "[propagation]") {
  Mesh mesh = makeMesh({{"x", 2}, {"y", 2}});
  ShardingRule id = rule({8, 8}, {P, P}, {{{0}, {1}}}, {{{0}, {1}}});
  Sharding a = sharding({{full("x")}, {full("y")}}, true);
  Sharding closed = sharding({{}, {}}, false);
  auto out = propagate(id, {&a, &closed}, mesh);
  CHECK(out[1] == std::vector<Names>{{}, {}});
  CHECK(out[0] == std::vector<Names>{{"\"x\""}, {"\"y\""}});
}

TEST_CASE("identity rule: one factor per dim, none for size 1", "[propagation]") {
  TensorType t;
  t.shape = {4, 1, 8};
  ShardingRule r = identityRule(t, 1, 1);
  CHECK(r.factorSizes == std::vector<int64_t>{4, 8});
  CHECK(r.operands[0] == TensorFactors{{0}, {}, {1}});
  CHECK(r.results[0] == r.operands[0]);
}

// ---- the whole pass on parsed programs ------------------------------------------

namespace {

/// A parsed, checked and propagated program.
struct Propagated {
  SourceFile file;
  DiagnosticEngine diags;
  std::unique_ptr<Module> module;
  ShardingOrigins origins;

  explicit Propagated(std::string text) : file("p.shd", std::move(text)) {
    module = parseModule(file, diags);
    REQUIRE(module);
    inferTypes(*module, diags);
    verifyShardings(*module, diags);
    REQUIRE_FALSE(diags.hasErrors());
    REQUIRE(propagateShardings(*module, diags, &origins));
  }

  const Value &value(const std::string &name) const {
    const Value *found = nullptr;
    for (const auto &f : module->functions) {
      for (const auto &arg : f->body.args)
        if (arg->name == name)
          found = arg.get();
      walkOps(f->body, [&](Op &op) {
        for (const auto &r : op.results)
          if (r->name == name)
            found = r.get();
      });
    }
    REQUIRE(found);
    return *found;
  }
};

} // namespace

TEST_CASE("origins: each axis points at the annotation it came from", "[propagation]") {
  Propagated p("@mesh = <[\"x\"=2, \"y\"=4]>\n"                                       // 1
               "func @main(%x: tensor<8x16xf32> sharding<@mesh, [{\"x\"}, {}]>,\n"    // 2
               "           %w: tensor<16x32xf32> sharding<@mesh, [{}, {\"y\"}p1]>)\n" // 3
               "    -> tensor<8x32xf32> {\n"                                          // 4
               "  %h = matmul %x, %w\n"                                               // 5
               "  %a = tanh %h\n"                                                     // 6
               "  return %a\n"
               "}\n");
  const Value &a = p.value("a");
  REQUIRE(a.sharding);
  CHECK(a.sharding->str() == "sharding<@mesh, [{\"x\"}, {\"y\"}]>");
  REQUIRE(p.origins.values.count(&a));
  const std::vector<DimOrigins> &dims = p.origins.values.at(&a);
  REQUIRE(dims.size() == 2);
  // "x" came from %x's annotation on line 2 in round 0 ...
  const AxisOrigin &x = dims[0].at("x");
  CHECK(x.loc.line == 2);
  CHECK(x.priority == 0);
  CHECK(x.propagated);
  // ... "y" from %w's on line 3, in round 1.
  const AxisOrigin &y = dims[1].at("y");
  CHECK(y.loc.line == 3);
  CHECK(y.priority == 1);
  // A written axis is recorded as written, with its own priority.
  const AxisOrigin &wy = p.origins.values.at(&p.value("w"))[1].at("y");
  CHECK_FALSE(wy.propagated);
  CHECK(wy.priority == 1);
  // The function result is recorded too.
  const ResultSpec &result = p.module->functions[0]->results[0];
  REQUIRE(p.origins.results.count(&result));
  CHECK(p.origins.results.at(&result)[1].at("y").loc.line == 3);
}

TEST_CASE("the pass closes every sharding and fills unreached values", "[propagation]") {
  Propagated p("@mesh = <[\"x\"=2]>\n"
               "func @main(%a: tensor<8xf32>, %b: tensor<8xf32> sharding<@mesh, [{?}]>)\n"
               "    -> tensor<8xf32> {\n"
               "  %c = add %a, %b\n"
               "  return %c\n"
               "}\n");
  for (const char *name : {"a", "b", "c"}) {
    const Value &v = p.value(name);
    REQUIRE(v.sharding);
    CHECK(v.sharding->isClosed());
    CHECK(v.sharding->str() == "sharding<@mesh, [{}]>");
  }
  CHECK(p.origins.values.count(&p.value("c")) == 0); // nothing was propagated to it
}
