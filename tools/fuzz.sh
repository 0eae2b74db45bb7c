#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) and runs each for SECONDS (default 20)
# from its seed corpus in tests/fuzz/corpus/NAME. A crash leaves crash-* beside the corpus and
# fails the script; copy it into the corpus as a regression input once fixed.
set -euo pipefail
cd "$(dirname "$0")/.."
# An optional second argument names a build folder already configured with clang and
# -DSPECSIM_FUZZ=ON (CI reuses its ASan build); by default build-fuzz is configured here.
seconds=${1:-20}
build=${2:-build-fuzz}
if [ -z "${2:-}" ]; then
  CC=clang CXX=clang++ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSPECSIM_FUZZ=ON -DSPECSIM_CUDA=OFF \
    -DBUILD_TESTING=OFF >/dev/null
fi
cmake --build "$build" -j2 --target specsim_fuzzers >/dev/null
total=0
for bin in "$build"/fuzz/fuzz_*; do
  name=$(basename "$bin"); name=${name#fuzz_}
  corpus=tests/fuzz/corpus/$name
  work=$(mktemp -d)
  cp -r "$corpus"/. "$work"/ 2>/dev/null || true
  log=$(mktemp)
  if ! "$bin" "$work" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -artifact_prefix="$corpus/crash-" >"$log" 2>&1; then
    tail -40 "$log"; echo "fuzz_$name: FAILED"; exit 1
  fi
  runs=$(grep -o 'Done [0-9]* runs' "$log" | grep -o '[0-9]*' || echo 0)
  total=$((total + runs))
  echo "fuzz_$name: $runs executions in ${seconds}s, no crash"
  rm -rf "$work" "$log"
done
echo "fuzz: $total executions in all"
