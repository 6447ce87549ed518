"""Prints the text of the first textDocument/didOpen message of a lit-test
session file, so a test can check it equals the file the CLI compiles."""
import json
import sys

for line in open(sys.argv[1], encoding="utf-8"):
    if '"textDocument/didOpen"' in line:
        sys.stdout.write(json.loads(line)["params"]["textDocument"]["text"])
        break
