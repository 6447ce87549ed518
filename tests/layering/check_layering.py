#!/usr/bin/env python3
"""The layering rules of the source tree, checked on every #include.

1. A stage's internal header (a *Internal.h file) is private to its folder:
   only files in the same folder include it.
2. Tests include the compiler's public headers only: no file under tests/
   includes a *Internal.h of the compiler (a test folder's own private header,
   such as tests/diff/RandomProgramInternal.h, follows rule 1).
3. The language server and the front half of the compiler do not reach into
   the LLVM backend: nothing under frontend/, ir/, passes/ or tools/shardc-lsp/
   includes backend/llvm/ headers.

Usage: check_layering.py SOURCE_DIR. Prints each violation as
`file:line: rule - what` and exits 1 when there is any.
"""
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
FRONT_HALF = ("frontend/", "ir/", "passes/", "tools/shardc-lsp/")


def violations(root):
    for path in sorted(root.rglob("*")):
        if path.suffix not in (".h", ".cpp") or not path.is_file():
            continue
        rel = path.relative_to(root).as_posix()
        if rel.startswith(("build", ".git")) or "/fixtures/" in rel:
            continue
        folder = rel.rsplit("/", 1)[0] if "/" in rel else ""
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            match = INCLUDE.match(line)
            if not match:
                continue
            header = match.group(1)
            where = f"{rel}:{number}"
            if header.endswith("Internal.h"):
                header_folder = header.rsplit("/", 1)[0] if "/" in header else folder
                if rel.startswith("tests/") and not header.startswith("tests/"):
                    yield f"{where}: tests use public headers - includes {header}"
                elif header_folder != folder:
                    yield f"{where}: internal header of another folder - includes {header}"
            if rel.startswith(FRONT_HALF) and header.startswith("backend/llvm/"):
                yield f"{where}: front half includes the LLVM backend - includes {header}"


def main():
    if len(sys.argv) != 2:
        print("usage: check_layering.py SOURCE_DIR", file=sys.stderr)
        return 2
    found = list(violations(pathlib.Path(sys.argv[1])))
    for v in found:
        print(v)
    if found:
        print(f"{len(found)} layering violation(s)")
        return 1
    print("layering: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
