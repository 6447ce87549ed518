"""End to end through real executables (issue 5): every program with a @main
that compiles -- the examples and the lit programs (no expected errors, no
split-input chunks), except those whose own RUN lines already do all of
this -- is built with `shardc -o`, run under MPICH's mpiexec
at its device count (the executable's --help says how many) on random
inputs, and its outputs compared with the reference interpreter's
(`shardc --interpret`) on the same inputs. Prints one line per program and
exits 1 when any differs or fails, or when fewer than MIN programs ran.
`--every N` before a DIR keeps one of every N programs of the DIRs after it
(the sanitizer build's sample, see lit_programs.py).

usage: run_all.py SHARDC NPY_COMPARE MPIEXEC WORK_DIR MIN [--every N] DIR...
"""
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
from lit_programs import runnable_programs  # noqa: E402

shardc, compare, mpiexec, work, minimum = sys.argv[1:6]
dirs = []  # (DIR, every)
every = 1
args = iter(sys.argv[6:])
for arg in args:
    if arg == "--every":
        every = int(next(args))
    else:
        dirs.append((arg, every))


def checks_itself(text):
    """Whether the program's own RUN lines already do what this script does:
    build it with no flags, run it under mpiexec and compare its outputs with
    the interpreter's (most of tests/lit/exec). Running it again here would
    only repeat that, at a tenth of the suite's time."""
    return ("RUN: %shardc %s -o " in text and "RUN: %mpiexec " in text
            and "RUN: %npy-compare " in text)


programs = [(top, path) for top, every in dirs
            for path in runnable_programs(top, checks_itself, every)]


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=300, **kw)


failed = 0
checked = 0
for top, path in programs:
    rel = os.path.join(os.path.basename(top.rstrip("/")), os.path.relpath(path, top))
    # Programs that the checks reject on purpose (RUN: not %shardc) are skipped.
    if run([shardc, path, "--verify-only"]).returncode != 0:
        continue
    out = os.path.join(work, rel.replace(os.sep, "_"))
    os.makedirs(out, exist_ok=True)
    exe = os.path.join(out, "prog")
    checked += 1
    build = run([shardc, path, "-o", exe])
    if build.returncode != 0:
        failed += 1
        print(f"FAIL {rel}: shardc -o: {build.stderr.strip()}")
        continue
    usage = run([exe, "--help"])
    match = re.search(r"mpirun -n (\d+)", usage.stdout)
    if usage.returncode != 0 or not match:
        failed += 1
        print(f"FAIL {rel}: --help: {usage.stdout.strip()} {usage.stderr.strip()}")
        continue
    ranks = match.group(1)
    native = run([mpiexec, "-n", ranks, exe, "--random-inputs", "1", "--output-dir",
                  os.path.join(out, "native")])
    interp = run([shardc, path, "--interpret", "--random-inputs", "1", "--output-dir",
                  os.path.join(out, "global")])
    if native.returncode != 0 or interp.returncode != 0:
        failed += 1
        print(f"FAIL {rel} (-n {ranks}): " +
              " | ".join(r.stderr.strip() for r in (native, interp) if r.returncode))
        continue
    cmp = run([compare, os.path.join(out, "native"), os.path.join(out, "global"),
               "--rtol", "1e-4", "--atol", "1e-4"])
    if cmp.returncode != 0:
        failed += 1
        print(f"FAIL {rel} (-n {ranks}): {cmp.stdout.strip()} {cmp.stderr.strip()}")
    else:
        print(f"ok {rel} (-n {ranks})")
print(f"{checked - failed} passed, {failed} failed")
sys.exit(1 if failed or checked < int(minimum) else 0)
