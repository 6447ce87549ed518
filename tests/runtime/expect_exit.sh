#!/usr/bin/env bash
# Runs a command that must end in a given way, for the runtime's ctest cases:
#   expect_exit.sh STATUS [--text TEXT]... [--regex RE]... [--no-results DIR] -- COMMAND...
# Passes when COMMAND exits with STATUS within 30 s, its output (stdout and
# stderr) contains every TEXT (fixed strings, possibly several lines) and a line matching every RE
# (extended regular expressions), a failing command prints
# exactly one line with "error:" (one message, however many ranks failed),
# and, with --no-results, DIR holds no result*.npy* file afterwards.
set -uo pipefail
status=$1
shift
texts=()
regexes=()
no_results=""
while [[ $# -gt 0 && $1 != -- ]]; do
  case $1 in
    --text) texts+=("$2"); shift 2 ;;
    --regex) regexes+=("$2"); shift 2 ;;
    --no-results) no_results=$2; shift 2 ;;
    *) echo "expect_exit: unknown option $1" >&2; exit 2 ;;
  esac
done
shift # --

output=$(timeout 30 "$@" 2>&1)
actual=$?
echo "$output"
fail() { echo "expect_exit: FAILED: $*" >&2; exit 1; }
((actual != 124)) || fail "timed out (a hang)"
((actual == status)) || fail "exit status $actual, expected $status"
for text in "${texts[@]}"; do
  [[ $output == *"$text"* ]] || fail "output lacks: $text"
done
for regex in "${regexes[@]}"; do
  grep -qE -- "$regex" <<<"$output" || fail "no line matches: $regex"
done
errors=$(grep -c "error:" <<<"$output")
((status == 0 || errors == 1)) || fail "$errors lines say error:, expected one"
if [[ -n $no_results ]] && compgen -G "$no_results/result*" >/dev/null; then
  fail "partial output left in $no_results: $(ls "$no_results")"
fi
echo "expect_exit: ok (exit $actual)"
