// The language server: the LSP lifecycle, the open documents, and the
// dispatch of each request to its feature (Features.h).
//
// One thread. Diagnostics are computed on open and on every change; for a
// large document a change only marks it stale and the analysis runs once
// the editor has been quiet for kDebounceMs (the read times out) or a
// request needs it, whichever comes first.
#pragma once

#include "tools/shardc-lsp/Analysis.h"
#include "tools/shardc-lsp/Features.h"
#include "tools/shardc-lsp/TextDocument.h"
#include "tools/shardc-lsp/Transport.h"

#include <chrono>
#include <map>
#include <memory>
#include <string>

namespace shardc::lsp {

struct ServerOptions {
  AnalysisOptions analysis;
  /// Debounce large documents (off in --lit-test mode, where every change
  /// is analysed at once so the output is deterministic).
  bool debounce = true;
};

class Server {
public:
  Server(Transport &transport, ServerOptions options);

  /// Serves until `exit` (or the input ends). Returns the process exit code:
  /// 0 after shutdown + exit, 1 otherwise (LSP's rule).
  int run();

private:
  using Clock = std::chrono::steady_clock;

  struct Document {
    std::unique_ptr<TextDocument> text;
    std::unique_ptr<Analysis> analysis; // null while stale
    Clock::time_point due;              // when a stale analysis runs
    std::vector<MeshNames> lastMeshes;  // of the last version that parsed
  };

  void handle(const nlohmann::json &message);
  /// A request's result; throws RpcError or nlohmann::json::exception.
  nlohmann::json request(const std::string &method, const nlohmann::json &params);
  /// initializationOptions' memoryBudget and costModel: the solver's options.
  void applySolverOptions(const nlohmann::json &init);
  void notification(const std::string &method, const nlohmann::json &params);

  void didOpen(const nlohmann::json &params);
  void didChange(const nlohmann::json &params);
  void didClose(const nlohmann::json &params);
  /// Analyses a document now and publishes its diagnostics.
  void analyze(Document &doc);
  /// The document a request names, analysed; throws when it is not open.
  Document &analyzed(const nlohmann::json &params);
  /// Runs the stale analyses whose time has come; returns how long until
  /// the next one is due (-1: none pending).
  int runDueAnalyses();

  void reply(const nlohmann::json &id, nlohmann::json result);
  void replyError(const nlohmann::json &id, int code, const std::string &message);

  Transport &transport_;
  ServerOptions options_;
  std::map<std::string, Document> documents_;
  bool initialized_ = false;
  bool shutdown_ = false;
  bool exited_ = false;
};

} // namespace shardc::lsp
