"""The programs of a directory tree that the whole-suite lit tests run: every
.shd file with a @main that is meant to compile (no expected diagnostics, no
--split-input-file chunks, no `RUN: not %shardc %s` that says the compiler
rejects it), outside Inputs/ directories, in sorted order. A program whose
own RUN lines already run it end to end may opt out with a line
`// whole-suite: skip (REASON)`: slice_chain.shd's hundreds of millions of
multiply-adds took the reference interpreter ten minutes under ASan.
Shared by tests/lit/simulate and tests/lit/exec.

The sanitizer build runs the compiler and the interpreter several times
slower, so there the whole-suite tests take a fixed sample (`every`: the
first program and every N-th after it, in sorted order) and the optimized
build takes all of them (lit.cfg.py's %whole-suite-every)."""
import os


def runnable_programs(top, also_skip=None, every=1):
    """`also_skip(text)`: a caller's own reason to leave a program out, given
    its text (read once here); `every`: keep one program in that many."""
    programs = []
    for root, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d != "Inputs")
        for name in sorted(files):
            if not name.endswith(".shd"):
                continue
            path = os.path.join(root, name)
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            rejected = ("RUN: not %shardc %s" in text or "// whole-suite: skip" in text
                        or (also_skip is not None and also_skip(text)))
            if ("func @main" in text and "expected-" not in text
                    and "split-input-file" not in text and not rejected):
                programs.append(path)
    return programs[::every]
