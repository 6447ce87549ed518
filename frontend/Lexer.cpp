// The hand-written .shd lexer (frontend/Lexer.h). Each rule below is the rule
// of grammar/Shd.g4 named next to it; where several rules match, the longest
// match wins and, on a tie, the rule written first (the keywords before IDENT).
#include "frontend/Lexer.h"

#include "ShdLexer.h"

#include <array>

namespace shardc {
namespace frontend {

using L = shd::ShdLexer;

// ---- the char stream ---------------------------------------------------------------

std::string Utf8CharStream::getText(const antlr4::misc::Interval &interval) {
  if (interval.a < 0 || interval.b < interval.a || static_cast<size_t>(interval.a) >= text_.size())
    return "";
  size_t stop = std::min(static_cast<size_t>(interval.b), text_.size() - 1);
  return std::string(text_.substr(interval.a, stop + 1 - interval.a));
}

void Utf8CharStream::consume() {
  if (position_ >= text_.size())
    throw antlr4::IllegalStateException("cannot consume EOF");
  ++position_;
}

size_t Utf8CharStream::LA(ssize_t i) {
  if (i == 0)
    return 0;
  ssize_t at =
      i > 0 ? static_cast<ssize_t>(position_) + i - 1 : static_cast<ssize_t>(position_) + i;
  if (at < 0 || static_cast<size_t>(at) >= text_.size())
    return EOF;
  return static_cast<unsigned char>(text_[at]);
}

// ---- tokens ------------------------------------------------------------------------

std::string SourceToken::getText() const {
  if (const std::string *text = source_->replacedText(this))
    return *text;
  if (type_ == kEofType)
    return "<EOF>";
  return std::string(source_->text().substr(start_, length_));
}

antlr4::TokenSource *SourceToken::getTokenSource() const { return source_; }

antlr4::CharStream *SourceToken::getInputStream() const { return source_->getInputStream(); }

std::string SourceToken::toString() const {
  std::string text = getText();
  for (auto [from, to] : std::array<std::pair<char, const char *>, 3>{
           {{'\n', "\\n"}, {'\r', "\\r"}, {'\t', "\\t"}}}) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + 2))
      text.replace(at, 1, to);
  }
  return "[@" + std::to_string(static_cast<ssize_t>(index_)) + "," + std::to_string(start_) + ":" +
         std::to_string(static_cast<ssize_t>(getStopIndex())) + "='" + text + "',<" +
         std::to_string(static_cast<ssize_t>(getType())) + ">," + std::to_string(line_) + ":" +
         std::to_string(column_) + "]";
}

void SourceToken::setText(const std::string &text) { source_->replaceText(this, text); }

const std::string *ShdTokenSource::replacedText(const SourceToken *token) const {
  if (replaced_.empty())
    return nullptr;
  auto it = replaced_.find(token);
  return it == replaced_.end() ? nullptr : &it->second;
}

// ---- the rules -----------------------------------------------------------------------

namespace {

bool isLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }
/// [a-zA-Z0-9_.]: the rest of an IDENT.
bool isWordChar(char c) { return isLetter(c) || isDigit(c) || c == '.'; }
/// [a-zA-Z0-9_.$]: the rest of a SYMBOL or VALUE.
bool isNameChar(char c) { return isWordChar(c) || c == '$'; }

/// The keyword rules (KW_*), each with every spelling it has.
struct Keyword {
  std::string_view spelling;
  size_t type;
};
constexpr Keyword kKeywords[] = {
    {"mesh", L::KW_MESH},
    {"sdy.mesh", L::KW_SDY_MESH},
    {"device_ids", L::KW_DEVICE_IDS},
    {"axis_types", L::KW_AXIS_TYPES},
    {"sharding", L::KW_SHARDING},
    {"replicated", L::KW_REPLICATED},
    {"func", L::KW_FUNC},
    {"func.func", L::KW_FUNC},
    {"return", L::KW_RETURN},
    {"sdy.return", L::KW_RETURN},
    {"einsum", L::KW_EINSUM},
    {"constant", L::KW_CONSTANT},
    {"sharding_constraint", L::KW_SHARDING_CONSTRAINT},
    {"reshard", L::KW_RESHARD},
    {"manual_computation", L::KW_MANUAL_COMPUTATION},
    {"sdy.manual_computation", L::KW_MANUAL_COMPUTATION},
    {"in_shardings", L::KW_IN_SHARDINGS},
    {"out_shardings", L::KW_OUT_SHARDINGS},
    {"manual_axes", L::KW_MANUAL_AXES},
    {"auto_axes", L::KW_AUTO_AXES},
    {"explicit_axes", L::KW_EXPLICIT_AXES},
    {"axes", L::KW_AXES},
    {"dense", L::KW_DENSE},
    {"true", L::KW_TRUE},
    {"for", L::KW_FOR},
    {"to", L::KW_TO},
    {"step", L::KW_STEP},
    {"carry", L::KW_CARRY},
    {"while", L::KW_WHILE},
    {"cond", L::KW_COND},
    {"do", L::KW_DO},
    {"if", L::KW_IF},
    {"else", L::KW_ELSE},
    {"call", L::KW_CALL},
    {"false", L::KW_FALSE},
};

