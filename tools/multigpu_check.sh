#!/usr/bin/env bash
# The custom all-reduce on a machine with several GPUs: build the CUDA targets, run the GPU tests (real peers
# included) under ctest, the all-reduce benchmark on every GPU with NCCL and each custom variant
# (eager and CUDA graphs, 1 KiB .. 8 MiB), and compute-sanitizer over the real-peer test.
# Logs go to $OUT (default ./out). Expects CLI11 headers in .deps/include where libcli11-dev is missing.
set -u -o pipefail
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1  # never NVLink multicast
G=$(nvidia-smi -L | wc -l)
{ date -u; nvidia-smi; nvidia-smi topo -m; nvcc --version | tail -1; } > "$OUT/env.log" 2>&1
B=build-mgpu
T="specsim specsim-arbench gpu_car_host gpu_car_virtual gpu_car_ipc gpu_car_multigpu"
{ cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DSPECSIM_EXTRA_INCLUDE="$PWD/.deps/include" && cmake --build $B -j32 --target $T; } > "$OUT/build.log" 2>&1 \
  || { tail -40 "$OUT/build.log"; exit 1; }
echo "== $G GPUs"; grep -A12 "GPU0" "$OUT/env.log" | head -6
ctest --test-dir $B -R gpu_car_multigpu -V --timeout 300 > "$OUT/ctest-multigpu.log" 2>&1
grep -E "world|SKIP|passed|failed|Passed|Failed" "$OUT/ctest-multigpu.log" | tail -8
$B/specsim-arbench -g "$G" -b 1K -e 8M -f 2 -n 100 -w 20 -d bf16 --mode both \
  --variant nccl,one-shot-pull,one-shot-push,two-shot,auto > "$OUT/arbench-g$G.log" 2>&1
echo "arbench rc=$?"
$B/specsim-arbench -g "$G" --sizes 14336,43008,57344,114688 -n 200 -w 20 -d bf16 --mode both \
  --variant nccl,one-shot-pull,one-shot-push,two-shot,auto > "$OUT/arbench-g$G-verify-sizes.log" 2>&1
echo "arbench (verify sizes) rc=$?"
M=$(find $B -name gpu_car_multigpu -type f | head -1)
for tool in memcheck racecheck synccheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 3 "$M" > "$OUT/$tool-multigpu.log" 2>&1
  echo "$tool rc=$?" | tee -a "$OUT/$tool-multigpu.log"
done
V=$(find $B -name gpu_car_virtual -type f | head -1)
timeout 150 compute-sanitizer --tool synccheck --error-exitcode 3 "$V" --quick --timeout-ms 60000 \
  > "$OUT/synccheck-virtual.log" 2>&1; echo "synccheck virtual rc=$?" | tee -a "$OUT/synccheck-virtual.log"
cat "$OUT/arbench-g$G-verify-sizes.log" | head -70
