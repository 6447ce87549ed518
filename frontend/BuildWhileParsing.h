// The IR built on a second thread while the parser is still reading. The
// parser hands each piece to the builder as soon as it is complete: a
// top-level item, a function's header (when the parser enters its body), each
// statement of the body, the function's end. The builder reads only finished
// subtrees; the parser only appends to unfinished ones, so the two never touch
// the same node at once. The parse of a 100,000-op program and its build take
// about 0.55 s and 0.35 s one after the other; overlapped, the build finishes
// shortly after the parse.
//
// The parser tells the builder which rule it enters (StreamingParser), not a
// parse listener: ANTLR calls a listener at every rule's entry and exit and
// every token, each call with a failing dynamic_cast to the generated
// listener interface, about a sixth of the parser's instructions. A piece is
// known complete when the parser enters the rule after it (the next
// statement of the body, the next top-level item) or the parse ends.
//
// Once the builder is done with a body statement the parser frees that
// statement's subtree and tokens, so the tree of a long function never exists
// whole: at 100,000 ops they were 138 of the 277 MiB the parse ended with
// (the IR the rest), and every page of them one the kernel zeroed first.
// (Freeing them on the builder's thread instead, the less busy one, was no
// faster and kept more memory: mimalloc returns memory freed by another
// thread to its owner late.)
#pragma once

#include "frontend/IRBuilder.h"
#include "frontend/Lexer.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace shardc::frontend {

class BuildWhileParsing final {
public:
  /// Starts the builder thread; give this to the parser (StreamingParser).
  BuildWhileParsing(const SourceFile &file, Module &module);
  ~BuildWhileParsing();
  BuildWhileParsing(const BuildWhileParsing &) = delete;
  BuildWhileParsing &operator=(const BuildWhileParsing &) = delete;

  /// Ends the build once the parse returned: with `parsed`, after the last
  /// piece, and rethrows what the builder threw; without, where the builder
  /// is (the module is then partial and to be dropped). Returns the
  /// builder's diagnostics, to be reported only for a finished build.
  const DiagnosticEngine &finish(bool parsed);

  /// The parser's nodes, in the order it made them (its ParseTreeTracker's),
  /// and its tokens: a built body statement's nodes are deleted and their
  /// entries set to null, which the tracker's reset skips, and its tokens
  /// released.
  void freeStatementsOf(std::vector<antlr4::tree::ParseTree *> *nodes, SourceTokenStream *tokens) {
    nodes_ = nodes;
    tokens_ = tokens;
  }

  /// The parser entered rule `ruleIndex` with context `ctx`, already a
  /// child of its parent and the last node made.
  void entered(antlr4::ParserRuleContext *ctx, size_t ruleIndex);

private:
  struct Piece {
    enum Kind { TopItem, FunctionStart, BodyItem, FunctionEnd } kind;
    antlr4::ParserRuleContext *ctx;
  };
  enum class State { Open, Closed, Abandoned };

  /// A posted body statement's nodes, entries [begin, end) of `nodes_`,
  /// and tokens [tokenBegin, tokenEnd).
  struct PostedNodes {
    size_t piece;
    size_t begin, end;
    size_t tokenBegin, tokenEnd;
  };

  void post(Piece::Kind kind, antlr4::ParserRuleContext *ctx);
  /// Deletes the nodes and tokens of the statements the builder is done
  /// with.
  void freeBuiltStatements();
  /// Posts the open top-level item: a function's last body item and its
  /// end, or the item itself.
  void closeTopItem();
  void flush();
  void run();
  /// The pieces posted since the last call; false at the end of the build.
  bool take(std::vector<Piece> &work);
  void build(const Piece &piece);
  void stop(State state);

  DiagnosticEngine diags_;
  IRBuilder builder_;
  std::vector<Piece> batch_;                         // the parser's, handed over in batches
  antlr4::ParserRuleContext *openTopItem_ = nullptr; // entered, not yet posted
  antlr4::ParserRuleContext *openBodyItem_ = nullptr;
  static constexpr size_t kNoNode = static_cast<size_t>(-1);
  /// Tokens behind the parser's position that are never released.
  static constexpr size_t kTokensKept = 64;
  size_t openBodyItemNode_ = kNoNode; // its index in nodes_
  std::vector<antlr4::tree::ParseTree *> *nodes_ = nullptr;
  SourceTokenStream *tokens_ = nullptr;
  std::deque<PostedNodes> posted_; // the parser's, oldest first
  size_t postedPieces_ = 0;
  std::atomic<size_t> builtPieces_{0}; // the builder's count, in posting order
  std::mutex mutex_;
  std::condition_variable ready_;
  std::vector<Piece> queue_;
  State state_ = State::Open;
  std::exception_ptr failure_;
  std::thread thread_;
};

/// The nodes a ParseTreeTracker made (its private `_allocated`): ANTLR 4.9
/// offers no way to free part of a tree, only all of it.
std::vector<antlr4::tree::ParseTree *> &trackedNodes(antlr4::tree::ParseTreeTracker &tracker);

/// The generated parser, telling a BuildWhileParsing (when it has one) each
/// rule it enters. (Generated rules call the virtual enterRule.) Its token
/// stream is a SourceTokenStream.
class StreamingParser final : public shd::ShdParser {
public:
  using shd::ShdParser::ShdParser;
  void streamTo(BuildWhileParsing *build) {
    build_ = build;
    if (build)
      build->freeStatementsOf(&trackedNodes(_tracker), static_cast<SourceTokenStream *>(_input));
  }
  /// ANTLR 4.9's Parser::enterRule, with a static_cast where it makes a
  /// dynamic_cast per rule to add the context to its parent (a rule
  /// context's parent is always one), then the builder told.
  void enterRule(antlr4::ParserRuleContext *ctx, size_t state, size_t ruleIndex) override {
    setState(state);
    _ctx = ctx;
    _ctx->start = _input->LT(1);
    if (_buildParseTrees && ctx->parent)
      static_cast<antlr4::ParserRuleContext *>(ctx->parent)->addChild(ctx);
    if (!_parseListeners.empty())
      triggerEnterRuleEvent();
    if (build_)
      build_->entered(ctx, ruleIndex);
  }

private:
  BuildWhileParsing *build_ = nullptr;
};

} // namespace shardc::frontend
