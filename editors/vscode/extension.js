// The VS Code client: starts shardc-lsp (setting shardc.serverPath) on
// stdin/stdout for .shd files. Everything else is the server's.
const vscode = require("vscode");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const config = vscode.workspace.getConfiguration("shardc");
  const command = config.get("serverPath", "shardc-lsp");
  const serverOptions = {
    run: { command, transport: TransportKind.stdio },
    debug: { command, transport: TransportKind.stdio },
  };
  const clientOptions = {
    documentSelector: [{ scheme: "file", language: "shd" }],
    initializationOptions: { explicit: config.get("explicit", false) },
  };
  client = new LanguageClient("shardc-lsp", "shardc language server", serverOptions,
                              clientOptions);
  client.start();
  context.subscriptions.push({ dispose: () => client && client.stop() });
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
