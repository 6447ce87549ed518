// parseModule parses in ANTLR's fast SLL mode first and again in full LL mode
// only when SLL gives up. These tests check that the two stages report
// exactly the syntax errors (message, line, column, length) one full-LL
// parse reports, on the examples, on the lit tests, and on copies of them
// with tokens dropped, doubled or swapped; that a large program parses; and
// that building the IR while parsing gives the module and the diagnostics of
// building it after the parse.
#include "frontend/Lexer.h"
#include "frontend/Parser.h"
#include "frontend/SyntaxErrors.h"
#include "ir/Printer.h"

#include "ShdParser.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

using namespace shardc;

namespace {

/// What a diagnostic says and where, one line.
std::vector<std::string> describe(const DiagnosticEngine &diags) {
  std::vector<std::string> out;
  for (const Diagnostic &d : diags.diagnostics())
    out.push_back(std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) + "+" +
                  std::to_string(d.loc.length) + " " + d.message);
  return out;
}

/// The syntax errors of one parse in full LL mode with error recovery, the
/// way parseModule's second stage runs, without the SLL stage before it.
std::vector<std::string> fullLLErrors(const SourceFile &file) {
  DiagnosticEngine diags;
  frontend::Utf8CharStream input(file.text(), file.name());
  frontend::ShdTokenSource lexer(input);
  frontend::SourceTokenStream tokens(lexer);
  shd::ShdParser parser(&tokens);
  SyntaxErrorListener listener(file, diags);
  parser.removeErrorListeners();
  parser.addErrorListener(&listener);
  parser.getInterpreter<antlr4::atn::ParserATNSimulator>()->setPredictionMode(
      antlr4::atn::PredictionMode::LL);
  parser.module();
  return describe(diags);
}

/// parseModule's syntax errors: when there are any it builds no IR, so every
/// error it reports is a syntax error.
std::vector<std::string> twoStageErrors(const SourceFile &file, bool &built) {
  DiagnosticEngine diags;
  std::unique_ptr<Module> module = parseModule(file, diags);
  built = module != nullptr;
  return built ? std::vector<std::string>{} : describe(diags);
}

