// The hand-written lexer (frontend/Lexer.h) against the ANTLR lexer generated
// from grammar/Shd.g4: the same tokens (type, text, line, column) for every
// example and lit test, for edge cases of each rule, and for random text.
#include "frontend/Lexer.h"

#include "ShdLexer.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

using namespace shardc;

namespace {

/// What the parser sees of a token, columns in bytes.
struct Seen {
  size_t type;
  std::string text;
  size_t line;
  size_t column;
  bool operator==(const Seen &o) const {
    return type == o.type && text == o.text && line == o.line && column == o.column;
  }
};

std::ostream &operator<<(std::ostream &os, const Seen &t) {
  return os << "type " << static_cast<long>(t.type) << " '" << t.text << "' " << t.line << ":"
            << t.column;
}

/// Line `line` (1-based) of `text`.
std::string_view lineOf(std::string_view text, size_t line) {
  size_t start = 0;
  for (size_t i = 1; i < line; ++i)
    start = text.find('\n', start) + 1;
  size_t end = text.find('\n', start);
  return text.substr(start, end == std::string_view::npos ? text.size() - start : end - start);
}

/// The generated lexer's tokens, its code-point columns turned into bytes.
std::vector<Seen> antlrTokens(const std::string &text) {
  antlr4::ANTLRInputStream input(text);
  shd::ShdLexer lexer(&input);
  lexer.removeErrorListeners();
  std::vector<Seen> out;
  for (;;) {
    std::unique_ptr<antlr4::Token> t = lexer.nextToken();
    std::string_view line = lineOf(text, t->getLine());
    size_t bytes = 0;
    for (size_t seen = 0; seen < t->getCharPositionInLine() && bytes < line.size(); ++seen) {
      unsigned char c = static_cast<unsigned char>(line[bytes]);
      bytes += c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : 4;
    }
    out.push_back({t->getType(), t->getText(), t->getLine(), bytes});
    if (t->getType() == antlr4::Token::EOF)
      return out;
  }
}

std::vector<Seen> ourTokens(const std::string &text) {
  frontend::Utf8CharStream input(text, "test.shd");
  frontend::ShdTokenSource lexer(input);
  std::vector<Seen> out;
  for (;;) {
    std::unique_ptr<antlr4::Token> t = lexer.nextToken();
    out.push_back({t->getType(), t->getText(), t->getLine(), t->getCharPositionInLine()});
    // The span is the text's, in bytes.
    if (t->getType() != antlr4::Token::EOF)
      CHECK(t->getStopIndex() + 1 - t->getStartIndex() == t->getText().size());
    if (t->getType() == antlr4::Token::EOF)
      return out;
  }
}

void checkSameTokens(const std::string &text) {
  INFO("input: " << text.substr(0, 200));
  std::vector<Seen> expected = antlrTokens(text), actual = ourTokens(text);
  size_t n = std::min(expected.size(), actual.size());
  for (size_t i = 0; i < n; ++i) {
    INFO("token " << i);
    REQUIRE(actual[i] == expected[i]);
  }
  REQUIRE(actual.size() == expected.size());
}

} // namespace

TEST_CASE("the lexer makes the generated lexer's tokens on every test and example", "[lexer]") {
  namespace fs = std::filesystem;
  size_t files = 0;
  for (const char *dir : {"examples", "tests/lit", "tests/fuzz/corpus"}) {
    for (const auto &entry : fs::recursive_directory_iterator(fs::path(SHARDC_SOURCE_DIR) / dir)) {
      if (entry.path().extension() != ".shd")
        continue;
      std::ifstream in(entry.path(), std::ios::binary);
      std::stringstream text;
      text << in.rdbuf();
      INFO(entry.path().string());
      checkSameTokens(text.str());
      ++files;
    }
  }
  CHECK(files > 100);
}

TEST_CASE("the lexer takes the longest match and the first rule on a tie", "[lexer]") {
  for (const char *text : {
           // keywords, their dotted spellings, and words that only start as one
           "mesh sdy.mesh meshes sdy.meshx func func.func func.funcs return sdy.return",
           "manual_computation sdy.manual_computation sharding sharding_constraint to tox",
           "true false dense axes auto_axes explicit_axes if else do cond carry step call",
           // tensor types, and what is left when one does not close on its line
           "tensor<4x8xf32> tensor<> tensor<4x\n8xf32> tensor<4x8xf32 tensor tensors<4>",
           "tensor <4> xtensor<4> tensor<é>",
           // numbers: INT, the three FLOAT forms, exponents that are not
           "1 -1 12.5 -12. 1e5 1E+5 1e-5 1.5e3 .5 -.5 .5e2 1e 1e+ 1.e 1.5e+x 4x8 -x - -> . -. 1..2",
           // names
           "%0 %a.b$c %_ %$ %. @f @f.g$h @0 @ % @@",
           // strings, escapes and unterminated ones
           R"("x" "" "a\"b" "a\\" "unterminated)",
           "\"a\\\n\" \"tab\\\tx\" \"é\"",
           // comments, blanks, slashes
           "a // comment \"x\n/ b /x //\r\nc\f\td\r\n",
           // every punctuation mark and characters no rule takes
           "< > { } [ ] ( ) , : = ? ! # $ ^ & * + ; ' ` ~ | \\ \x01 é ∀ 😀",
           "",
           "   \n\n  ",
       })
    checkSameTokens(text);
}

TEST_CASE("the lexer agrees with the generated lexer on random text", "[lexer]") {
  // Fragments that start or nearly start tokens, glued at random.
  const std::vector<std::string> pieces = {
      "tensor<", "tensor", ">",  "<",  "x",  "f32", "4",  "-",  ".",    "e",    "E",    "+",
      "%",       "@",      "\"", "\\", "\n", "\r",  " ",  "\t", "/",    "//",   "{",    "}",
      "[",       "]",      "(",  ")",  ",",  ":",   "=",  "?",  "sdy.", "mesh", "func", "func.",
      "é",       "∀",      "$",  "_",  "0",  "9",   "->", "!",  "\f",   "to",   "do"};
  std::mt19937 random(2026);
  for (int trial = 0; trial < 3000; ++trial) {
    std::string text;
    size_t length = random() % 40;
    for (size_t i = 0; i < length; ++i)
      text += pieces[random() % pieces.size()];
    checkSameTokens(text);
  }
}
