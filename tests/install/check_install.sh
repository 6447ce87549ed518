#!/usr/bin/env bash
# `cmake --install` to a fresh prefix, then the installed shardc builds an
# example with the installed runtime (not the build tree's) and the
# executable computes what the interpreter computes.
# usage: check_install.sh BUILD_DIR WORK_DIR EXAMPLE MPIEXEC NPY_COMPARE
set -euo pipefail
build=$1 work=$2 example=$3 mpiexec=$4 compare=$5
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
shardc=$work/prefix/bin/shardc
"$shardc" --version | grep -F "runtime: $work/prefix/lib/shardc/libshardrt.a (installed prefix)"
test -f "$work/prefix/include/shardc/shardrt.h"
"$shardc" "$example" -o "$work/prog"
ranks=$("$work/prog" --help | sed -n 's/^usage: mpirun -n \([0-9]*\) .*/\1/p')
"$mpiexec" -n "$ranks" "$work/prog" --random-inputs 3 --output-dir "$work/native"
"$shardc" "$example" --interpret --random-inputs 3 --output-dir "$work/global"
"$compare" "$work/native" "$work/global" --rtol 1e-4 --atol 1e-4
echo "installed shardc: ok"
