#!/usr/bin/env bash
# Runs the hostile-input matrix (test_hostile, test_outputs) of a build folder (default build/)
# and prints how many cases each class ran: the counts in docs/reliability.md.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
counts=$(mktemp)
trap 'rm -f "$counts"' EXIT
for t in test_hostile test_outputs; do
  SPECSIM_CASE_COUNTS=$counts "$build/tests/$t" >/dev/null
done
awk -F'\t' '{ n[$2] += $1 } END { for (k in n) printf "%4d  %s\n", n[k], k }' "$counts" | sort -k2
awk -F'\t' '{ all += $1 } END { printf "%4d  in all\n", all }' "$counts"
