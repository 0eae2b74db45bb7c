#!/usr/bin/env bash
# auto (split below 8 rows, two-shot from 8): arbench, then the fused tests and the two suite tests the last run's timeout cut
set -u -o pipefail
OUT=${OUT:-$PWD/out}; mkdir -p "$OUT"
B=build
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; nvcc --version | tail -1; git rev-parse HEAD; git status --short; } > "$OUT/env.log" 2>&1
t0=$(date +%s)
if ! { cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DSPECSIM_EXTRA_INCLUDE=$PWD/.deps/include &&
       cmake --build $B -j16; } > "$OUT/build.log" 2>&1; then
  tail -40 "$OUT/build.log"; echo "build failed"; exit 1
fi
echo "build $(( $(date +%s) - t0 )) s; warnings: $(grep -c -i 'warning' $OUT/build.log)"
timeout 60 $B/specsim-arbench --virtual-ranks 8 --fused-hidden 4096,7168,8192 --tokens 1,3,8,16 -d bf16 --mode graph -n 200 -w 20 --floors 0 > "$OUT/arbench-auto.log" 2>&1
echo "arbench rc=$?"; grep -v "^# tokens" "$OUT/arbench-auto.log" | grep -E "^ +[0-9]|variant" 
timeout 470 ctest --test-dir $B --timeout 460 --output-on-failure -R '^(gpu_car_fused|gpu_car_fused_ipc|gpu_block_fp8_gemm|gpu_replay_mpi)$' > "$OUT/ctest.log" 2>&1
echo "ctest rc=$?"; grep -E "Test +#|tests passed|checks" "$OUT/ctest.log" | tail -12
echo "all done $(( $(date +%s) - t0 )) s"
