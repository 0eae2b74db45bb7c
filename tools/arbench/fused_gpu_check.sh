#!/usr/bin/env bash
# GPU check of the fused all-reduce + residual add + RMSNorm on one GPU: Release build for sm_90,
# the fused tests (virtual ranks, and one process a rank through CUDA IPC), compute-sanitizer
# memcheck / racecheck / synccheck on both (short runs), and specsim-arbench's three-way table at the verify's sizes (hidden
# 4096/7168/8192 x 1..64 tokens, bf16, 8 virtual ranks, one graph of 200 calls). Every log goes
# to $OUT (default ./out). Run from the repository root; about 8 minutes on one H200.
set -u -o pipefail
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
B=build
{ date -u; nvidia-smi; nvcc --version | tail -1; git rev-parse HEAD; } > "$OUT/env.log" 2>&1
T="specsim_car specsim-arbench gpu_car_host gpu_car_fused gpu_car_fused_ipc gpu_car_virtual"
if ! { cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 &&
       cmake --build $B -j16 --target $T; } > "$OUT/build.log" 2>&1; then
  tail -40 "$OUT/build.log"; echo "build failed (build.log)"; exit 1
fi
echo "== ctest (fused on virtual ranks and across processes, host)"
timeout 420 ctest --test-dir $B -R '^gpu_car_(fused|fused_ipc|host)$' -V --timeout 300 > "$OUT/ctest.log" 2>&1
echo "ctest rc=$?"; grep -E "gpu_car_[a-z_]+: |FAIL|SKIP|tests passed|Failed" "$OUT/ctest.log" | head -40
F=$(find $B -name gpu_car_fused -type f | head -1)
P=$(find $B -name gpu_car_fused_ipc -type f | head -1)
V=$(find $B -name gpu_car_virtual -type f | head -1)
timeout 100 "$V" --quick --variant one-shot-ll > "$OUT/virtual-ll-quick.log" 2>&1
echo "gpu_car_virtual --quick --variant one-shot-ll rc=$? (the plain flag-free kernel beside the fused one)"
for tool in memcheck racecheck synccheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 3 "$F" --quick --timeout-ms 60000 \
    > "$OUT/$tool.log" 2>&1
  echo "$tool rc=$?" | tee -a "$OUT/$tool.log"; tail -n 2 "$OUT/$tool.log"
  # the per-rank call real peers make: every child process instrumented
  timeout 150 compute-sanitizer --tool $tool --target-processes all --error-exitcode 3 "$P" --quick \
    > "$OUT/$tool-ipc.log" 2>&1
  echo "$tool (processes) rc=$?" | tee -a "$OUT/$tool-ipc.log"; tail -n 2 "$OUT/$tool-ipc.log"
done
echo "== arbench: all-reduce alone vs + add+RMSNorm vs fused (8 virtual ranks, graph of 200)"
timeout 150 $B/specsim-arbench --virtual-ranks 8 --fused-hidden 4096,7168,8192 --tokens 1,2,4,8,16,32,64 \
  -d bf16 --mode graph -n 200 -w 20 --floors 0 2>&1 | tee "$OUT/arbench-fused-v8.log"
echo "arbench rc=$?"