/// Every keyword is also an IDENT of the same length, and the keyword rules
/// come first: a word is a keyword exactly when it is spelled as one.
size_t wordType(std::string_view word) {
  for (const Keyword &k : kKeywords)
    if (k.spelling == word)
      return k.type;
  return L::IDENT;
}

/// The single-character tokens.
size_t punctuationType(char c) {
  switch (c) {
  case '<':
    return L::LT;
  case '>':
    return L::GT;
  case '{':
    return L::LBRACE;
  case '}':
    return L::RBRACE;
  case '[':
    return L::LBRACK;
  case ']':
    return L::RBRACK;
  case '(':
    return L::LPAREN;
  case ')':
    return L::RPAREN;
  case ',':
    return L::COMMA;
  case ':':
    return L::COLON;
  case '=':
    return L::EQUALS;
  case '?':
    return L::QUESTION;
  default:
    return 0;
  }
}

/// Bytes in the UTF-8 sequence that starts with `c` (the text was checked to
/// be UTF-8 before lexing).
size_t sequenceLength(char c) {
  unsigned char u = static_cast<unsigned char>(c);
  return u < 0x80 ? 1 : (u >> 5) == 0x6 ? 2 : (u >> 4) == 0xE ? 3 : 4;
}

} // namespace

std::pair<size_t, size_t> ShdTokenSource::match() const {
  std::string_view s = input_.text();
  size_t p = position_;
  auto at = [&](size_t i) { return i < s.size() ? s[i] : '\0'; };
  char c = s[p];
  // WS and LINE_COMMENT, skipped.
  if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f') {
    size_t q = p + 1;
    while (q < s.size() &&
           (s[q] == ' ' || s[q] == '\t' || s[q] == '\r' || s[q] == '\n' || s[q] == '\f'))
      ++q;
    return {0, q - p};
  }
  if (c == '/' && at(p + 1) == '/') {
    size_t end = s.find_first_of("\r\n", p);
    return {0, (end == std::string_view::npos ? s.size() : end) - p};
  }
  if (isLetter(c))
    return matchWord();
  if (isDigit(c) || c == '-' || c == '.') {
    size_t type = 0;
    size_t length = matchNumber(type);
    if (length)
      return {type, length};
    if (c == '-' && at(p + 1) == '>')
      return {L::ARROW, 2};
    return {L::BAD_CHAR, 1};
  }
  if (c == '@' || c == '%') {
    // SYMBOL: '@' [a-zA-Z_] [a-zA-Z0-9_.$]*; VALUE: '%' [a-zA-Z0-9_] [a-zA-Z0-9_.$]*.
    char first = at(p + 1);
    if (!(isLetter(first) || (c == '%' && isDigit(first))))
      return {L::BAD_CHAR, 1};
    size_t q = p + 2;
    while (q < s.size() && isNameChar(s[q]))
      ++q;
    return {c == '@' ? L::SYMBOL : L::VALUE, q - p};
  }
  if (c == '"') {
    // STRING: '"' (~["\\\r\n] | '\\' ~[\r\n])* '"'; unterminated, the quote
    // alone is a BAD_CHAR.
    for (size_t q = p + 1; q < s.size(); ++q) {
      char d = s[q];
      if (d == '"')
        return {L::STRING, q + 1 - p};
      if (d == '\r' || d == '\n')
        break;
      if (d == '\\') {
        if (q + 1 >= s.size() || s[q + 1] == '\r' || s[q + 1] == '\n')
          break;
        ++q;
      }
    }
    return {L::BAD_CHAR, 1};
  }
  if (size_t type = punctuationType(c))
    return {type, 1};
  // BAD_CHAR: any one character, however many bytes it takes.
  return {L::BAD_CHAR, std::min(sequenceLength(c), s.size() - p)};
}

