#!/usr/bin/env bash
# Soak the differential tester: scripts/soak.sh N [BUILD_DIR] [MPI_EVERY]
# runs seeds 0..N-1 of shardc-difftest in chunks, one process per core, and
# prints the summary: seeds run, passed, failures by kind with their first
# seeds, the MPI sample by rank count, and how to replay a failing seed.
set -u
n=${1:?usage: scripts/soak.sh N [BUILD_DIR] [MPI_EVERY]}
build=${2:-build}
every=${3:-200}
tool="$build/tests/diff/shardc-difftest"
[ -x "$tool" ] || { echo "soak: no $tool (build the shardc-difftest target)" >&2; exit 2; }
jobs=$(nproc)
chunk=2000
out=$(mktemp -d /tmp/shardc-soak.XXXXXX)
start=$(date +%s)
seq 0 "$chunk" $((n - 1)) | xargs -P "$jobs" -I{} sh -c \
  'end=$(( {} + '"$chunk"' )); [ $end -gt '"$n"' ] && end='"$n"'; \
   "'"$tool"'" --seeds {}:$end --quiet --mpi-every '"$every"' --work-dir "'"$out"'/work-{}" \
     > "'"$out"'/chunk-{}.txt" 2>&1'
elapsed=$(( $(date +%s) - start ))
python3 - "$out" "$n" "$elapsed" <<'PY'
import glob, re, sys
out, n, elapsed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
passed = failed = 0
kinds, mpi = {}, {}
for path in glob.glob(f"{out}/chunk-*.txt"):
    for line in open(path, errors="replace"):
        if m := re.match(r"(\d+) passed, (\d+) failed", line):
            passed += int(m[1]); failed += int(m[2])
        elif m := re.match(r"kind (\S+) (\d+) seeds (.*)", line):
            k = kinds.setdefault(m[1], [0, []])
            k[0] += int(m[2]); k[1] += [int(s) for s in m[3].split()]
        elif m := re.match(r"mpi -n (\d+) (\d+)", line):
            mpi[int(m[1])] = mpi.get(int(m[1]), 0) + int(m[2])
print(f"soak: {passed + failed} of {n} seeds run in {elapsed} s, {passed} passed, {failed} failed")
for kind, (count, seeds) in sorted(kinds.items()):
    print(f"  {kind}: {count} (first seeds: {' '.join(map(str, sorted(seeds)[:8]))})")
print("  mpi sample: " + (", ".join(f"{c} at -n {r}" for r, c in sorted(mpi.items())) or "none"))
if kinds:
    seed = min(s for _, seeds in kinds.values() for s in seeds)
    print(f"replay one: shardc-difftest --seeds {seed} --verbose --mpi-every 1")
print(f"full logs: {out}/chunk-*.txt")
sys.exit(1 if failed or passed + failed != n else 0)
PY
