#!/bin/sh
# bench/run's model workloads when no Python imports torch
# (SHARDC_BENCH_TORCH_PYTHON=false): a full run fails at once, saying to
# install python3-torch; a smoke run (the test suite's) still checks the
# shardc program against the interpreter and says the peer was skipped.
# Usage: no_torch_test.sh SOURCE_DIR BUILD_DIR WORKDIR
set -eu
root=$1 build=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
export SHARDC_BENCH_TORCH_PYTHON=false
if python3 "$root/bench/run" --no-build --build-dir "$build" --only transformer \
    --out "$work/full.md" > "$work/full.txt" 2>&1; then
  echo "a full run without PyTorch passed"; cat "$work/full.txt"; exit 1
fi
grep -q "transformer FAILED: PyTorch is not installed.*python3-torch" "$work/full.txt" ||
  { echo "no message naming python3-torch:"; cat "$work/full.txt"; exit 1; }
grep -q "^- transformer: PyTorch is not installed" "$work/full.md" ||
  { echo "RESULTS.md does not name the failed workload:"; cat "$work/full.md"; exit 1; }
python3 "$root/bench/run" --smoke --no-build --build-dir "$build" --only attention \
  --out "$work/smoke.md" > "$work/smoke.txt" 2>&1 ||
  { echo "the smoke run failed without PyTorch:"; cat "$work/smoke.txt"; exit 1; }
grep -q "attention: PyTorch is not installed.*smoke run without the PyTorch peer" \
  "$work/smoke.txt" || { echo "the smoke run did not say so:"; cat "$work/smoke.txt"; exit 1; }
if grep -q "PyTorch .* threads" "$work/smoke.md"; then
  echo "a PyTorch row without PyTorch:"; cat "$work/smoke.md"; exit 1
fi
echo "ok"
