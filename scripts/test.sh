#!/usr/bin/env bash
# The test command (README): installs what is missing, then builds and tests
# shardc twice:
#   build/       RelWithDebInfo with the default compiler: unit tests and lit
#   build-asan/  clang-14 with AddressSanitizer, LeakSanitizer and
#                UndefinedBehaviorSanitizer: unit tests and lit again, plus a
#                bounded libFuzzer run over the parser and the checks
# Usage: scripts/test.sh [--no-sanitizers]   (the second half is skipped)
set -euo pipefail
cd "$(dirname "$0")/.."

sanitizers=1
for arg in "$@"; do
  case "$arg" in
    --no-sanitizers) sanitizers=0 ;;
    *) echo "usage: scripts/test.sh [--no-sanitizers]" >&2; exit 2 ;;
  esac
done

jobs=2
start=$SECONDS
step() { printf '\n==> [%d s] %s\n' "$((SECONDS - start))" "$*"; }
# A failing test suite does not stop the run (the other build's results are
# worth having); a failing build does.
failed=()
run_ctest() { ctest --test-dir "$1" --output-on-failure -j "$jobs" || failed+=("$1"); }
# Every MPI rank the tests start reads this machine's hwloc topology from one
# file instead of discovering it again (tests/lit/lit.cfg.py says why); a
# machine without lstopo discovers it as usual.
topology_for() {
  if command -v lstopo-no-graphics >/dev/null &&
     lstopo-no-graphics --no-io --of xml > "$1/hwloc-topology.xml" 2>/dev/null; then
    export HWLOC_XMLFILE="$PWD/$1/hwloc-topology.xml"
  fi
}

step "setup"
scripts/setup.sh

step "clang-format (every tracked C++ file)"
scripts/lint.sh --format-only

step "build/: configure and build (RelWithDebInfo)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$jobs"

step "build/: ctest"
topology_for build
run_ctest build

step "editors/vscode: TextMate grammar test (npm ci, vscode-tmgrammar-test)"
editors/vscode/test/run_grammar_test.sh || failed+=("editors/vscode")

if ((sanitizers)); then
  step "build-asan/: configure and build (clang-14, ASan + LSan + UBSan, libFuzzer)"
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
        -DSHARDC_SANITIZE=ON -DSHARDC_FUZZ=ON >/dev/null
  cmake --build build-asan -j "$jobs"

  step "build-asan/: ctest (unit, lit, fuzz_parser)"
  # Every report is fatal; leaks are checked at exit of every process.
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  # tests/lsan.supp: a leak inside CBC's preprocessing (see the file).
  export LSAN_OPTIONS="report_objects=1:suppressions=$PWD/tests/lsan.supp"
  # hwloc's PCI plugin (libhwloc-plugins, which Open MPI pulls in beside
  # ScaLAPACK) leaks a few blocks at every MPI_Init and unloads itself before
  # LeakSanitizer can name it; MPICH needs no PCI topology on one node.
  export HWLOC_COMPONENTS=-pci
  topology_for build-asan
  run_ctest build-asan
fi

if ((${#failed[@]})); then
  step "FAILED: tests in ${failed[*]}"
  exit 1
fi
step "all tests passed"
