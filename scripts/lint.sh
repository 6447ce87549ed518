#!/usr/bin/env bash
# Style checks (STYLE.md point 15): clang-format on every tracked C++ file,
# then clang-tidy (.clang-tidy) on the project's own sources. Generated ANTLR
# code is in the build tree, so it is never checked.
# Usage: scripts/lint.sh [--format-only] [BUILD_DIR]   (default build dir: build)
set -euo pipefail
cd "$(dirname "$0")/.."

format_only=0
build=build
for arg in "$@"; do
  case "$arg" in
    --format-only) format_only=1 ;;
    -*) echo "usage: scripts/lint.sh [--format-only] [BUILD_DIR]" >&2; exit 2 ;;
    *) build=$arg ;;
  esac
done

mapfile -t sources < <(git ls-files '*.cpp' '*.h')
echo "==> clang-format (${#sources[@]} files)"
clang-format-14 --dry-run --Werror "${sources[@]}"
((format_only)) && exit 0

# clang-tidy needs compile_commands.json and the generated parser headers.
cmake -S . -B "$build" -G Ninja >/dev/null
cmake --build "$build" -j 2 --target shd_grammar >/dev/null
mapfile -t units < <(git ls-files '*.cpp')
echo "==> clang-tidy (${#units[@]} files)"
run-clang-tidy-14 -quiet -j 2 -p "$build" "${units[@]/#/$PWD/}"
