#!/usr/bin/env bash
# Runs the hostile-input matrix (test_hostile, test_outputs) of a build folder (default build/)
# and prints how many cases each class ran: the counts in docs/reliability.md.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
counts=$(mktemp)
trap 'rm -f "$counts"' EXIT
SPECSIM_CASE_COUNTS=$counts "$build/tests/test_hostile" >/dev/null
# test_outputs lives in the unit-test binary: its cases by Catch2's file-name tag
SPECSIM_CASE_COUNTS=$counts "$build/tests/specsim_unit_tests" "[#test_outputs]" -# -w NoTests >/dev/null
awk -F'\t' '{ n[$2] += $1 } END { for (k in n) printf "%4d  %s\n", n[k], k }' "$counts" | sort -k2
awk -F'\t' '{ all += $1 } END { printf "%4d  in all\n", all }' "$counts"
