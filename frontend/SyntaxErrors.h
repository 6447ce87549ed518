// Turns ANTLR's syntax errors into shardc diagnostics, and maps token
// positions to shardc locations.
#pragma once

#include "ir/Diagnostics.h"

#include <antlr4-runtime.h>

namespace shardc {

/// The Loc of a token. The lexer (frontend/Lexer.h) counts columns in bytes
/// from 0; shardc counts bytes from 1.
Loc tokenLoc(const SourceFile &file, const antlr4::Token *token);

/// The Loc of a rule: from its first token to its last when they share a
/// line, else its first token.
Loc ruleLoc(const SourceFile &file, antlr4::ParserRuleContext *ctx);

/// Reports lexer and parser errors as `syntax error - ...` diagnostics with
/// friendly token names ("an integer" rather than INT).
class SyntaxErrorListener : public antlr4::BaseErrorListener {
public:
  SyntaxErrorListener(const SourceFile &file, DiagnosticEngine &diags)
      : file_(file), diags_(diags) {}

  void syntaxError(antlr4::Recognizer *recognizer, antlr4::Token *offendingSymbol, size_t line,
                   size_t charPositionInLine, const std::string &msg,
                   std::exception_ptr e) override;

  size_t errorCount() const { return count_; }

private:
  const SourceFile &file_;
  DiagnosticEngine &diags_;
  size_t count_ = 0;
  int lastLine_ = -1;
};

} // namespace shardc
