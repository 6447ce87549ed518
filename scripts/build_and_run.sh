#!/usr/bin/env bash
# The main command (README): installs what is missing, builds shardc in
# build/ and runs it on the examples. This stage of shardc stops after
# verification, so "running" means: print examples/mlp.shd in canonical form
# (--emit=ir), then check every example (--verify-only).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j 2 --target shardc

shardc=build/tools/shardc/shardc
echo "==> $shardc examples/mlp.shd --emit=ir"
"$shardc" examples/mlp.shd --emit=ir

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
