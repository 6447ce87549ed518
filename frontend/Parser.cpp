// Source text -> IR: runs the ANTLR parser, then builds the IR from the parse
// tree (frontend/IRBuilder.h), or, for a large file, builds it on a second
// thread while the parser reads (frontend/BuildWhileParsing.h). The builder
// resolves SSA names, decodes tensor types, shardings, priorities, literals
// and attributes, and reports each error at its token.
//
// When the text has syntax errors the builder does not run: a tree that the
// parser repaired would only produce follow-on errors. All syntax errors are
// still reported (the parser recovers at the next statement).
#include "frontend/Parser.h"
#include "frontend/BuildWhileParsing.h"
#include "frontend/IRBuilder.h"
#include "frontend/Lexer.h"
#include "frontend/SourceInput.h"

#include <fmt/format.h>
#include <mutex>
#include <optional>
#include <thread>

namespace shardc {
namespace frontend {

// ---- the module ------------------------------------------------------------------

void IRBuilder::build(P::ModuleContext *ctx) {
  beginModule();
  for (P::TopItemContext *item : ctx->topItem()) {
    if (P::FuncDefContext *f = item->funcDef()) {
      beginFunction(f, f->block()->children.size());
      for (antlr4::tree::ParseTree *child : f->block()->children)
        buildBodyItem(child);
      endFunction(f);
    } else {
      buildTopItem(item);
    }
  }
  endModule();
}

void IRBuilder::beginModule() {
  module_.file = &file_;
  module_.snippet.loc = Loc{&file_, 1, 1, 1};
  // Top-level snippets share one scope; each function opens its own.
  scopes_.emplace_back();
}

void IRBuilder::endModule() { scopes_.clear(); }

void IRBuilder::buildTopItem(P::TopItemContext *item) {
  if (item->meshDef()) {
    buildMesh(item->meshDef());
  } else if (P::ValueDeclContext *d = item->valueDecl()) {
    Annotated a;
    if (d->topAnnotatedType())
      a = buildAnnotated(d->topAnnotatedType());
    else
      a.sharding = buildSharding(d->sharding());
    addParam(module_.snippet.body, d->VALUE(), std::move(a));
  } else if (P::TopStatementContext *s = item->topStatement()) {
    buildStatement(s->VALUE(), s->opExpr(), buildTypeSpec(s->topTypeSpec()), module_.snippet.body);
  } else if (P::ShardedTypeDeclContext *t = item->shardedTypeDecl()) {
    ShardedTypeDecl decl;
    decl.sharding = buildSharding(t->sharding());
    decl.loc = loc(t);
    decl.typeLoc = loc(t->tensorType());
    if (auto type = buildType(t->tensorType())) {
      decl.type = *type;
      module_.typeDecls.push_back(std::move(decl));
    }
  }
}

// ---- meshes ------------------------------------------------------------------------

void IRBuilder::buildMesh(P::MeshDefContext *ctx) {
  auto mesh = std::make_unique<Mesh>();
  mesh->name = ctx->SYMBOL()->getText().substr(1);
  mesh->loc = loc(ctx->SYMBOL());
  P::MeshBodyContext *body = ctx->meshBody();
  if (P::MeshAxesContext *axes = body->meshAxes()) {
    for (P::MeshAxisContext *a : axes->meshAxis()) {
      MeshAxis axis;
      axis.name = unquote(a->STRING()->getText());
      axis.loc = loc(a->STRING());
      axis.size = parseInt(a->INT()).value_or(0);
      mesh->axes.push_back(std::move(axis));
    }
  }
  if (P::DeviceIdsContext *ids = body->deviceIds()) {
    mesh->deviceIdsWritten = true;
    mesh->deviceIdsLoc = loc(ids);
    for (antlr4::tree::TerminalNode *n : ids->INT())
      mesh->deviceIds.push_back(parseInt(n).value_or(-1));
  }
  if (P::AxisTypesContext *types = body->axisTypes()) {
    mesh->axisTypesWritten = true;
    mesh->axisTypesLoc = loc(types);
    for (antlr4::tree::TerminalNode *word : types->IDENT())
      mesh->axisTypes.push_back({word->getText(), loc(word)});
    // The verifier reports a wrong count or word; a right one sets the types.
    for (size_t i = 0; i < mesh->axisTypes.size() && i < mesh->axes.size(); ++i)
      mesh->axes[i].type = parseAxisType(mesh->axisTypes[i].word).value_or(AxisType::Auto);
  }
  module_.meshes.push_back(std::move(mesh));
}

} // namespace frontend

namespace {

/// From this size on (about 1,500 statements) a file is built while it is
/// parsed where there is a second core: the thread costs tens of
/// microseconds, the parse of 64 KiB a few milliseconds.
constexpr size_t kBuildWhileParsingBytes = 64 * 1024;

/// The lexer, token stream and parser of one parse: they own its tokens and
/// its tree.
struct ParseMachinery {
  explicit ParseMachinery(const SourceFile &file)
      : input(file.text(), file.name()), lexer(input), tokens(lexer), parser(&tokens) {}
  frontend::Utf8CharStream input;
  frontend::ShdTokenSource lexer;
  frontend::SourceTokenStream tokens;
  frontend::StreamingParser parser;
};

/// Frees a built parse's tokens and tree on a thread of its own while the
/// passes run: at 100,000 ops that is about a million small objects, some
/// 0.05-0.1 s. The next parse, and the end of the process, wait for it
/// first (so no two ANTLR parsers are ever alive on two threads).
class BackgroundRelease {
public:
  ~BackgroundRelease() { wait(); }
  void wait() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (thread_.joinable())
      thread_.join();
  }
  void release(std::unique_ptr<ParseMachinery> machinery) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (thread_.joinable())
      thread_.join();
    thread_ = std::thread([m = std::move(machinery)]() mutable { m.reset(); });
  }

private:
  std::mutex mutex_; // (parses on two threads at once share this)
  std::thread thread_;
};

