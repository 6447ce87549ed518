// Syntax error reporting for the ANTLR parser.
#include "frontend/SyntaxErrors.h"

#include "ShdLexer.h"

#include <fmt/format.h>
#include <map>
#include <regex>

namespace shardc {

namespace {

/// A token name of ANTLR's as a user would say it: INT -> "an integer",
/// KW_DEVICE_IDS -> 'device_ids'.
std::string friendlyTokenName(const std::string &name) {
  static const std::map<std::string, std::string> names = {
      {"STRING", "a string"},
      {"INT", "an integer"},
      {"FLOAT", "a number"},
      {"VALUE", "a %value"},
      {"SYMBOL", "an @symbol"},
      {"IDENT", "a name"},
      {"TENSOR_TYPE", "a tensor type"},
      {"BAD_CHAR", "a bad character"},
      {"<EOF>", "end of file"},
  };
  auto it = names.find(name);
  if (it != names.end())
    return it->second;
  if (name.rfind("KW_", 0) == 0) {
    std::string word = name.substr(3);
    for (char &c : word)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return "'" + word + "'";
  }
  return name;
}

/// ANTLR's message with every token name made friendly.
std::string friendlyTokenNames(const std::string &text) {
  static const std::regex tokenName("<EOF>|\\b[A-Z][A-Z_]+\\b");
  std::string out;
  auto begin = text.cbegin();
  std::smatch m;
  while (std::regex_search(begin, text.cend(), m, tokenName)) {
    out.append(begin, m[0].first);
    out += friendlyTokenName(m[0]);
    begin = m[0].second;
  }
  out.append(begin, text.cend());
  return out;
}

/// `{'}', ','}` -> `'}' or ','`; `{'a', 'b', 'c'}` -> `one of 'a', 'b', 'c'`.
std::string expectedList(std::string set) {
  set = friendlyTokenNames(set);
  if (set.size() < 2 || set.front() != '{' || set.back() != '}')
    return set;
  std::vector<std::string> items;
  std::string inner = set.substr(1, set.size() - 2), item;
  // Items are separated by ", "; a quoted "','" contains a comma itself.
  for (size_t i = 0; i < inner.size(); ++i) {
    if (inner.compare(i, 2, ", ") == 0) {
      items.push_back(item);
      item.clear();
      ++i;
      continue;
    }
    item += inner[i];
  }
  items.push_back(item);
  if (items.size() == 2)
    return items[0] + " or " + items[1];
  std::string out = "one of ";
  for (size_t i = 0; i < items.size(); ++i)
    out += (i ? ", " : "") + items[i];
  return out;
}

/// ANTLR's messages in shardc's grammar: what was found, then what was
/// expected.
std::string rephrase(const std::string &msg, antlr4::Token *offending) {
  static const std::regex unexpected("^(?:mismatched|extraneous) input (.*) expecting (.*)$");
  static const std::regex missing("^missing (.*) at (.*)$");
  static const std::regex noViable("^no viable alternative at input .*$");
  std::smatch m;
  if (std::regex_match(msg, m, unexpected)) {
    std::string found = m[1] == "'<EOF>'" ? "end of file" : m[1].str();
    return fmt::format("unexpected {}; expected {}", found, expectedList(m[2]));
  }
  if (std::regex_match(msg, m, missing))
    return fmt::format("missing {} before {}", expectedList(m[1]), m[2].str());
  if (std::regex_match(msg, noViable) && offending)
    return offending->getType() == antlr4::Token::EOF
               ? "unexpected end of file"
               : fmt::format("unexpected '{}'", offending->getText());
  return msg;
}

} // namespace

Loc tokenLoc(const SourceFile &file, const antlr4::Token *token) {
  if (!token)
    return Loc{&file, 0, 0, 1};
  int line = static_cast<int>(token->getLine());
  int col = static_cast<int>(token->getCharPositionInLine()) + 1;
  // A token conjured by error recovery ("<missing ...>") has no span.
  if (token->getType() == antlr4::Token::EOF || token->getStartIndex() == INVALID_INDEX ||
      token->getStopIndex() < token->getStartIndex())
    return Loc{&file, line, col,
               token->getType() == antlr4::Token::EOF
                   ? 1
                   : std::max<int>(1, static_cast<int>(token->getText().size()))};
  return Loc{&file, line, col,
             static_cast<int>(token->getStopIndex() + 1 - token->getStartIndex())};
}

Loc ruleLoc(const SourceFile &file, antlr4::ParserRuleContext *ctx) {
  if (!ctx || !ctx->getStart())
    return Loc{&file, 0, 0, 1};
  Loc start = tokenLoc(file, ctx->getStart());
  const antlr4::Token *stop = ctx->getStop();
  if (stop && stop->getLine() == ctx->getStart()->getLine() &&
      stop->getTokenIndex() >= ctx->getStart()->getTokenIndex()) {
    Loc end = tokenLoc(file, stop);
    start.length = std::max(1, end.col + end.length - start.col);
  }
  return start;
}

void SyntaxErrorListener::syntaxError(antlr4::Recognizer *recognizer,
                                      antlr4::Token *offendingSymbol, size_t line,
                                      size_t charPositionInLine, const std::string &msg,
                                      std::exception_ptr) {
  ++count_;
  Loc loc;
  if (offendingSymbol) {
    loc = tokenLoc(file_, offendingSymbol);
    // Something missing at the end of a line is reported there, as clang
    // does, not at the first token of the next line.
    auto *parser = dynamic_cast<antlr4::Parser *>(recognizer);
    antlr4::Token *previous = parser ? parser->getTokenStream()->LT(-1) : nullptr;
    if (previous && previous->getLine() < offendingSymbol->getLine() &&
        msg.rfind("extraneous", 0) != 0) {
      Loc end = tokenLoc(file_, previous);
      loc = end.shifted(end.length);
    }
  } else {
    loc = Loc{&file_, static_cast<int>(line), static_cast<int>(charPositionInLine) + 1, 1};
  }
  std::string message;
  if (offendingSymbol && offendingSymbol->getType() == shd::ShdLexer::BAD_CHAR) {
    std::string text = offendingSymbol->getText();
    message = text == "\"" ? "syntax error - unterminated string: add the closing '\"'"
                           : fmt::format("syntax error - unexpected character: '{}'", text);
  } else {
    message = rephrase(msg, offendingSymbol);
    message = "syntax error - " + message;
  }
  diags_.error(loc, message);
  lastLine_ = loc.line;
}

} // namespace shardc
