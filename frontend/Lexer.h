// The .shd lexer, written by hand: it makes the same tokens as the ANTLR lexer
// generated from grammar/Shd.g4 (longest match, the first rule on a tie) for
// the ANTLR parser, without the generated lexer's per-character DFA locks,
// its UTF-32 copy of the file and its 112-byte tokens.
// tests/unit/lexer_test.cpp checks that both lexers agree.
//
// Positions count bytes, not code points: a token's start and stop index are
// byte offsets into the file and its column is the byte offset on its line.
#pragma once

#include <antlr4-runtime.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

namespace shardc {
namespace frontend {

/// The source text as ANTLR's CharStream, indexed by byte. Tokens read their
/// text from it; only the token source moves through it.
class Utf8CharStream final : public antlr4::CharStream {
public:
  Utf8CharStream(std::string_view text, std::string name) : text_(text), name_(std::move(name)) {}

  std::string getText(const antlr4::misc::Interval &interval) override;
  std::string toString() const override { return std::string(text_); }
  void consume() override;
  size_t LA(ssize_t i) override;
  ssize_t mark() override { return -1; }
  void release(ssize_t) override {}
  size_t index() override { return position_; }
  void seek(size_t index) override { position_ = std::min(index, text_.size()); }
  size_t size() override { return text_.size(); }
  std::string getSourceName() const override { return name_; }

  std::string_view text() const { return text_; }

private:
  std::string_view text_;
  std::string name_;
  size_t position_ = 0;
};

class ShdTokenSource;

/// One token: its type and where it is; the text is read from the file when
/// asked for. About half the size of antlr4::CommonToken, and a 100,000-op
/// program has more than a million tokens.
class SourceToken final : public antlr4::WritableToken {
public:
  SourceToken(ShdTokenSource *source, size_t type, size_t start, size_t length, size_t line,
              size_t column)
      : source_(source), start_(start), line_(static_cast<uint32_t>(line)),
        column_(static_cast<uint32_t>(column)), length_(static_cast<uint32_t>(length)),
        type_(static_cast<uint16_t>(type)) {}

  std::string getText() const override;
  size_t getType() const override { return type_ == kEofType ? EOF : type_; }
  size_t getLine() const override { return line_; }
  size_t getCharPositionInLine() const override { return column_; }
  size_t getChannel() const override { return channel_; }
  size_t getTokenIndex() const override { return index_; }
  size_t getStartIndex() const override { return start_; }
  /// start - 1 for the empty end-of-file token, as ANTLR's lexer makes it.
  size_t getStopIndex() const override { return start_ + length_ - 1; }
  antlr4::TokenSource *getTokenSource() const override;
  antlr4::CharStream *getInputStream() const override;
  std::string toString() const override;

  void setText(const std::string &text) override;
  void setType(size_t type) override {
    type_ = type == EOF ? kEofType : static_cast<uint16_t>(type);
  }
  void setLine(size_t line) override { line_ = static_cast<uint32_t>(line); }
  void setCharPositionInLine(size_t column) override { column_ = static_cast<uint32_t>(column); }
  void setChannel(size_t channel) override { channel_ = static_cast<uint16_t>(channel); }
  void setTokenIndex(size_t index) override { index_ = index; }

private:
  /// Token::EOF is size_t(-1); the type is kept in 16 bits.
  static constexpr uint16_t kEofType = 0xFFFF;

  ShdTokenSource *source_;
  size_t start_;
  size_t index_ = INVALID_INDEX;
  uint32_t line_;
  uint32_t column_;
  uint32_t length_;
  uint16_t type_;
  uint16_t channel_ = DEFAULT_CHANNEL;
};

/// Cuts the text into the grammar's tokens (shd::ShdLexer's token types),
/// skipping blanks and `//` comments. Never fails: a character no rule takes
/// is a BAD_CHAR token, for the parser to report, as in the grammar.
class ShdTokenSource final : public antlr4::TokenSource {
public:
  explicit ShdTokenSource(Utf8CharStream &input) : input_(input) {}

  std::unique_ptr<antlr4::Token> nextToken() override;
  size_t getLine() const override { return line_; }
  size_t getCharPositionInLine() override { return position_ - lineStart_; }
  antlr4::CharStream *getInputStream() override { return &input_; }
  std::string getSourceName() override { return input_.getSourceName(); }
  antlr4::TokenFactory<antlr4::CommonToken> *getTokenFactory() override {
    return antlr4::CommonTokenFactory::DEFAULT.get();
  }

  /// The text a token was given with setText, if any (the parser never does).
  const std::string *replacedText(const SourceToken *token) const;
  void replaceText(const SourceToken *token, const std::string &text) { replaced_[token] = text; }
  std::string_view text() const { return input_.text(); }

private:
  /// The type and length of the token that starts at `position_`; 0 for the
  /// type of blanks and comments.
  /// The type and length of the token that starts at `position_`; type 0
  /// for blanks and comments.
  std::pair<size_t, size_t> match() const;
  std::pair<size_t, size_t> matchWord() const;
  /// The length of the INT or FLOAT at `position_` (0 if none) and its type.
  size_t matchNumber(size_t &type) const;
  void advance(size_t length);

  Utf8CharStream &input_;
  size_t position_ = 0;
  size_t line_ = 1;
  size_t lineStart_ = 0;
  std::unordered_map<const SourceToken *, std::string> replaced_;
};

/// ANTLR's buffered token stream over a ShdTokenSource. Its fetch() is
/// ANTLR's without the dynamic_cast to WritableToken it makes per token
/// (every token here is a SourceToken), and reserves room for the tokens of
/// the whole text at once: a 100,000-op program has about 800,000.
class SourceTokenStream final : public antlr4::CommonTokenStream {
public:
  explicit SourceTokenStream(ShdTokenSource &source);

  /// Deletes tokens [begin, end), which nothing reads any more (a parse
  /// built while parsing frees each built statement's). The stream cannot
  /// be read again from the start after it.
  void releaseTokens(size_t begin, size_t end);
  bool releasedAny() const { return releasedAny_; }

protected:
  size_t fetch(size_t n) override;

private:
  ShdTokenSource &source_;
  bool releasedAny_ = false;
};

} // namespace frontend
} // namespace shardc
