"""Robustness test (issue 6): replays hundreds of random edits (insertions
and deletions, some with non-ASCII text) to a valid file through incremental
sync, with hover, completion, definition and inlay hint requests at random
positions, over the real Content-Length framing. Checks that every request
is answered (never an internal error), that the server's text stayed in step
with ours (its final diagnostics equal the CLI's on our final text), and
that it shuts down cleanly. Deterministic (seeded); every read has a timeout.

Usage: random_edits.py SHARDC_LSP SHARDC FILE [--edits N] [--seed S]"""
import argparse
import json
import os
import random
import selectors
import subprocess
import sys
import tempfile
import time

TIMEOUT_S = 30
SNIPPETS = ['%', '@', '"', '{', '}', '[', ']', '<', '>', ',', ':', '=', ' ', '\n', 'x', '"y"',
            '@mesh', '%a', 'relu ', 'add ', 'sharding<@mesh, [{"x"}, {}]>', 'tensor<8x16xf32>',
            '// é ü 𝄞\n', '𝄞', 'é', '?', '(', ')', '0', '4', 'func @f() {\n', 'return ', '-> ']


class Server:
    def __init__(self, path):
        self.proc = subprocess.Popen([path], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.proc.stdout, selectors.EVENT_READ)
        self.buf = b""
        self.next_id = 1
        self.diagnostics = None

    def send(self, msg):
        body = json.dumps(msg).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def read(self):
        deadline = time.time() + TIMEOUT_S
        while True:
            end = self.buf.find(b"\r\n\r\n")
            if end >= 0:
                header = self.buf[:end].decode()
                length = int(header.split(":")[1])
                if len(self.buf) >= end + 4 + length:
                    body = self.buf[end + 4:end + 4 + length]
                    self.buf = self.buf[end + 4 + length:]
                    return json.loads(body)
            left = deadline - time.time()
            if left <= 0 or not self.sel.select(left):
                sys.exit("FAIL: no message from the server within %d s" % TIMEOUT_S)
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                sys.exit("FAIL: the server died (exit code %s)" % self.proc.wait())
            self.buf += chunk

    def request(self, method, params):
        rid = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            msg = self.read()
            if msg.get("method") == "textDocument/publishDiagnostics":
                self.diagnostics = msg["params"]["diagnostics"]
            elif msg.get("id") == rid:
                if "error" in msg and msg["error"]["code"] == -32603:
                    sys.exit("FAIL: %s: internal error %s" % (method, msg["error"]))
                return msg

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})


def position(text, index):
    """LSP position (UTF-16) of code point `index` of `text`."""
    before = text[:index]
    line = before.count("\n")
    col = before[before.rfind("\n") + 1:]
    return {"line": line, "character": len(col.encode("utf-16-le")) // 2}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("server")
    ap.add_argument("shardc")
    ap.add_argument("file")
    ap.add_argument("--edits", type=int, default=400)
    ap.add_argument("--seed", type=int, default=6)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    text = open(args.file, encoding="utf-8").read()
    uri = "file://" + os.path.abspath(args.file)

    s = Server(args.server)
    s.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
    s.notify("initialized", {})
    s.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "shd", "version": 1, "text": text}})
    answered = 0
    for version in range(2, args.edits + 2):
        a = rng.randrange(len(text) + 1)
        if rng.random() < 0.5 and text:
            b = min(len(text), a + rng.randrange(1, 12))
            new = ""
        else:
            b = a
            new = rng.choice(SNIPPETS)
        change = {"range": {"start": position(text, a), "end": position(text, b)}, "text": new}
        text = text[:a] + new + text[b:]
        s.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                            "contentChanges": [change]})
        at = position(text, rng.randrange(len(text) + 1))
        if rng.random() < 0.1:  # positions past the end of a line or of the file
            at = {"line": at["line"] + rng.randrange(3), "character": at["character"] + 50}
        doc = {"uri": uri}
        for method in ("textDocument/hover", "textDocument/completion",
                       "textDocument/definition"):
            s.request(method, {"textDocument": doc, "position": at})
            answered += 1
        if version % 25 == 0:
            for method, extra in (("textDocument/inlayHint", {"range": {
                    "start": {"line": 0, "character": 0}, "end": {"line": 999, "character": 0}}}),
                    ("textDocument/semanticTokens/full", {}),
                    ("textDocument/documentSymbol", {}),
                    ("textDocument/codeAction", {"range": {
                        "start": {"line": 0, "character": 0},
                        "end": {"line": 999, "character": 0}}, "context": {"diagnostics": []}})):
                s.request(method, dict(textDocument=doc, **extra))
                answered += 1

    # The server's text is ours: its diagnostics are the CLI's on our text.
    s.request("textDocument/documentSymbol", {"textDocument": {"uri": uri}})
    with tempfile.NamedTemporaryFile("w", suffix=".shd", encoding="utf-8", delete=False) as f:
        f.write(text)
    cli = subprocess.run([args.shardc, f.name, "--verify-only", "--diagnostics-format=json"],
                         capture_output=True, text=True)
    os.unlink(f.name)
    expected = [d["message"] for d in json.loads(cli.stderr)]
    got = [d["message"] for d in (s.diagnostics or [])]
    if expected != got:
        sys.exit("FAIL: server diagnostics %s != CLI %s\nfinal text:\n%s" % (got, expected, text))

    s.request("shutdown", None)
    s.notify("exit", None)
    code = s.proc.wait(timeout=TIMEOUT_S)
    if code != 0:
        sys.exit("FAIL: exit code %d after shutdown and exit" % code)
    print("ok: %d edits, %d requests answered, %d final diagnostics"
          % (args.edits, answered, len(got)))


if __name__ == "__main__":
    main()