std::pair<size_t, size_t> ShdTokenSource::matchWord() const {
  // IDENT: [a-zA-Z_] [a-zA-Z0-9_.]*, or a keyword, or TENSOR_TYPE:
  // 'tensor<' ~[>\r\n]* '>' (always longer than the IDENT 'tensor').
  std::string_view s = input_.text();
  size_t q = position_ + 1;
  while (q < s.size() && isWordChar(s[q]))
    ++q;
  std::string_view word = s.substr(position_, q - position_);
  if (word == "tensor" && q < s.size() && s[q] == '<') {
    size_t end = s.find_first_of(">\r\n", q + 1);
    if (end != std::string_view::npos && s[end] == '>')
      return {L::TENSOR_TYPE, end + 1 - position_};
  }
  return {wordType(word), word.size()};
}

size_t ShdTokenSource::matchNumber(size_t &type) const {
  // INT: '-'? [0-9]+. FLOAT: '-'? [0-9]+ '.' [0-9]* EXPONENT? | '-'? [0-9]+
  // EXPONENT | '-'? '.' [0-9]+ EXPONENT?, with EXPONENT: [eE] [+-]? [0-9]+.
  std::string_view s = input_.text();
  auto digitsFrom = [&](size_t q) {
    while (q < s.size() && isDigit(s[q]))
      ++q;
    return q;
  };
  auto exponentFrom = [&](size_t q) { // the end of an EXPONENT at q, or q
    if (q >= s.size() || (s[q] != 'e' && s[q] != 'E'))
      return q;
    size_t r = q + 1;
    if (r < s.size() && (s[r] == '+' || s[r] == '-'))
      ++r;
    size_t end = digitsFrom(r);
    return end > r ? end : q;
  };
  size_t q = position_ + (s[position_] == '-' ? 1 : 0);
  size_t integerEnd = digitsFrom(q);
  if (integerEnd > q) {
    if (integerEnd < s.size() && s[integerEnd] == '.') {
      type = L::FLOAT;
      return exponentFrom(digitsFrom(integerEnd + 1)) - position_;
    }
    size_t end = exponentFrom(integerEnd);
    type = end > integerEnd ? L::FLOAT : L::INT;
    return end - position_;
  }
  if (q < s.size() && s[q] == '.') {
    size_t fractionEnd = digitsFrom(q + 1);
    if (fractionEnd > q + 1) {
      type = L::FLOAT;
      return exponentFrom(fractionEnd) - position_;
    }
  }
  return 0;
}

void ShdTokenSource::advance(size_t length) {
  std::string_view s = input_.text();
  for (size_t end = position_ + length; position_ < end; ++position_)
    if (s[position_] == '\n')
      lineStart_ = position_ + 1, ++line_;
}

std::unique_ptr<antlr4::Token> ShdTokenSource::nextToken() {
  std::string_view s = input_.text();
  while (position_ < s.size()) {
    auto [type, length] = match();
    if (type == 0) { // blanks or a comment
      advance(length);
      continue;
    }
    auto token =
        std::make_unique<SourceToken>(this, type, position_, length, line_, position_ - lineStart_);
    position_ += length; // no token spans a line
    input_.seek(position_);
    return token;
  }
  auto eof = std::make_unique<SourceToken>(this, antlr4::Token::EOF, position_, 0, line_,
                                           position_ - lineStart_);
  return eof;
}

SourceTokenStream::SourceTokenStream(ShdTokenSource &source)
    : antlr4::CommonTokenStream(&source), source_(source) {
  // A token per 5 bytes of text is about what programs have (the
  // generated 100,000-op one: one per 5.3); more grows the vector as usual.
  _tokens.reserve(source.text().size() / 5 + 16);
}

void SourceTokenStream::releaseTokens(size_t begin, size_t end) {
  for (size_t i = begin; i < end && i < _tokens.size(); ++i)
    _tokens[i].reset();
  releasedAny_ = releasedAny_ || begin < end;
}

size_t SourceTokenStream::fetch(size_t n) {
  if (_fetchedEOF)
    return 0;
  for (size_t i = 0; i < n; ++i) {
    std::unique_ptr<antlr4::Token> token = source_.nextToken();
    static_cast<SourceToken &>(*token).setTokenIndex(_tokens.size());
    bool eof = token->getType() == antlr4::Token::EOF;
    _tokens.push_back(std::move(token));
    if (eof) {
      _fetchedEOF = true;
      return i + 1;
    }
  }
  return n;
}

} // namespace frontend
} // namespace shardc
