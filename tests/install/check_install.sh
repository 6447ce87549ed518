#!/usr/bin/env bash
# `cmake --install` to a fresh prefix, then the installed shardc builds an
# example with the installed runtime (not the build tree's) and the
# executable computes what the interpreter computes: under MPICH's launcher,
# and under Open MPI's when OPENMPI_MPIRUN is given (libshardrt.a loads the
# installed libshardrt-openmpi.so there).
# usage: check_install.sh BUILD_DIR WORK_DIR EXAMPLE MPIEXEC NPY_COMPARE [OPENMPI_MPIRUN]
set -euo pipefail
build=$1 work=$2 example=$3 mpiexec=$4 compare=$5 openmpi=${6:-}
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
shardc=$work/prefix/bin/shardc
"$shardc" --version | grep -F "runtime: $work/prefix/lib/shardc/libshardrt.a (installed prefix)"
test -f "$work/prefix/include/shardc/shardrt.h"
test -f "$work/prefix/lib/shardc/libshardrt-mpich.so"
"$shardc" "$example" -o "$work/prog"
# The executable finds the MPI libraries in the prefix, not in the build tree.
readelf -d "$work/prog" | grep -F "RUNPATH" | grep -F "$work/prefix/lib/shardc"
if readelf -d "$work/prog" | grep -F "RUNPATH" | grep -qF "$build/runtime"; then
  echo "the installed shardc's executable looks in the build tree: $build/runtime" >&2
  exit 1
fi
ranks=$("$work/prog" --help | sed -n 's/^usage: mpirun -n \([0-9]*\) .*/\1/p')
"$mpiexec" -n "$ranks" "$work/prog" --random-inputs 3 --output-dir "$work/native"
"$shardc" "$example" --interpret --random-inputs 3 --output-dir "$work/global"
"$compare" "$work/native" "$work/global" --rtol 1e-4 --atol 1e-4
if [[ -n "$openmpi" ]]; then
  test -f "$work/prefix/lib/shardc/libshardrt-openmpi.so"
  # Open MPI 4.1 leaks at MPI_Init (its unloaded plugins): no leak check in
  # a sanitizer build's run here, every other check stays.
  ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    "$openmpi" --oversubscribe -n "$ranks" "$work/prog" --random-inputs 3 --output-dir "$work/openmpi"
  "$compare" "$work/openmpi" "$work/global" --rtol 1e-4 --atol 1e-4
  echo "installed shardc under Open MPI: ok"
fi
echo "installed shardc: ok"
