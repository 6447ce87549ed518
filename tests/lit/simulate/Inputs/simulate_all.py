"""Runs every lit program with a @main that compiles (no expected errors, no
split-input chunks) both ways: the global program (--interpret) and the
per-device program for every device (--simulate), on the same random
inputs, and compares the results with shardc-npy-compare. Prints one line
per program and exits 1 when any differs or fails. EVERY keeps one program
in that many (the sanitizer build's sample, see lit_programs.py).

usage: simulate_all.py SHARDC NPY_COMPARE LIT_DIR WORK_DIR [EVERY]
"""
import os
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
from lit_programs import runnable_programs  # noqa: E402

shardc, compare, lit_dir, work = sys.argv[1:5]
every = int(sys.argv[5]) if len(sys.argv) > 5 else 1
programs = runnable_programs(lit_dir, every=every)

failed = 0
checked = 0
for path in programs:
    rel = os.path.relpath(path, lit_dir)
    # Programs that the checks reject on purpose (RUN: not %shardc) are skipped.
    if subprocess.run([shardc, path, "--verify-only"], capture_output=True).returncode != 0:
        continue
    out = os.path.join(work, rel.replace(os.sep, "_"))
    runs = []
    for mode, sub in (("--interpret", "global"), ("--simulate", "devices")):
        runs.append(subprocess.run(
            [shardc, path, mode, "--random-inputs", "1", "--output-dir", os.path.join(out, sub)],
            capture_output=True, text=True))
    checked += 1
    if any(r.returncode != 0 for r in runs):
        failed += 1
        print(f"FAIL {rel}: " + " | ".join(r.stderr.strip() for r in runs if r.returncode))
        continue
    cmp = subprocess.run([compare, os.path.join(out, "devices"), os.path.join(out, "global"),
                          "--rtol", "1e-4", "--atol", "1e-4"], capture_output=True, text=True)
    if cmp.returncode != 0:
        failed += 1
        print(f"FAIL {rel}: {cmp.stdout.strip()} {cmp.stderr.strip()}")
    else:
        print(f"ok {rel}")
print(f"{checked - failed} passed, {failed} failed")
sys.exit(1 if failed or checked < 10 else 0)