/// The text of the examples and the lit tests.
std::vector<std::pair<std::string, std::string>> sources() {
  namespace fs = std::filesystem;
  std::vector<std::pair<std::string, std::string>> out;
  for (const char *dir : {"examples", "tests/lit"}) {
    for (const auto &entry : fs::recursive_directory_iterator(fs::path(SHARDC_SOURCE_DIR) / dir)) {
      if (entry.path().extension() != ".shd")
        continue;
      std::ifstream in(entry.path(), std::ios::binary);
      std::stringstream text;
      text << in.rdbuf();
      out.emplace_back(entry.path().string(), text.str());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// `text` cut at blanks into words, one of them dropped, doubled or swapped
/// with the next: mostly a syntax error somewhere in an otherwise valid file.
std::string mutate(const std::string &text, std::mt19937 &random) {
  std::vector<std::string> words;
  std::string word;
  for (char c : text) {
    word += c;
    if (c == ' ' || c == '\n') {
      words.push_back(word);
      word.clear();
    }
  }
  words.push_back(word);
  size_t at = random() % words.size();
  switch (random() % 3) {
  case 0:
    words.erase(words.begin() + at);
    break;
  case 1:
    words.insert(words.begin() + at, words[at]);
    break;
  default:
    if (at + 1 < words.size())
      std::swap(words[at], words[at + 1]);
  }
  std::string out;
  for (const std::string &w : words)
    out += w;
  return out;
}

/// Every diagnostic with its notes, one line each.
std::vector<std::string> describeAll(const DiagnosticEngine &diags) {
  std::vector<std::string> out;
  for (const Diagnostic &d : diags.diagnostics()) {
    out.push_back(std::to_string(static_cast<int>(d.severity)) + " " + std::to_string(d.loc.line) +
                  ":" + std::to_string(d.loc.col) + "+" + std::to_string(d.loc.length) + " " +
                  d.message);
    for (const Diagnostic &n : d.notes)
      out.push_back("  note " + std::to_string(n.loc.line) + ":" + std::to_string(n.loc.col) + " " +
                    n.message);
  }
  return out;
}

/// What parseModule gives when building `when`: the diagnostics, whether a
/// module came back, and its text when it has no errors.
struct ParseOutcome {
  std::vector<std::string> diagnostics;
  bool built = false;
  std::string text;
  bool operator==(const ParseOutcome &o) const {
    return diagnostics == o.diagnostics && built == o.built && text == o.text;
  }
};

ParseOutcome parseWith(const SourceFile &file, IRBuild when) {
  DiagnosticEngine diags;
  std::unique_ptr<Module> module = parseModule(file, diags, when);
  ParseOutcome out;
  out.diagnostics = describeAll(diags);
  out.built = module != nullptr;
  if (module && !diags.hasErrors())
    out.text = printModule(*module);
  return out;
}

/// `statements` lines `  %vI = add %v(I-1), %v0`, each followed by `suffix`:
/// a long function body after `func @main(%v0: ...) {`.
std::string addChain(int statements, const std::string &suffix = "") {
  std::string body;
  for (int i = 1; i <= statements; ++i)
    body +=
        "  %v" + std::to_string(i) + " = add %v" + std::to_string(i - 1) + ", %v0" + suffix + "\n";
  return body;
}

} // namespace

TEST_CASE("building the IR while parsing gives what building it after gives", "[parser]") {
  std::mt19937 random(7);
  size_t files = 0, built = 0, builderErrors = 0;
  for (const auto &[path, text] : sources()) {
    ++files;
    for (int variant = 0; variant < 3; ++variant) {
      SourceFile file("test.shd", variant == 0 ? text : mutate(text, random));
      INFO(path << " variant " << variant << ":\n" << file.text());
      ParseOutcome after = parseWith(file, IRBuild::AfterParse);
      ParseOutcome during = parseWith(file, IRBuild::WhileParsing);
      CHECK(during == after);
      built += !after.text.empty();
      builderErrors += after.built && !after.diagnostics.empty();
    }
  }
  CHECK(files > 100);
  CHECK(built > 100);
  CHECK(builderErrors > 20); // the builder's own errors are compared too
}

TEST_CASE("a large file built while parsing: errors of the builder and of the parser", "[parser]") {
  // Past the size from which IRBuild::Auto builds while parsing.
  std::string head = "@m = <[\"x\"=2]>\nfunc @main(%v0: tensor<8xf32>) -> tensor<8xf32> {\n";
  const int statements = 5000;
  std::string body = addChain(statements);
  std::string tail = "  return %v" + std::to_string(statements) + "\n}\n";
  REQUIRE(head.size() + body.size() > 64 * 1024);

  // A builder error in the middle and a redefined function after: reported
  // once each, in order, as the build after the parse reports them.
  std::string undefined = head + body + "  %x = add %nowhere, %v0\n" + tail +
                          "func @main(%a: tensor<8xf32>) -> tensor<8xf32> {\n  return %a\n}\n";
  SourceFile withBuilderErrors("large.shd", undefined);
  ParseOutcome during = parseWith(withBuilderErrors, IRBuild::Auto);
  CHECK(during == parseWith(withBuilderErrors, IRBuild::AfterParse));
  INFO(fmt::format("{}", fmt::join(during.diagnostics, "\n")));
  REQUIRE(during.diagnostics.size() == 3);
  CHECK(during.diagnostics[0].find("use of undefined value %nowhere") != std::string::npos);
  CHECK(during.diagnostics[1].find("redefinition of function @main") != std::string::npos);
  CHECK(during.diagnostics[2].find("note") != std::string::npos);

  // A syntax error after thousands of statements the builder has already
  // built: only the syntax error is reported (no builder error of the
  // partial build), and no module comes back.
  std::string broken = head + body + "  %x = add %nowhere, %v0\n  %y = add %v1,, %v2\n" + tail;
  SourceFile withSyntaxError("large.shd", broken);
  ParseOutcome failed = parseWith(withSyntaxError, IRBuild::WhileParsing);
  CHECK(failed == parseWith(withSyntaxError, IRBuild::AfterParse));
  CHECK(!failed.built);
  REQUIRE(failed.diagnostics.size() == 1);
  CHECK(failed.diagnostics[0].find("syntax error") != std::string::npos);
}

TEST_CASE("the two-stage parse reports the errors of a full-LL parse", "[parser]") {
  std::mt19937 random(22);
  size_t files = 0, withErrors = 0;
  for (const auto &[path, text] : sources()) {
    ++files;
    for (int variant = 0; variant < 4; ++variant) {
      SourceFile file("test.shd", variant == 0 ? text : mutate(text, random));
      INFO(path << " variant " << variant << ":\n" << file.text());
      bool built = false;
      std::vector<std::string> twoStage = twoStageErrors(file, built);
      std::vector<std::string> ll = fullLLErrors(file);
      // Files the lexer refuses (invalid UTF-8, NUL) never reach the parser.
      if (!built && twoStage.size() == 1 && twoStage[0].find("not ") != std::string::npos &&
          ll.empty())
        continue;
      CHECK(twoStage == ll);
      withErrors += !ll.empty();
    }
  }
  CHECK(files > 100);
  CHECK(withErrors > 100); // the mutations do make syntax errors
}

TEST_CASE("a syntax error deep in a large function is reported once, where it is", "[parser]") {
  // SLL gives up at the error; the LL parse must find it again at the same
  // token, after thousands of statements.
  std::string text = "@m = <[\"x\"=2]>\nfunc @main(%v0: tensor<8xf32>) -> tensor<8xf32> {\n";
  const int statements = 20000;
  text += addChain(statements);
  std::string bad =
      text + "  %w = add %v1,, %v2\n  return %v" + std::to_string(statements) + "\n}\n";
  text += "  return %v" + std::to_string(statements) + "\n}\n";

  SourceFile good("large.shd", text);
  DiagnosticEngine diags;
  std::unique_ptr<Module> module = parseModule(good, diags);
  REQUIRE(module);
  CHECK(describe(diags).empty());
  REQUIRE(module->functions.size() == 1);
  CHECK(module->functions[0]->body.ops.size() == statements);

  SourceFile broken("large.shd", bad);
  DiagnosticEngine badDiags;
  CHECK(!parseModule(broken, badDiags));
  std::vector<std::string> errors = describe(badDiags);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0] ==
        std::to_string(statements + 3) + ":16+1 syntax error - unexpected ','; expected a %value");
}

TEST_CASE("a block of thousands of ops prints as written, its halves on two threads", "[parser]") {
  // From 8,192 ops on (kSplitPrintOps) a block's second half is printed on a
  // second thread and appended: the text must be the one-thread text, which
  // for a canonical file is the file itself.
  std::string text = "@m = <[\"x\"=2]>\n\nfunc @main(%v0: tensor<8xf32>) -> tensor<8xf32> {\n";
  const int statements = 20001;
  text += addChain(statements, " : tensor<8xf32>");
  text += "  return %v" + std::to_string(statements) + "\n}\n";
  SourceFile file("large.shd", text);
  DiagnosticEngine diags;
  std::unique_ptr<Module> module = parseModule(file, diags);
  REQUIRE(module);
  REQUIRE(describe(diags).empty());
  CHECK(printModule(*module) == text);
}
