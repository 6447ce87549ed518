"""Debounce test (issue 6): a large document (over 32 KiB) is analysed once
after a burst of changes, not once per change, and without any request
asking for it; a small one is analysed on every change.

Usage: debounce.py SHARDC_LSP FILE"""
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from random_edits import Server  # noqa: E402


def publishes(server, until_version):
    """Versions of the publishDiagnostics received up to `until_version`."""
    seen = []
    while not seen or seen[-1] < until_version:
        msg = server.read()
        if msg.get("method") == "textDocument/publishDiagnostics":
            seen.append(msg["params"]["version"])
    return seen


def run(path, text, changes):
    s = Server(path)
    s.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
    uri = "file:///debounce.shd"
    s.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "shd", "version": 1, "text": text}})
    for v in range(2, changes + 2):
        s.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": v},
                                            "contentChanges": [{
                                                "range": {"start": {"line": 0, "character": 0},
                                                          "end": {"line": 0, "character": 0}},
                                                "text": "// edit %d\n" % v}]})
    seen = publishes(s, changes + 1)
    s.request("shutdown", None)
    s.notify("exit", None)
    s.proc.wait(timeout=30)
    return seen


def main():
    server, file = sys.argv[1], sys.argv[2]
    small = open(file, encoding="utf-8").read()
    large = small + ("// padding to make the document large\n" * 1000)
    assert len(large.encode()) > 32 * 1024
    seen = run(server, small, 10)
    if seen != list(range(1, 12)):
        sys.exit("FAIL: small document: expected a publish per version, got %s" % seen)
    seen = run(server, large, 10)
    # Versions 1 and 11; a stall of the machine longer than the pause in the
    # middle of the burst may add one in between.
    if seen[0] != 1 or seen[-1] != 11 or len(seen) > 3:
        sys.exit("FAIL: large document: expected publishes for versions 1 and 11 "
                 "(one analysis after the burst), got %s" % seen)
    print("ok: small document published %d times, large one once after the burst" % 11)


if __name__ == "__main__":
    main()
