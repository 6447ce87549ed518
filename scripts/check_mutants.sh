#!/usr/bin/env bash
# Checks that the differential tester catches the planted bugs of
# tests/diff/mutants/*.mutant: builds shardc and shardc-difftest once in a
# temporary git worktree of HEAD, then for each mutant applies it, rebuilds
# (one file), runs the difftest and expects it to fail; then reverts it.
# Not part of ctest (a full build): a developer runs it.
#   scripts/check_mutants.sh [SEEDS] [MPI_EVERY]     (default 0:400, 10)
#   scripts/check_mutants.sh --apply FILE.mutant DIR [--revert]  apply (undo) one mutant
set -u
root=$(git rev-parse --show-toplevel)

apply() { # apply MUTANT DIR [--revert]
  python3 - "$@" <<'PY'
import fnmatch, os, re, sys
mutant, tree = sys.argv[1], sys.argv[2]
revert = len(sys.argv) > 3
text = open(mutant).read()
glob = re.search(r"^@@ glob (.*)$", text, re.M)[1].strip()
old = re.search(r"^@@ old\n(.*?)^@@ new\n", text, re.M | re.S)[1]
new = re.search(r"^@@ new\n(.*?)^@@ end", text, re.M | re.S)[1]
if revert:
    old, new = new, old
hits = []
for top in ("passes", "backend", "runtime"):
    for d, _, files in os.walk(os.path.join(tree, top)):
        for f in files:
            path = os.path.join(d, f)
            if fnmatch.fnmatch(f, glob) and old in open(path, errors="replace").read():
                hits.append(path)
if len(hits) != 1:
    sys.exit(f"check_mutants: {mutant}: the old text is in {len(hits)} files, not 1: {hits}")
body = open(hits[0]).read()
if body.count(old) != 1:
    sys.exit(f"check_mutants: {mutant}: the old text occurs {body.count(old)} times in {hits[0]}")
open(hits[0], "w").write(body.replace(old, new))
print(f"{'reverted' if revert else 'applied'} {os.path.basename(mutant)} in {os.path.relpath(hits[0], tree)}")
PY
}

if [ "${1:-}" = "--apply" ]; then
  apply "$2" "$3" ${4:+--revert}
  exit $?
fi
seeds=${1:-0:400}
every=${2:-10}
wt=$(mktemp -d /tmp/shardc-mutants.XXXXXX)
trap 'git -C "$root" worktree remove --force "$wt" >/dev/null 2>&1' EXIT
git -C "$root" worktree add --detach "$wt" HEAD >/dev/null || exit 2
export CCACHE_BASEDIR="$wt"
cmake -S "$wt" -B "$wt/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache >/dev/null || exit 2
build() { cmake --build "$wt/build" -j2 --target shardc shardc-difftest shardrt >/dev/null; }
build || { echo "check_mutants: the unmutated build fails" >&2; exit 2; }
status=0
for mutant in "$root"/tests/diff/mutants/*.mutant; do
  name=$(basename "$mutant" .mutant)
  apply "$mutant" "$wt" || { status=1; continue; }
  if ! build; then
    echo "FAIL $name: does not build"
    status=1
  else
    log="$wt/$name.log"
    "$wt/build/tests/diff/shardc-difftest" --seeds "$seeds" --quiet --mpi-every "$every" \
      --work-dir "$wt/work-$name" >"$log" 2>&1
    code=$?
    kinds=$(grep '^kind ' "$log" | cut -d' ' -f2-4 | tr '\n' ';')
    if [ $code -eq 1 ]; then
      echo "ok $name: the difftest fails: $kinds"
    else
      echo "FAIL $name: the difftest exits $code (not 1): the planted bug is not caught"
      status=1
    fi
  fi
  apply "$mutant" "$wt" --revert >/dev/null
done
exit $status
