#!/usr/bin/env bash
# The main command (README): installs what is missing, builds shardc in
# build/ and runs it on the examples. shardc does not build executables yet,
# so "running" means: complete the shardings of examples/mlp.shd
# (--emit=sharded), draw who holds what of its first values (--visualize),
# then check every example (--verify-only).
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

status=0
for example in examples/*.shd; do
  if "$shardc" "$example" --verify-only; then
    echo "==> $example: verified"
  else
    echo "==> $example: FAILED (see the diagnostics above)"
    status=1
  fi
done
exit "$status"
