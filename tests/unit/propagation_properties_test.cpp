// Properties of propagate-shardings on random programs (issue 3): the
// propagated program verifies, propagating it again changes nothing, no
// written axis is ever removed, and the result does not depend on the order
// the ops are written in. The programs mix elementwise ops, matmul,
// transpose, sharding_constraint and manual_computation (with open and
// closed in/out shardings and body ops), each with random annotations.
#include "TestHelpers.h"
#include "frontend/Parser.h"
#include "ir/Printer.h"
#include "passes/Passes.h"
#include "passes/propagate/FactorPropagation.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace shardc;

namespace {

const char *const kAxes[] = {"x", "y", "z"};
const char *const kType = "tensor<8x8xf32>";

/// One value of a random program: how it is computed from earlier ones.
struct Node {
  std::string text;          // the statement, with $ for its name
  std::vector<int> operands; // earlier nodes (negative: parameter -1-i)
};

/// Random programs. A `consistent` one has no conflicts: every annotation
/// is a prefix of one target per orientation, [{"x", "y"}, {"z"}] or, after
/// a transpose, [{"z"}, {"x", "y"}]; only values of one orientation meet.
class RandomProgram {
public:
  RandomProgram(unsigned seed, bool consistent) : rng_(seed), consistent_(consistent) {
    for (int i = 0; i < 3; ++i) {
      orientation_.push_back(0);
      params_.push_back(chance(2) ? "" : " " + annotation(0, 1));
    }
    int count = 4 + pick(8);
    for (int i = 0; i < count; ++i)
      nodes_.push_back(node(i));
  }

  /// The program with its ops in a random topological order (`orderSeed`
  /// 0: as generated).
  std::string text(unsigned orderSeed) const {
    std::string out = "@mesh = <[\"x\"=2, \"y\"=2, \"z\"=2]>\n\nfunc @main(";
    for (size_t i = 0; i < params_.size(); ++i)
      out += fmt::format("{}%p{}: {}{}", i ? ", " : "", i, kType, params_[i]);
    out += fmt::format(") -> {} {{\n", kType);
    for (int n : order(orderSeed)) {
      std::string statement = nodes_[n].text;
      statement.replace(statement.find('$'), 1, fmt::format("%v{}", n));
      out += "  " + statement + "\n";
    }
    return out + fmt::format("  return %v{}\n}}\n", nodes_.size() - 1);
  }

private:
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  bool chance(int n) { return pick(n) == 0; }

  /// `sharding<@mesh, [...]>` over the axes not in `avoid`, each dim open
  /// with probability 1/`openOdds` (0: never).
  std::string sharding(std::set<std::string> avoid, int openOdds) {
    std::string dims;
    for (int d = 0; d < 2; ++d) {
      std::vector<std::string> axes;
      for (const char *a : kAxes)
        if (!avoid.count(a) && chance(4)) {
          axes.push_back(fmt::format("\"{}\"", a));
          avoid.insert(a);
        }
      if (openOdds && chance(openOdds))
        axes.push_back("?");
      dims += fmt::format("{}{{{}}}", d ? ", " : "", fmt::join(axes, ", "));
    }
    return fmt::format("sharding<@mesh, [{}]>", dims);
  }

  /// A sharding for a value of `orientation`: random, or (consistent) a
  /// prefix of the orientation's target in each dim.
  std::string annotation(int orientation, int openOdds) {
    if (!consistent_)
      return sharding({}, openOdds);
    std::vector<std::string> target[2] = {{"\"x\"", "\"y\""}, {"\"z\""}};
    if (orientation == 1)
      std::swap(target[0], target[1]);
    std::string dims;
    for (int d = 0; d < 2; ++d) {
      std::vector<std::string> axes(target[d].begin(),
                                    target[d].begin() + pick(3) % (target[d].size() + 1));
      if (openOdds && chance(openOdds))
        axes.push_back("?");
      dims += fmt::format("{}{{{}}}", d ? ", " : "", fmt::join(axes, ", "));
    }
    return fmt::format("sharding<@mesh, [{}]>", dims);
  }

  /// An earlier value (a node or a parameter; with `orientation`, one of
  /// that orientation when the program is consistent and there is one).
  std::string operand(int before, std::vector<int> &uses, int orientation = -1) {
    int n = pick(before + 3) - 3;
    if (consistent_ && orientation >= 0)
      for (int tries = 0; tries < 20 && orientationOf(n) != orientation; ++tries)
        n = pick(before + 3) - 3;
    if (consistent_ && orientation >= 0 && orientationOf(n) != orientation)
      n = uses.front();
    uses.push_back(n);
    return n < 0 ? fmt::format("%p{}", -1 - n) : fmt::format("%v{}", n);
  }

  int orientationOf(int n) const { return n < 0 ? 0 : orientation_[3 + n]; }

