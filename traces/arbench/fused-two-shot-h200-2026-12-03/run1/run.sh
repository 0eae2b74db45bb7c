#!/usr/bin/env bash
# two-shot fused variant: build, arbench A/B against split, tests, sanitizers (logs to $OUT)
set -u -o pipefail
OUT=${OUT:-$PWD/out}; mkdir -p "$OUT"
B=build
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; nvcc --version | tail -1; git rev-parse HEAD; git status --short; } > "$OUT/env.log" 2>&1
T="specsim_car specsim-arbench gpu_car_host gpu_car_fused gpu_car_fused_ipc gpu_car_virtual"
t0=$(date +%s)
if ! { cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DSPECSIM_EXTRA_INCLUDE=$PWD/.deps/include &&
       cmake --build $B -j16 --target $T; } > "$OUT/build.log" 2>&1; then
  tail -40 "$OUT/build.log"; echo "build failed"; exit 1
fi
echo "build $(( $(date +%s) - t0 )) s; warnings: $(grep -c -i warning $OUT/build.log)"
F=$B/tests/gpu/gpu_car_fused; [ -x $F ] || F=$(find $B -name gpu_car_fused -type f | head -1)
P=$(find $B -name gpu_car_fused_ipc -type f | head -1)
timeout 60 $F --quick --variant two-shot > "$OUT/tests.log" 2>&1; echo "quick two-shot rc=$?"; tail -3 "$OUT/tests.log" | grep -v "^case"
A="--virtual-ranks 8 --fused-hidden 4096,7168,8192 --tokens 1,3,8 -d bf16 --mode graph -n 200 -w 20 --floors 0"
for round in 1 2 3; do for v in split two-shot; do
  echo "### round $round variant $v" >> "$OUT/arbench.log"
  timeout 60 $B/specsim-arbench $A --fused-variant $v >> "$OUT/arbench.log" 2>&1
done; done
echo "arbench done $(( $(date +%s) - t0 )) s"
awk '/^### /{r=$3; v=$5} /^# hidden/{h=$3; sub(":","",h)} /^ +[0-9]+ +[0-9]+ /{printf "%-9s r%s h%s t%s ar %s +norm %s fused %s wrong %s\n", v, r, h, $1, $4, $5, $6, $9}' "$OUT/arbench.log"
for args in "--variant two-shot" "--quick"; do
  echo "=== gpu_car_fused $args" >> "$OUT/tests.log"
  timeout 200 $F $args >> "$OUT/tests.log" 2>&1; echo "gpu_car_fused $args rc=$?"; tail -2 "$OUT/tests.log"
done
echo "=== gpu_car_fused_ipc" >> "$OUT/tests.log"
timeout 150 $P >> "$OUT/tests.log" 2>&1; echo "gpu_car_fused_ipc rc=$?"; grep -E "two-shot|checks|FAIL" "$OUT/tests.log" | tail -8
echo "tests done $(( $(date +%s) - t0 )) s"
for tool in memcheck racecheck synccheck; do
  echo "=== $tool" >> "$OUT/sanitize.log"
  timeout 70 compute-sanitizer --tool $tool --error-exitcode 3 $F --sanitize --variant two-shot --timeout-ms 60000 >> "$OUT/sanitize.log" 2>&1
  echo "$tool rc=$?"; tail -n 2 "$OUT/sanitize.log"
done
echo "all done $(( $(date +%s) - t0 )) s"
