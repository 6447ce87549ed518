// Test helper for the sharding-rule unit tests (sharding_rules_test.cpp and
// sharding_rules_shardy_test.cpp): a parsed, type-inferred program whose ops'
// rules can be printed by result name.
#pragma once

#include "frontend/Parser.h"
#include "passes/Passes.h"
#include "passes/rules/ShardingRules.h"

#include "tests/unit/TestHelpers.h"

#include <catch2/catch.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace shardc::testing {

enum class Errors { Forbidden, Expected };

/// Parses and type-infers `text`, requiring no errors unless they are
/// expected. Not movable: the module points into `file`.
struct RuleProgram {
  explicit RuleProgram(std::string text, Errors errors = Errors::Forbidden)
      : file("rules.shd", std::move(text)) {
    module = parseModule(file, diags);
    REQUIRE(module);
    inferTypes(*module, diags);
    INFO(file.text());
    if (errors == Errors::Forbidden)
      REQUIRE(this->errors().empty());
    else
      REQUIRE_FALSE(this->errors().empty());
  }
  RuleProgram(const RuleProgram &) = delete;
  RuleProgram &operator=(const RuleProgram &) = delete;

  SourceFile file;
  DiagnosticEngine diags;
  std::unique_ptr<Module> module;

  std::vector<std::string> errors() const { return errorMessages(diags); }

  /// The op defining %`name`, anywhere in the module (null when none).
  const Op *op(const std::string &name) const {
    const Op *found = nullptr;
    auto visit = [&](const Block &block) {
      walkOps(block, [&](Op &op) {
        for (const auto &result : op.results)
          if (result && result->name == name)
            found = &op;
      });
    };
    for (const auto &function : module->functions)
      visit(function->body);
    visit(module->snippet.body);
    return found;
  }

  /// The text of %`name`'s op rule, after checking the rule's invariants.
  std::string rule(const std::string &name) const {
    INFO("op defining %" << name);
    const Op *definition = op(name);
    REQUIRE(definition);
    std::optional<ShardingRule> rule = getShardingRule(*definition);
    REQUIRE(rule);
    std::vector<std::vector<int64_t>> operands;
    for (const Value *operand : definition->operands)
      operands.push_back(operand->type.shape);
    std::optional<std::string> violation =
        checkShardingRule(*rule, operands, {definition->result()->type.shape});
    INFO(rule->str());
    CHECK_FALSE(violation);
    return rule->str();
  }
};

} // namespace shardc::testing