  Node node(int i) {
    Node node;
    std::string a = operand(i, node.operands);
    int orientation = orientationOf(node.operands.front());
    std::string result =
        chance(4) ? fmt::format(" : {} {}", kType, annotation(orientation, 0)) : "";
    switch (pick(consistent_ ? 6 : 7)) {
    case 0:
      node.text =
          fmt::format("$ = add {}, {}{}", a, operand(i, node.operands, orientation), result);
      break;
    case 1:
      node.text = fmt::format("$ = transpose {} {{perm = [1, 0]}}{}", a, result);
      orientation = 1 - orientation;
      if (!result.empty())
        node.text = fmt::format("$ = transpose {} {{perm = [1, 0]}} : {} {}", a, kType,
                                annotation(orientation, 0));
      break;
    case 2:
      node.text = fmt::format("$ = sharding_constraint {} {}", a, annotation(orientation, 2));
      break;
    case 3:
    case 4:
      node.text = manual(a, i, orientation);
      break;
    case 6:
      node.text = fmt::format("$ = matmul {}, {}{}", a, operand(i, node.operands), result);
      break;
    default:
      node.text = fmt::format("$ = tanh {}{}", a, result);
      break;
    }
    orientation_.push_back(orientation);
    return node;
  }

  /// A manual_computation over "x" with a few body ops. Random: "x" on dim
  /// 0 or 1 of its operand and of its result. Consistent: "x" where the
  /// orientation has it, the free axes a prefix of the target's.
  std::string manual(const std::string &operand, int i, int orientation) {
    int inDim = consistent_ ? orientation : pick(2);
    int outDim = consistent_ ? orientation : pick(2);
    auto inOut = [&](int dim) {
      std::string dims;
      for (int d = 0; d < 2; ++d) {
        std::vector<std::string> axes;
        if (d == dim)
          axes.push_back("\"x\"");
        if (chance(3))
          axes.push_back(consistent_ ? (d == dim ? "\"y\"" : "\"z\"")
                                     : fmt::format("\"{}\"", kAxes[1 + d]));
        if (chance(2))
          axes.push_back("?");
        dims += fmt::format("{}{{{}}}", d ? ", " : "", fmt::join(axes, ", "));
      }
      return fmt::format("sharding<@mesh, [{}]>", dims);
    };
    std::string local = inDim == 0 ? "tensor<4x8xf32>" : "tensor<8x4xf32>";
    std::string body = fmt::format("    %b{}_0 = tanh %l{}\n", i, i);
    if (chance(2)) {
      // Consistent: "z" is on the dim without "x".
      std::string dims = consistent_ && inDim == 1 ? "[{\"z\", ?}, {?}]" : "[{?}, {\"z\", ?}]";
      body +=
          fmt::format("    %b{}_0c = sharding_constraint %b{}_0 sharding<@mesh, {}>\n", i, i, dims);
    } else {
      body += fmt::format("    %b{}_0c = add %b{}_0, %l{}\n", i, i, i);
    }
    // The returned value has the out_sharding's local shape.
    std::string ret = fmt::format("%b{}_0c", i);
    if (inDim != outDim) {
      body += fmt::format("    %b{}_1 = transpose %b{}_0c {{perm = [1, 0]}}\n", i, i);
      ret = fmt::format("%b{}_1", i);
    }
    return fmt::format("$ = manual_computation ({}) in_shardings=[{}] out_shardings=[{}] "
                       "manual_axes={{\"x\"}} (%l{}: {}) {{\n{}    return {}\n  }} : {}",
                       operand, inOut(inDim), inOut(outDim), i, local, body, ret, kType);
  }

  std::vector<int> order(unsigned seed) const {
    std::vector<int> out;
    std::vector<bool> done(nodes_.size());
    std::mt19937 rng(seed);
    while (out.size() < nodes_.size()) {
      std::vector<int> ready;
      for (size_t n = 0; n < nodes_.size(); ++n) {
        bool ok = !done[n];
        for (int o : nodes_[n].operands)
          ok &= o < 0 || done[o];
        if (ok)
          ready.push_back(static_cast<int>(n));
      }
      int next = seed == 0 ? ready.front()
                           : ready[std::uniform_int_distribution<size_t>(0, ready.size() - 1)(rng)];
      done[next] = true;
      out.push_back(next);
    }
    return out;
  }

  std::mt19937 rng_;
  bool consistent_;
  std::vector<int> orientation_; // parameters, then nodes
  std::vector<std::string> params_;
  std::vector<Node> nodes_;
};

/// A program parsed and checked, then (when `propagate`) propagated.
struct Compiled {
  SourceFile file;
  DiagnosticEngine diags;
  std::unique_ptr<Module> module;

