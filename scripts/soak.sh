#!/usr/bin/env bash
# Soak test of the differential checker (issue 16): N random programs from the
# generator (tests/diff/RandomProgram.cpp), each checked --interpret ==
# --simulate in process, in parallel chunks over the cores; then a sample of
# them (every SAMPLE-th seed, default 1000) built into executables and run
# under mpiexec at their device count (1 to 8 ranks) against --interpret.
# Prints a summary: seeds run, passed, failures by kind with the first seeds
# of each, and how to replay one. Exit 1 when anything failed.
# Usage: scripts/soak.sh N [FIRST_SEED] [SAMPLE]     (builds build/ first)
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ $# -lt 1 || ! "$1" =~ ^[0-9]+$ || "$1" -eq 0 ]]; then
  echo "usage: scripts/soak.sh N [FIRST_SEED] [SAMPLE]   (N seeds, N > 0)" >&2
  exit 2
fi
count=$1
first=${2:-0}
sample=${3:-1000}
if [[ ! "$first" =~ ^[0-9]+$ || ! "$sample" =~ ^[0-9]+$ || "$sample" -eq 0 ]]; then
  echo "soak.sh: FIRST_SEED and SAMPLE are numbers, SAMPLE > 0" >&2
  exit 2
fi
jobs=$(nproc)
cmake --build build -j "$jobs" --target shardc shardc-difftest shardc-npy-compare shardrt >/dev/null

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
difftest=build/tests/diff/shardc-difftest
start=$SECONDS

# 1. --interpret == --simulate, one chunk per core.
chunk=$(((count + jobs - 1) / jobs))
pids=()
for ((j = 0; j < jobs; ++j)); do
  b=$((first + j * chunk))
  e=$((b + chunk))
  ((e > first + count)) && e=$((first + count))
  ((b >= e)) && continue
  "$difftest" --seeds "$b:$e" --quiet >"$work/chunk$j.log" 2>&1 &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || true; done
cat "$work"/chunk*.log >"$work/all.log"
passed=$(grep -oE '^[0-9]+ passed' "$work/all.log" | awk '{s += $1} END {print s + 0}')
failed=$(grep -oE '[0-9]+ failed' "$work/all.log" | awk '{s += $1} END {print s + 0}')

# 2. The sample through real executables under mpiexec.
mkdir -p "$work/programs"
for ((s = first; s < first + count; s += sample)); do
  "$difftest" --seeds "$s" --write-programs "$work/programs" --quiet >/dev/null
done
sampled=$(ls "$work/programs" | wc -l)
mpi_out=$(python3 tests/lit/exec/Inputs/run_all.py build/tools/shardc/shardc \
            build/tools/shardc-npy-compare/shardc-npy-compare mpiexec.mpich "$work/mpi" 0 \
            "$work/programs" 2>&1 || true)
mpi_failed=$(grep -c '^FAIL' <<<"$mpi_out" || true)

echo "soak: seeds $first:$((first + count)) in $((SECONDS - start)) s ($jobs processes)"
echo "  --interpret == --simulate: $passed passed, $failed failed"
kinds=(
  "mismatch (simulated vs interpreted)|differs \\(simulated vs interpreted\\)"
  "internal error (exit 3)|internal error"
  "--simulate failed|--simulate failed"
  "--interpret failed|--interpret failed"
  "invalid program (a generator bug)|--emit=[a-z]+ failed"
  "crash|terminate|Aborted|Segmentation"
)
for kind in "${kinds[@]}"; do
  label=${kind%%|*}
  pattern=${kind#*|}
  seeds=$(grep -E "^FAIL seed [0-9]+: .*($pattern)" "$work/all.log" | grep -oE 'seed [0-9]+' |
            awk '{print $2}' | head -5 | paste -sd, - || true)
  n=$(grep -cE "^FAIL seed [0-9]+: .*($pattern)" "$work/all.log" || true)
  if ((n > 0)); then echo "    $label: $n (first seeds: $seeds)"; fi
done
echo "  executables under mpiexec (every ${sample}th seed): $((sampled - mpi_failed)) of $sampled equal --interpret"
grep '^FAIL' <<<"$mpi_out" | head -5 | sed 's/^/    /' || true
if ((failed > 0 || mpi_failed > 0)); then
  echo "  replay one: $difftest --seeds SEED --print"
  exit 1
fi
