// shardc-lsp: the language server for .shd files. It speaks LSP on stdin
// and stdout and reuses the compiler (tools/shardc/Pipeline.h), so the
// editor shows exactly what `shardc` would say.
//
//   shardc-lsp                 serve an editor (Content-Length framed JSON-RPC)
//   shardc-lsp --lit-test      read `// -----` separated messages, print
//                              pretty JSON with sorted keys (for lit tests)
//   shardc-lsp --explicit      JAX sharding in types, as `shardc --explicit`
//   shardc-lsp --auto-shard    inlay hints show the solver's shardings, as
//                              `shardc --auto-shard` chooses them
//     [--memory-budget BYTES] [--cost-model FILE.json]   the solver's options
#include "passes/auto_shard/AutoShard.h"
#include "tools/shardc-lsp/Server.h"
#include "tools/shardc-lsp/Transport.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>
#include <iterator>
#include <unistd.h>

int main(int argc, char **argv) {
  CLI::App app{"shardc-lsp: the language server for .shd files (LSP on stdin/stdout)"};
  bool litTest = false;
  shardc::lsp::ServerOptions options;
  app.add_flag("--lit-test", litTest,
               "read messages separated by `// -----` lines from stdin (no Content-Length "
               "headers) and print replies as pretty JSON with sorted keys; for lit tests");
  app.add_flag("--explicit", options.analysis.explicitMode,
               "JAX sharding in types (shardc --explicit); also initializationOptions "
               "{\"explicit\": true}");
  app.add_flag("--auto-shard", options.analysis.autoShard,
               "show the shardings `shardc --auto-shard` chooses as inlay hints; also "
               "initializationOptions {\"autoShard\": true}");
  app.add_option_function<std::string>(
         "--memory-budget",
         [&options](const std::string &text) {
           std::optional<int64_t> bytes = shardc::parseByteSize(text);
           if (!bytes)
             throw CLI::ValidationError("--memory-budget",
                                        "expected a positive byte count such as 1048576, 512MiB "
                                        "or 2GiB, got '" +
                                            text + "'");
           options.analysis.autoShardOptions.memoryBudget = *bytes;
         },
         "with --auto-shard: the solver's memory budget per device, as shardc's (suffixes KiB, "
         "MiB, GiB); also initializationOptions {\"memoryBudget\": \"512MiB\"}")
      ->type_name("BYTES");
  app.add_option("--cost-model", options.analysis.autoShardOptions.costModelPath,
                 "with --auto-shard: the machine's rates as JSON, as shardc's; also "
                 "initializationOptions {\"costModel\": \"FILE.json\"}")
      ->type_name("FILE.json");
  app.set_version_flag("--version", std::string("shardc-lsp version ") + SHARDC_VERSION);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    app.exit(e);
    return e.get_exit_code() ? 2 : 0;
  }

  std::unique_ptr<shardc::lsp::Transport> transport;
  if (litTest) {
    std::string text(std::istreambuf_iterator<char>(std::cin), {});
    transport = shardc::lsp::makeLitTestTransport(std::move(text), stdout);
    options.debounce = false;
  } else {
    transport = shardc::lsp::makeStreamTransport(STDIN_FILENO, stdout);
  }
  return shardc::lsp::Server(*transport, options).run();
}
