#include "frontend/BuildWhileParsing.h"

namespace shardc::frontend {

namespace {

/// Pieces handed over at once: a lock and a wake-up per 256 statements.
constexpr size_t kBatch = 256;

bool isFunctionBody(antlr4::tree::ParseTree *block) {
  return block && isExactly<P::BlockContext>(block) && block->parent &&
         isExactly<P::FuncDefContext>(block->parent);
}

} // namespace

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
      if (openBodyItem_) // the statement before is complete
        post(Piece::BodyItem, openBodyItem_);
      openBodyItem_ = ctx;
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
  if (batch_.size() == kBatch)
    flush();
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
    while (take(work))
      for (const Piece &piece : work)
        build(piece);
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
