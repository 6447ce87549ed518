#!/usr/bin/env bash
# The runtime against shardc's interpreter: runs demo.shd with
# `shardc --interpret` and demo_program.c (its hand-written executable) on the
# same --random-inputs, and compares the result files and the stdout summaries.
#   compare_with_interpreter.sh SHARDC NPY_COMPARE MPIEXEC DEMO DEMO_SHD WORKDIR
set -euo pipefail
shardc=$1 compare=$2 mpiexec=$3 demo=$4 source=$5 work=$6
rm -rf "$work"
mkdir -p "$work"
for seed in 0 5; do
  "$shardc" "$source" --interpret --random-inputs $seed --output-dir "$work/interpret-$seed"
  "$mpiexec" -n 4 "$demo" --random-inputs $seed --output-dir "$work/runtime-$seed"
  # f32 sums: the interpreter accumulates in double, the demo in float.
  "$compare" "$work/interpret-$seed" "$work/runtime-$seed" --rtol 1e-6 --atol 1e-6
  "$shardc" "$source" --interpret --random-inputs $seed >"$work/interpret-$seed.txt"
  "$mpiexec" -n 4 "$demo" --random-inputs $seed >"$work/runtime-$seed.txt"
  diff "$work/interpret-$seed.txt" "$work/runtime-$seed.txt"
done
echo "the runtime's results and summaries match the interpreter's"
