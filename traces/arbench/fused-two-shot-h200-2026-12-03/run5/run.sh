#!/usr/bin/env bash
# poll helpers shared by two-shot-ll and the fused two-shot: quick checks and a short timing
set -u -o pipefail
OUT=${OUT:-$PWD/out}; mkdir -p "$OUT"
B=build; t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; git rev-parse HEAD; git status --short; } > "$OUT/env.log" 2>&1
if ! { cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DSPECSIM_EXTRA_INCLUDE=$PWD/.deps/include &&
       cmake --build $B -j16 --target gpu_car_fused gpu_car_virtual specsim-arbench; } > "$OUT/build.log" 2>&1; then
  tail -30 "$OUT/build.log"; echo "build failed"; exit 1
fi
echo "build $(( $(date +%s) - t0 )) s; warnings: $(grep -c -i 'warning' $OUT/build.log)"
F=$(find $B -name gpu_car_fused -type f | head -1); V=$(find $B -name gpu_car_virtual -type f | head -1)
timeout 60 $F --quick --variant two-shot > "$OUT/tests.log" 2>&1; echo "gpu_car_fused --quick --variant two-shot rc=$?"; tail -1 "$OUT/tests.log"
timeout 60 $F --quick --variant auto >> "$OUT/tests.log" 2>&1; echo "gpu_car_fused --quick --variant auto rc=$?"; tail -1 "$OUT/tests.log"
timeout 60 $V --quick --variant two-shot-ll >> "$OUT/tests.log" 2>&1; echo "gpu_car_virtual --quick --variant two-shot-ll rc=$?"; tail -1 "$OUT/tests.log"
timeout 30 $B/specsim-arbench --virtual-ranks 8 --fused-hidden 7168,8192 --tokens 3,8 -d bf16 --mode graph -n 200 -w 20 --floors 0 --fused-variant two-shot 2>&1 | tee "$OUT/arbench.log" | grep -E "^ +[0-9]"
timeout 30 $B/specsim-arbench --virtual-ranks 8 --sizes 43008,114688 -n 200 -w 20 -d bf16 --mode graph --variant one-shot-ll,two-shot-ll 2>&1 | tee -a "$OUT/arbench.log" | grep -E "two-shot-ll|one-shot-ll" | head -6
echo "all done $(( $(date +%s) - t0 )) s"
