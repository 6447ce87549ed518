// The LSP lifecycle and dispatch (Server.h).
#include "tools/shardc-lsp/Server.h"

#include <fmt/format.h>

#include <cstdio>
#include <stdexcept>

namespace shardc::lsp {
namespace {

// JSON-RPC and LSP error codes.
constexpr int kParseError = -32700, kInvalidRequest = -32600, kMethodNotFound = -32601,
              kInvalidParams = -32602, kInternalError = -32603, kServerNotInitialized = -32002;

/// Documents at least this large are analysed after a quiet pause.
constexpr size_t kDebounceBytes = 32 * 1024;
constexpr int kDebounceMs = 300;

struct RpcError : std::runtime_error {
  RpcError(int code, const std::string &message) : std::runtime_error(message), code(code) {}
  int code;
};

void log(const std::string &message) { std::fprintf(stderr, "shardc-lsp: %s\n", message.c_str()); }

/// `file:///a/b%20c.shd` -> `/a/b c.shd`; any other URI is kept as it is.
std::string pathOf(const std::string &uri) {
  static const std::string kScheme = "file://";
  if (uri.compare(0, kScheme.size(), kScheme) != 0)
    return uri;
  std::string path;
  for (size_t i = kScheme.size(); i < uri.size(); ++i) {
    if (uri[i] == '%' && i + 2 < uri.size() && std::isxdigit(uri[i + 1]) &&
        std::isxdigit(uri[i + 2])) {
      path += static_cast<char>(std::stoi(uri.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      path += uri[i];
    }
  }
  return path;
}

nlohmann::json capabilities() {
  return {
      {"textDocumentSync", {{"openClose", true}, {"change", 2 /* incremental */}, {"save", false}}},
      {"hoverProvider", true},
      {"definitionProvider", true},
      {"referencesProvider", true},
      {"documentSymbolProvider", true},
      {"completionProvider", {{"triggerCharacters", {"@", "\"", "[", "{", ","}}}},
      {"codeActionProvider", {{"codeActionKinds", {"quickfix"}}}},
      {"inlayHintProvider", true},
      {"semanticTokensProvider", {{"legend", semanticTokensLegend()}, {"full", true}}},
  };
}

} // namespace

Server::Server(Transport &transport, ServerOptions options)
    : transport_(transport), options_(std::move(options)) {}

int Server::run() {
  while (!exited_) {
    int timeout = runDueAnalyses();
    Incoming in = transport_.read(timeout);
    switch (in.kind) {
    case Incoming::Kind::Timeout:
      continue;
    case Incoming::Kind::End:
      if (!shutdown_)
        log("input closed without shutdown and exit");
      return shutdown_ ? 0 : 1;
    case Incoming::Kind::Invalid:
      log(in.error);
      replyError(nullptr, kParseError, in.error);
      continue;
    case Incoming::Kind::Message:
      handle(in.message);
      continue;
    }
  }
  return shutdown_ ? 0 : 1;
}

void Server::handle(const nlohmann::json &message) {
  if (!message.is_object() || !message.contains("method") || !message["method"].is_string()) {
    if (message.is_object() && message.contains("id") && !message.contains("method"))
      return; // a response: this server sends no requests, so nothing waits for it
    log("invalid request: " + message.dump().substr(0, 200));
    nlohmann::json id = message.is_object() && message.contains("id") ? message["id"] : nullptr;
    replyError(id, kInvalidRequest, "invalid request: expected an object with a string \"method\"");
    return;
  }
  std::string method = message["method"];
  nlohmann::json params = message.value("params", nlohmann::json::object());
  if (!message.contains("id")) {
    try {
      notification(method, params);
    } catch (const std::exception &e) {
      log(fmt::format("{}: {}", method, e.what()));
    }
    return;
  }
  const nlohmann::json &id = message["id"];
  try {
    reply(id, request(method, params));
  } catch (const RpcError &e) {
    replyError(id, e.code, e.what());
  } catch (const nlohmann::json::exception &e) {
    replyError(id, kInvalidParams, fmt::format("{}: invalid params: {}", method, e.what()));
  } catch (const std::exception &e) {
    log(fmt::format("{}: internal error: {}", method, e.what()));
    replyError(id, kInternalError, fmt::format("{}: internal error: {}", method, e.what()));
  }
}

void Server::applySolverOptions(const nlohmann::json &init) {
  AutoShardOptions &solver = options_.analysis.autoShardOptions;
  if (init.contains("memoryBudget")) {
    const nlohmann::json &budget = init["memoryBudget"];
    std::optional<int64_t> bytes = budget.is_number_integer()
                                       ? std::optional<int64_t>(budget.get<int64_t>())
                                   : budget.is_string() ? parseByteSize(budget.get<std::string>())
                                                        : std::nullopt;
    if (!bytes || *bytes <= 0)
      throw RpcError(kInvalidParams, "initialize: memoryBudget - expected a positive byte count "
                                     "such as 1048576 or \"512MiB\"");
    solver.memoryBudget = *bytes;
  }
  if (init.contains("costModel")) {
    if (!init["costModel"].is_string())
      throw RpcError(kInvalidParams, "initialize: costModel - expected the path of a JSON file");
    solver.costModelPath = init["costModel"].get<std::string>();
  }
}

nlohmann::json Server::request(const std::string &method, const nlohmann::json &params) {
  if (method == "initialize") {
    if (initialized_)
      throw RpcError(kInvalidRequest, "initialize: the server is already initialized");
    initialized_ = true;
    if (params.contains("initializationOptions") && params["initializationOptions"].is_object()) {
      const nlohmann::json &init = params["initializationOptions"];
      options_.analysis.explicitMode = init.value("explicit", options_.analysis.explicitMode);
      options_.analysis.autoShard = init.value("autoShard", options_.analysis.autoShard);
      applySolverOptions(init);
    }
    return {{"capabilities", capabilities()},
            {"serverInfo", {{"name", "shardc-lsp"}, {"version", SHARDC_VERSION}}}};
  }
  if (!initialized_)
    throw RpcError(kServerNotInitialized, method + ": the server is not initialized yet");
  if (shutdown_)
    throw RpcError(kInvalidRequest, method + ": the server is shutting down");
  if (method == "shutdown") {
    shutdown_ = true;
    return nullptr;
  }

  auto position = [&] { return positionFromJson(params.at("position")); };
  if (method == "textDocument/hover") {
    Document &doc = analyzed(params);
    return hover(*doc.analysis, *doc.text, position());
  }
  if (method == "textDocument/definition") {
    Document &doc = analyzed(params);
    return definition(*doc.analysis, *doc.text, position());
  }
  if (method == "textDocument/references") {
    Document &doc = analyzed(params);
    bool withDeclaration =
        params.value("context", nlohmann::json::object()).value("includeDeclaration", true);
    return references(*doc.analysis, *doc.text, position(), withDeclaration);
  }
  if (method == "textDocument/documentSymbol") {
    Document &doc = analyzed(params);
    return documentSymbols(*doc.analysis, *doc.text);
  }
  if (method == "textDocument/completion") {
    Document &doc = analyzed(params);
    return completion(*doc.text, position(), doc.lastMeshes);
  }
  if (method == "textDocument/codeAction") {
    Document &doc = analyzed(params);
    return codeActions(*doc.analysis, *doc.text, params.at("range"));
  }
  if (method == "textDocument/inlayHint") {
    Document &doc = analyzed(params);
    const nlohmann::json &range = params.at("range");
    return inlayHints(*doc.analysis, *doc.text, range.at("start").at("line").get<int>(),
                      range.at("end").at("line").get<int>());
  }
  if (method == "textDocument/semanticTokens/full") {
    Document &doc = analyzed(params);
    return semanticTokens(*doc.analysis, *doc.text);
  }
  throw RpcError(kMethodNotFound, "method not found: " + method);
}

void Server::notification(const std::string &method, const nlohmann::json &params) {
  if (method == "exit") {
    exited_ = true;
    return;
  }
  if (!initialized_ || shutdown_)
    return; // LSP: notifications before initialize (or after shutdown) are dropped
  if (method == "initialized" || method.compare(0, 2, "$/") == 0 ||
      method == "textDocument/didSave" || method == "workspace/didChangeConfiguration")
    return;
  if (method == "textDocument/didOpen")
    return didOpen(params);
  if (method == "textDocument/didChange")
    return didChange(params);
  if (method == "textDocument/didClose")
    return didClose(params);
  log("ignored notification: " + method);
}

void Server::didOpen(const nlohmann::json &params) {
  const nlohmann::json &item = params.at("textDocument");
  std::string uri = item.at("uri");
  Document &doc = documents_[uri];
  doc.text = std::make_unique<TextDocument>(uri, item.value("version", int64_t(0)),
                                            item.at("text").get<std::string>());
  analyze(doc);
}

void Server::didChange(const nlohmann::json &params) {
  const nlohmann::json &id = params.at("textDocument");
  auto it = documents_.find(id.at("uri").get<std::string>());
  if (it == documents_.end())
    throw std::runtime_error("didChange for a document that is not open");
  Document &doc = it->second;
  for (const nlohmann::json &change : params.at("contentChanges"))
    doc.text->applyChange(change);
  doc.text->setVersion(id.value("version", doc.text->version() + 1));
  doc.analysis.reset();
  if (options_.debounce && doc.text->text().size() >= kDebounceBytes)
    doc.due = Clock::now() + std::chrono::milliseconds(kDebounceMs);
  else
    analyze(doc);
}

void Server::didClose(const nlohmann::json &params) {
  std::string uri = params.at("textDocument").at("uri");
  if (documents_.erase(uri))
    transport_.write({{"jsonrpc", "2.0"},
                      {"method", "textDocument/publishDiagnostics"},
                      {"params", {{"uri", uri}, {"diagnostics", nlohmann::json::array()}}}});
}

void Server::analyze(Document &doc) {
  doc.analysis =
      std::make_unique<Analysis>(pathOf(doc.text->uri()), doc.text->text(), options_.analysis);
  if (const Module *module = doc.analysis->module())
    doc.lastMeshes = meshNames(*module);
  transport_.write({{"jsonrpc", "2.0"},
                    {"method", "textDocument/publishDiagnostics"},
                    {"params",
                     {{"uri", doc.text->uri()},
                      {"version", doc.text->version()},
                      {"diagnostics", publishedDiagnostics(*doc.analysis, *doc.text)}}}});
}

Server::Document &Server::analyzed(const nlohmann::json &params) {
  std::string uri = params.at("textDocument").at("uri");
  auto it = documents_.find(uri);
  if (it == documents_.end())
    throw RpcError(kInvalidParams, "document not open: " + uri);
  if (!it->second.analysis)
    analyze(it->second);
  return it->second;
}

int Server::runDueAnalyses() {
  auto now = Clock::now();
  int wait = -1;
  for (auto &[uri, doc] : documents_) {
    if (doc.analysis)
      continue;
    if (doc.due <= now) {
      analyze(doc);
      continue;
    }
    int ms = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(doc.due - now).count() + 1);
    wait = wait < 0 ? ms : std::min(wait, ms);
  }
  return wait;
}

void Server::reply(const nlohmann::json &id, nlohmann::json result) {
  transport_.write({{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}});
}

void Server::replyError(const nlohmann::json &id, int code, const std::string &message) {
  transport_.write(
      {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}});
}

} // namespace shardc::lsp
