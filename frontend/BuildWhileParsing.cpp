#include "frontend/BuildWhileParsing.h"

namespace shardc::frontend {

namespace {

/// Pieces handed over at once: a lock and a wake-up per 256 statements.
constexpr size_t kBatch = 256;

bool isFunctionBody(antlr4::tree::ParseTree *block) {
  return block && isExactly<P::BlockContext>(block) && block->parent &&
         isExactly<P::FuncDefContext>(block->parent);
}

using Nodes = std::vector<antlr4::tree::ParseTree *>;
using NodesMember = Nodes antlr4::tree::ParseTreeTracker::*;

/// ParseTreeTracker::_allocated, reached the one standard way a private
/// member can be: its address as an argument of an explicit instantiation,
/// where access is not checked.
NodesMember trackerNodesMember();
template <NodesMember Member> struct TrackerNodesMember {
  friend NodesMember trackerNodesMember() { return Member; }
};
template struct TrackerNodesMember<&antlr4::tree::ParseTreeTracker::_allocated>;

} // namespace

Nodes &trackedNodes(antlr4::tree::ParseTreeTracker &tracker) {
  return tracker.*trackerNodesMember();
}

BuildWhileParsing::BuildWhileParsing(const SourceFile &file, Module &module)
    : builder_(file, diags_, module) {
  batch_.reserve(kBatch);
  thread_ = std::thread([this] { run(); });
}

BuildWhileParsing::~BuildWhileParsing() {
  if (thread_.joinable())
    stop(State::Abandoned);
}

const DiagnosticEngine &BuildWhileParsing::finish(bool parsed) {
  if (parsed) {
    closeTopItem();
    flush();
  }
  stop(parsed ? State::Closed : State::Abandoned);
  if (parsed && failure_)
    std::rethrow_exception(failure_);
  return diags_;
}

void BuildWhileParsing::stop(State state) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    state_ = state;
  }
  ready_.notify_one();
  thread_.join();
}

void BuildWhileParsing::entered(antlr4::ParserRuleContext *ctx, size_t ruleIndex) {
  switch (ruleIndex) {
  case P::RuleTopItem:
    closeTopItem(); // the one before is complete
    openTopItem_ = ctx;
    break;
  case P::RuleBlock:
    // Entering a function's body: its name, parameters and result types are
    // parsed, and the body's `{` is its start token.
    if (isFunctionBody(ctx))
      post(Piece::FunctionStart, static_cast<antlr4::ParserRuleContext *>(ctx->parent));
    break;
  case P::RuleStatement:
  case P::RuleControlStmt:
  case P::RuleReturnStmt:
    if (isFunctionBody(ctx->parent)) {
      // The rule's context is the last node made: the statement before
      // made the nodes from its own context up to this one.
      size_t node =
          nodes_ && !nodes_->empty() && nodes_->back() == ctx ? nodes_->size() - 1 : kNoNode;
      if (openBodyItem_) { // the statement before is complete
        const antlr4::Token *start = openBodyItem_->start, *stop = openBodyItem_->stop;
        if (openBodyItemNode_ != kNoNode && node != kNoNode && start && stop &&
            stop->getTokenIndex() >= start->getTokenIndex())
          posted_.push_back(PostedNodes{postedPieces_, openBodyItemNode_, node,
                                        start->getTokenIndex(), stop->getTokenIndex() + 1});
        post(Piece::BodyItem, openBodyItem_);
      }
      openBodyItem_ = ctx;
      openBodyItemNode_ = node;
    }
    break;
  default:
    break;
  }
}

void BuildWhileParsing::closeTopItem() {
  if (!openTopItem_)
    return;
  if (openBodyItem_)
    post(Piece::BodyItem, openBodyItem_);
  openBodyItem_ = nullptr;
  openBodyItemNode_ = kNoNode;
  antlr4::tree::ParseTree *first =
      openTopItem_->children.empty() ? nullptr : openTopItem_->children.front();
  if (first && isExactly<P::FuncDefContext>(first))
    post(Piece::FunctionEnd, static_cast<antlr4::ParserRuleContext *>(first));
  else
    post(Piece::TopItem, openTopItem_);
  openTopItem_ = nullptr;
}

void BuildWhileParsing::post(Piece::Kind kind, antlr4::ParserRuleContext *ctx) {
  batch_.push_back(Piece{kind, ctx});
  ++postedPieces_;
  if (batch_.size() == kBatch)
    flush();
}

void BuildWhileParsing::freeBuiltStatements() {
  size_t built = builtPieces_.load(std::memory_order_acquire);
  // The parser looks back a token or two (a rule's stop token is the one
  // before the next): the tokens near it stay.
  size_t parsedTokens = tokens_ ? tokens_->index() : 0;
  while (!posted_.empty() && posted_.front().piece < built &&
         posted_.front().tokenEnd + kTokensKept <= parsedTokens) {
    const PostedNodes &done = posted_.front();
    for (size_t i = done.begin; i < done.end; ++i) {
      delete (*nodes_)[i];
      (*nodes_)[i] = nullptr;
    }
    tokens_->releaseTokens(done.tokenBegin, done.tokenEnd);
    posted_.pop_front();
  }
}

void BuildWhileParsing::flush() {
  if (batch_.empty())
    return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.insert(queue_.end(), batch_.begin(), batch_.end());
  }
  batch_.clear();
  ready_.notify_one();
  if (nodes_ && tokens_)
    freeBuiltStatements();
}

bool BuildWhileParsing::take(std::vector<Piece> &work) {
  work.clear();
  std::unique_lock<std::mutex> lock(mutex_);
  ready_.wait(lock, [&] { return !queue_.empty() || state_ != State::Open; });
  if (state_ == State::Abandoned)
    return false;
  work.swap(queue_);
  return !work.empty(); // closed and drained: the end
}

void BuildWhileParsing::run() {
  try {
    builder_.beginModule();
    std::vector<Piece> work;
    work.reserve(kBatch);
    size_t built = 0;
    while (take(work))
      for (const Piece &piece : work) {
        build(piece);
        builtPieces_.store(++built, std::memory_order_release);
      }
    builder_.endModule();
  } catch (...) {
    failure_ = std::current_exception();
  }
}

void BuildWhileParsing::build(const Piece &piece) {
  switch (piece.kind) {
  case Piece::TopItem:
    builder_.buildTopItem(static_cast<P::TopItemContext *>(piece.ctx));
    break;
  case Piece::FunctionStart:
    builder_.beginFunction(static_cast<P::FuncDefContext *>(piece.ctx), 0);
    break;
  case Piece::BodyItem:
    builder_.buildBodyItem(piece.ctx);
    break;
  case Piece::FunctionEnd:
    builder_.endFunction(static_cast<P::FuncDefContext *>(piece.ctx));
    break;
  }
}

} // namespace shardc::frontend
