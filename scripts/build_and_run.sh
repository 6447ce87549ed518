#!/usr/bin/env bash
# The main command (README): installs what is missing, builds shardc in
# build/, then does the main job on examples/mlp.shd -- complete its
# shardings, partition it into the per-device program with the collectives it
# needs, compile it into a native executable and run it on 8 MPI ranks -- and
# checks that every example's executable computes what the reference
# interpreter computes. The examples without shardings (auto_*.shd) are built
# with --auto-shard: the solver chooses their shardings.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j 2 --target shardc shardc-npy-compare

shardc=build/tools/shardc/shardc
compare=build/tools/shardc-npy-compare/shardc-npy-compare
# The mission's `mpirun`, whichever MPI it is: the executables load the
# runtime of the launcher that starts them (MPICH or Open MPI). Open MPI
# refuses more ranks than cores, and root, unless told: these variables are
# this script's own (the README shows the flags instead).
mpirun=mpirun
export OMPI_MCA_rmaps_base_oversubscribe=1
if [[ $(id -u) -eq 0 ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "==> $shardc examples/mlp.shd --emit=spmd   (the per-device program)"
"$shardc" examples/mlp.shd --emit=spmd
echo "==> $shardc examples/mlp.shd --report=collectives"
"$shardc" examples/mlp.shd --report=collectives
echo "==> $shardc examples/mlp.shd -o $out/mlp"
"$shardc" examples/mlp.shd -o "$out/mlp"
echo "==> $mpirun -n 8 $out/mlp --random-inputs 1 --profile"
"$mpirun" -n 8 "$out/mlp" --random-inputs 1 --profile

echo "==> $shardc examples/auto_transformer.shd --auto-shard --report=auto-sharding"
"$shardc" examples/auto_transformer.shd --auto-shard --report=auto-sharding

status=0
for example in examples/*.shd; do
  name=$(basename "$example" .shd)
  prog=$out/$name
  flags=()
  case $name in auto_*) flags=(--auto-shard) ;; esac
  if "$shardc" "$example" "${flags[@]}" -o "$prog" &&
     ranks=$("$prog" --help | sed -n 's/^usage: mpirun -n \([0-9]*\) .*/\1/p') &&
     "$mpirun" -n "$ranks" "$prog" --random-inputs 1 --output-dir "$out/$name.native" &&
     "$shardc" "$example" --interpret --random-inputs 1 --output-dir "$out/$name.global" &&
     "$compare" "$out/$name.native" "$out/$name.global" --rtol 1e-4 --atol 1e-4 >/dev/null; then
    echo "==> $example${flags:+ (${flags[*]})}: mpirun -n $ranks ./$name equals shardc --interpret"
  else
    echo "==> $example: FAILED (see above)"
    status=1
  fi
done
exit "$status"