  Compiled(std::string text, bool propagate) : file("p.shd", std::move(text)) {
    module = parseModule(file, diags);
    REQUIRE(module);
    inferTypes(*module, diags);
    verifyShardings(*module, diags);
    if (propagate)
      propagateShardings(*module, diags);
    INFO(file.text());
    for (const Diagnostic &d : diags.diagnostics())
      INFO(d.message);
    REQUIRE_FALSE(diags.hasErrors());
  }
};

/// Every sharding of the module by a stable name: values by name, the
/// function result, manual_computation in/out shardings by op result.
std::map<std::string, const Sharding *> shardingsByName(const Module &module) {
  std::map<std::string, const Sharding *> out;
  for (const auto &f : module.functions) {
    for (const auto &arg : f->body.args)
      if (arg->sharding)
        out["%" + arg->name] = &*arg->sharding;
    walkOps(f->body, [&](Op &op) {
      for (const auto &r : op.results)
        if (r->sharding)
          out["%" + r->name] = &*r->sharding;
      if (op.body)
        for (const auto &arg : op.body->args)
          if (arg->sharding)
            out["%" + arg->name] = &*arg->sharding;
      for (const NamedAttribute &attr : op.attrs)
        for (size_t i = 0; i < attr.value.shardings.size(); ++i)
          out[fmt::format("%{} {}[{}]", op.results[0]->name, attr.name, i)] =
              &attr.value.shardings[i];
    });
    for (size_t i = 0; i < f->results.size(); ++i)
      if (f->results[i].sharding)
        out[fmt::format("@{} result {}", f->name, i)] = &*f->results[i].sharding;
  }
  return out;
}

/// Checks the properties that hold for every program; returns the
/// propagated shardings by name.
std::map<std::string, std::string> checkProperties(const std::string &source, bool &hasManual) {
  hasManual = source.find("manual_computation") != std::string::npos;
  Compiled written(source, false);
  Compiled once(source, true);
  std::string printed = printModule(*once.module);

  // 1. The verifier accepts the result (printed, parsed and checked again).
  Compiled reread(printed, false);
  for (const auto &[name, s] : shardingsByName(*reread.module)) {
    INFO(name);
    CHECK(s->isClosed());
  }

  // 2. Idempotent: propagating the propagated program changes nothing.
  Compiled twice(printed, true);
  CHECK(printModule(*twice.module) == printed);

  // 3. No written axis is removed: each written dim is a prefix of its
  //    propagated dim (a sub-axis may have grown into its full axis).
  const Mesh &mesh = *once.module->findMesh("mesh");
  std::map<std::string, const Sharding *> after = shardingsByName(*once.module);
  for (const auto &[name, before] : shardingsByName(*written.module)) {
    INFO(name << ": " << before->str());
    REQUIRE(after.count(name));
    const Sharding &now = *after.at(name);
    REQUIRE(now.dims.size() == before->dims.size());
    for (size_t d = 0; d < now.dims.size(); ++d)
      CHECK(axisListPrefix(before->dims[d].axes, now.dims[d].axes, mesh) !=
            PrefixStatus::NotAPrefix);
  }
  std::map<std::string, std::string> out;
  for (const auto &[name, s] : after)
    out[name] = s->str();
  return out;
}

} // namespace

TEST_CASE("propagation: verified, idempotent, never removes axes (random programs)",
          "[propagation][property]") {
  int manualPrograms = 0;
  for (unsigned seed = 1; seed <= 150; ++seed) {
    std::string source = RandomProgram(seed, false).text(0);
    INFO("seed " << seed << "\n" << source);
    bool hasManual = false;
    checkProperties(source, hasManual);
    manualPrograms += hasManual;
  }
  CHECK(manualPrograms > 50); // the generator does write manual_computations
}

// Where two annotations disagree, the first edge visited decides (as in
// Shardy, whose worklist also follows program order), so the order of the
// ops can matter there. Without conflicts it must not.
TEST_CASE("propagation: the same result for any op order (programs without conflicts)",
          "[propagation][property]") {
  // Each program is propagated four times: the sanitizer build takes a
  // third of them (kSampleSweeps).
  const unsigned programs = shardc::testing::kSampleSweeps ? 50 : 150;
  int manualPrograms = 0;
  for (unsigned seed = 1; seed <= programs; ++seed) {
    RandomProgram program(seed, true);
    std::string source = program.text(0);
    INFO("seed " << seed << "\n" << source);
    bool hasManual = false;
    std::map<std::string, std::string> first = checkProperties(source, hasManual);
    manualPrograms += hasManual;
    for (unsigned orderSeed = 1; orderSeed <= 3; ++orderSeed) {
      std::string reordered = program.text(orderSeed);
      INFO("reordered:\n" << reordered);
      std::map<std::string, std::string> other = checkProperties(reordered, hasManual);
      CHECK(other == first);
    }
  }
  CHECK(manualPrograms > static_cast<int>(programs / 3));
}
