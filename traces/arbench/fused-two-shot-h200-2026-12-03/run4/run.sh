#!/usr/bin/env bash
# the kept two-shot kernel (no hoist, __syncthreads_or flag checks): quick fused tests and two sanitizers
set -u -o pipefail
OUT=${OUT:-$PWD/out}; mkdir -p "$OUT"
B=build
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; git rev-parse HEAD; git status --short; } > "$OUT/env.log" 2>&1
t0=$(date +%s)
if ! { cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DSPECSIM_EXTRA_INCLUDE=$PWD/.deps/include &&
       cmake --build $B -j16 --target gpu_car_fused specsim-arbench; } > "$OUT/build.log" 2>&1; then
  tail -30 "$OUT/build.log"; echo "build failed"; exit 1
fi
echo "build $(( $(date +%s) - t0 )) s; warnings: $(grep -c -i 'warning' $OUT/build.log)"
F=$(find $B -name gpu_car_fused -type f | head -1)
timeout 90 $F --quick > "$OUT/tests.log" 2>&1; echo "gpu_car_fused --quick rc=$?"; tail -1 "$OUT/tests.log"
for tool in racecheck synccheck; do
  echo "=== $tool" >> "$OUT/tests.log"
  timeout 70 compute-sanitizer --tool $tool --error-exitcode 3 $F --sanitize --variant two-shot --timeout-ms 60000 >> "$OUT/tests.log" 2>&1
  echo "$tool rc=$?"; tail -n 2 "$OUT/tests.log"
done
timeout 30 $B/specsim-arbench --virtual-ranks 8 --fused-hidden 7168,8192 --tokens 3,8 -d bf16 --mode graph -n 200 -w 20 --floors 0 --fused-variant two-shot 2>&1 | tee "$OUT/arbench.log" | grep -E "^ +[0-9]"
echo "all done $(( $(date +%s) - t0 )) s"
