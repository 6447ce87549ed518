#!/usr/bin/env python3
"""Checks every ```shd code block of the README and docs/ with shardc.

A block must be a whole program. It passes when `shardc --verify-only` accepts
it, or, when it carries `// expected-error` (-warning, -note) comments, when
`shardc --verify-diagnostics` finds exactly the diagnostics it expects. A first
line `// shardc-docs: FLAGS` passes FLAGS (e.g. --explicit) to shardc.
Fragments that are not programs belong in ```text blocks.

Usage: check_docs.py --shardc PATH FILE_OR_DIR...
Prints each failing block as `file:line: ...` with shardc's diagnostics and
exits 1 when any fails; prints how many blocks passed otherwise.
"""
import argparse
import os
import pathlib
import re
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^```(\S*)\s*$")
FLAGS = re.compile(r"^//\s*shardc-docs:\s*(.*)$")
EXPECTATION = re.compile(r"//\s*expected-(error|warning|note|remark)")


def blocks(path):
    """Yields (first line number, text) of each ```shd block in `path`."""
    inside, start, body = None, 0, []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        match = FENCE.match(line.strip())
        if inside is None and match:
            inside, start, body = match.group(1), number + 1, []
        elif inside is not None and line.strip() == "```":
            if inside == "shd":
                yield start, "\n".join(body) + "\n"
            inside = None
        elif inside is not None:
            body.append(line)
    if inside is not None:
        raise SystemExit(f"{path}:{start - 1}: unterminated code block")


def check(shardc, text, path, start):
    """Returns shardc's complaint about one block, or None when it passes.

    Locations in shardc's diagnostics are rewritten from the temporary file to
    the page: `tmp.shd:3:5:` becomes `docs/x.md:(start + 2):5:`.
    """
    first = text.splitlines()[0] if text.strip() else ""
    flags_match = FLAGS.match(first.strip())
    flags = flags_match.group(1).split() if flags_match else []
    mode = "--verify-diagnostics" if EXPECTATION.search(text) else "--verify-only"
    with tempfile.NamedTemporaryFile("w", suffix=".shd", delete=False) as f:
        f.write(text)
        name = f.name
    try:
        run = subprocess.run([shardc, name, mode, *flags], capture_output=True, text=True,
                             timeout=60)
    finally:
        os.unlink(name)
    if run.returncode == 0:
        return None
    located = re.sub(re.escape(name) + r":(\d+):",
                     lambda m: f"{path}:{start + int(m.group(1)) - 1}:", run.stderr)
    return f"shardc {mode} {' '.join(flags)} exited {run.returncode}:\n{located}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shardc", required=True)
    parser.add_argument("paths", nargs="+")
    args = parser.parse_args()
    files = []
    for p in map(pathlib.Path, args.paths):
        files += sorted(p.rglob("*.md")) if p.is_dir() else [p]
    passed, failed = 0, 0
    for path in files:
        for line, text in blocks(path):
            problem = check(args.shardc, text, path, line)
            if problem is None:
                passed += 1
                continue
            failed += 1
            print(f"{path}:{line}: shd block does not check: {problem}")
    if failed:
        print(f"{failed} shd block(s) failed, {passed} passed")
        return 1
    if passed == 0:
        print("no shd blocks found")
        return 1
    print(f"{passed} shd blocks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