BackgroundRelease &backgroundRelease() {
  static BackgroundRelease release;
  return release;
}

/// Byte offset of the first invalid UTF-8 sequence, or npos. ANTLR's input
/// stream throws on invalid UTF-8, so this is checked first.
size_t firstInvalidUtf8(std::string_view text) {
  size_t i = 0;
  while ((i = skipPrintableAscii(text, i)) < text.size()) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    size_t width = c < 0x80           ? 1
                   : (c >> 5) == 0x6  ? 2
                   : (c >> 4) == 0xE  ? 3
                   : (c >> 3) == 0x1E ? 4
                                      : 0;
    if (width == 0 || i + width > text.size())
      return i;
    for (size_t k = 1; k < width; ++k)
      if ((static_cast<unsigned char>(text[i + k]) >> 6) != 0x2)
        return i;
    i += width;
  }
  return std::string_view::npos;
}

} // namespace

std::unique_ptr<Module> parseModule(const SourceFile &file, DiagnosticEngine &diags, IRBuild when) {
  size_t bad = firstInvalidUtf8(file.text());
  if (bad != std::string_view::npos) {
    // Find the line and column of the bad byte for the diagnostic.
    int line = 1;
    size_t lineStart = 0;
    for (size_t i = 0; i < bad; ++i)
      if (file.text()[i] == '\n') {
        ++line;
        lineStart = i + 1;
      }
    diags.error(Loc{&file, line, static_cast<int>(bad - lineStart) + 1, 1},
                fmt::format("invalid UTF-8 byte 0x{:02X}: the file is not UTF-8 text",
                            static_cast<unsigned char>(file.text()[bad])));
    return nullptr;
  }
  if (file.text().find('\0') != std::string::npos) {
    size_t at = file.text().find('\0');
    diags.error(Loc{&file, 0, 0, 1}, fmt::format("file is not text: NUL byte at offset {}", at));
    return nullptr;
  }

  // The hand-written lexer never fails: a character no token takes is a
  // BAD_CHAR token, which the parser reports.
  backgroundRelease().wait();
  auto machinery = std::make_unique<ParseMachinery>(file);
  frontend::SourceTokenStream &tokens = machinery->tokens;
  frontend::StreamingParser &parser = machinery->parser;
  SyntaxErrorListener listener(file, diags);
  parser.removeErrorListeners();

  // Two stages (ANTLR's recommended practice): the fast SLL prediction mode
  // with bail-out parses every valid file; only a file it rejects is parsed
  // again in full LL mode, which also gives the exact error positions.
  // During the SLL stage the IR may be built on a second thread.
  auto module = std::make_unique<Module>();
  std::optional<frontend::BuildWhileParsing> streamed;
  if (when == IRBuild::WhileParsing ||
      (when == IRBuild::Auto && file.text().size() >= kBuildWhileParsingBytes &&
       std::thread::hardware_concurrency() > 1)) {
    streamed.emplace(file, *module);
    parser.streamTo(&*streamed);
  }
  shd::ShdParser::ModuleContext *tree = nullptr;
  parser.getInterpreter<antlr4::atn::ParserATNSimulator>()->setPredictionMode(
      antlr4::atn::PredictionMode::SLL);
  parser.setErrorHandler(std::make_shared<antlr4::BailErrorStrategy>());
  try {
    tree = parser.module();
  } catch (const antlr4::ParseCancellationException &) {
    tree = nullptr;
  }
  if (streamed) {
    parser.streamTo(nullptr);
    const DiagnosticEngine &built = streamed->finish(tree != nullptr);
    if (tree) {
      diags.append(built);
      backgroundRelease().release(std::move(machinery));
      return module;
    }
    streamed.reset(); // a partial build of a file with syntax errors
    module = std::make_unique<Module>();
  }
  if (!tree) {
    if (tokens.releasedAny()) {
      // The build released the tokens of the statements it built: the text
      // is lexed again.
      machinery = std::make_unique<ParseMachinery>(file);
      machinery->parser.removeErrorListeners();
    } else {
      // The tokens stay buffered: the text is not lexed twice.
      tokens.seek(0);
      parser.reset();
    }
    frontend::StreamingParser &full = machinery->parser;
    full.addErrorListener(&listener);
    full.setErrorHandler(std::make_shared<antlr4::DefaultErrorStrategy>());
    full.getInterpreter<antlr4::atn::ParserATNSimulator>()->setPredictionMode(
        antlr4::atn::PredictionMode::LL);
    tree = full.module();
  }
  if (listener.errorCount() > 0)
    return nullptr;

  frontend::IRBuilder(file, diags, *module).build(tree);
  return module;
}

} // namespace shardc
