#!/usr/bin/env bash
# `specsim check --replay` on a GPU machine: builds specsim and the GPU test, runs the
# test (baseline, clean check, the test-only specsim-skip-allreduce, doctored baseline), then the demo commands
# of docs/README-check-replay.md. Logs go to $OUT (default ./check-replay-out).
# Needs CLI11 and Catch2 headers: system ones, or copied to .deps/include.
set -u
OUT=${OUT:-$PWD/check-replay-out}
B=${BUILD:-build-check-replay}
mkdir -p "$OUT"
FLAGS="--model-path llama-3.1-8b --tp-size 8 --accept-len 3 --hardware h200:nvswitch"
cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DSPECSIM_EXTRA_INCLUDE="$PWD/.deps/include" \
  -DCMAKE_CUDA_ARCHITECTURES=90 > "$OUT/configure.log" 2>&1 || { tail -20 "$OUT/configure.log"; exit 1; }
cmake --build "$B" -j16 --target specsim gpu_check_replay > "$OUT/build.log" 2>&1 || { grep -B2 -A8 -m5 error "$OUT/build.log"; exit 1; }
nvidia-smi -L | tee "$OUT/device.txt"
S=./$B/specsim
echo "== gpu_check_replay"
(cd "$B/tests/gpu" && ./gpu_check_replay) > "$OUT/gpu_check_replay.log" 2>&1
echo "gpu_check_replay exit $?" | tee -a "$OUT/gpu_check_replay.log"
grep -E "^(PASS|FAIL|OK|FAILED|SKIP)" "$OUT/gpu_check_replay.log"

echo "== demo"
$S run --json $FLAGS > "$OUT/b-analytic.json"; echo "run --json exit $?"
$S replay $FLAGS --iters 5 --warmup 2 -o "$OUT/b.json" > "$OUT/replay.log" 2>&1; echo "replay -o exit $?"
$S check --replay --baseline "$OUT/b.json" $FLAGS --iters 5 --warmup 2 --tolerance 10% > "$OUT/check.log" 2>&1
echo "check --replay exit $?" | tee -a "$OUT/check.log"
./$B/tests/gpu/specsim-skip-allreduce check --replay --baseline "$OUT/b.json" $FLAGS --iters 5 --warmup 2 > "$OUT/check-fault.log" 2>&1
echo "check --replay (specsim-skip-allreduce) exit $?" | tee -a "$OUT/check-fault.log"
$S check --replay --baseline "$OUT/b-analytic.json" $FLAGS > "$OUT/check-analytic-baseline.log" 2>&1
echo "check --replay with an analytic baseline exit $?" | tee -a "$OUT/check-analytic-baseline.log"
CUDA_VISIBLE_DEVICES= $S check --replay --baseline "$OUT/b.json" $FLAGS > "$OUT/check-nogpu.log" 2>&1
echo "check --replay with no GPU visible exit $?" | tee -a "$OUT/check-nogpu.log"
# tp 2: another world size for the custom kernel
for tp in 2; do
  F="--model-path llama-3.1-8b --tp-size $tp --accept-len 3 --hardware h200:nvswitch"
  $S replay $F --iters 5 --warmup 2 -o "$OUT/b-tp$tp.json" > /dev/null 2>&1
  $S check --replay --baseline "$OUT/b-tp$tp.json" $F --iters 5 --warmup 2 --tolerance 10% > "$OUT/check-tp$tp.log" 2>&1
  echo "check --replay tp $tp exit $?" | tee -a "$OUT/check-tp$tp.log"
done
