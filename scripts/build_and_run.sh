#!/usr/bin/env bash
# The main command (README): installs what is missing, builds shardc in
# build/ and runs it on the examples. shardc does not build executables yet,
# so "running" means: complete the shardings of examples/mlp.shd
# (--emit=sharded), draw who holds what of its first values (--visualize),
# partition it into the per-device program (--emit=spmd) with the collectives
# it needs (--report=collectives), then run every example both ways, the
# per-device program for all devices (--simulate) and the global program
# (--interpret), and check they agree.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j 2 --target shardc

shardc=build/tools/shardc/shardc
echo "==> $shardc examples/mlp.shd --emit=sharded"
"$shardc" examples/mlp.shd --emit=sharded
echo "==> $shardc examples/mlp.shd --visualize (first two values)"
"$shardc" examples/mlp.shd --visualize | awk '/^%/ { n++ } n <= 2'

echo "==> $shardc examples/mlp.shd --emit=spmd"
"$shardc" examples/mlp.shd --emit=spmd
echo "==> $shardc examples/mlp.shd --report=collectives"
"$shardc" examples/mlp.shd --report=collectives

cmake --build build -j 2 --target shardc-npy-compare
compare=build/tools/shardc-npy-compare/shardc-npy-compare
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
status=0
for example in examples/*.shd; do
  name=$(basename "$example" .shd)
  if "$shardc" "$example" --interpret --random-inputs 1 --output-dir "$out/$name/global" &&
     "$shardc" "$example" --simulate --random-inputs 1 --output-dir "$out/$name/devices" &&
     "$compare" "$out/$name/devices" "$out/$name/global" --rtol 1e-4 --atol 1e-4 >/dev/null; then
    echo "==> $example: --simulate (every device) equals --interpret (global)"
  else
    echo "==> $example: FAILED (see above)"
    status=1
  fi
done
exit "$status"
