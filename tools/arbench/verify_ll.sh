#!/usr/bin/env bash
# After a change to the flag-free kernels, in one run on a machine with 2+ GPUs (prebuilt
# binaries in BIN: specsim-arbench, gpu_car_host, gpu_car_virtual, gpu_car_ipc, gpu_car_multigpu):
# the GPU tests, the side by side with PyTorch and NCCL on all GPUs (tools/arbench/side_by_side.sh),
# 8 and 4 virtual ranks on GPU 0 (bitwise-checked tables with the floors), then compute-sanitizer
# memcheck, racecheck and synccheck over the real-peer test of the flag-free variants and
# memcheck and racecheck over the virtual-rank test. Seven logs in $OUT (default ./out).
#   usage: verify_ll.sh BIN
set -u -o pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1  # never NVLink multicast
BIN=$1
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
{ date -u; nvidia-smi; nvidia-smi topo -m; } > "$OUT/env.log" 2>&1
S=(14336,43008,57344,114688)
{
  for t in gpu_car_host gpu_car_multigpu; do
    echo "== $t"; timeout 200 "$BIN/$t"; echo "$t rc=$?"
  done
  echo "== gpu_car_virtual --quick --replays 100"; timeout 200 "$BIN/gpu_car_virtual" --quick --replays 100
  echo "gpu_car_virtual rc=$?"
  echo "== gpu_car_ipc --quick"; timeout 150 "$BIN/gpu_car_ipc" --quick; echo "gpu_car_ipc rc=$?"
} > "$OUT/tests.log" 2>&1
grep -E "rc=|checks|failures" "$OUT/tests.log"
tools/arbench/side_by_side.sh "$BIN" > /dev/null
tail -n 12 "$OUT/side-by-side.log"
grep -E "^# +[a-z-]+ +(graph|eager) |^# floor: flag" "$OUT/side-by-side-arbench.log"
for w in 8 4; do
  "$BIN/specsim-arbench" --virtual-ranks $w --sizes "${S[0]}" -n 200 -w 20 -d bf16 --mode both \
    --variant one-shot-ll,one-shot-ll-pull,one-shot-ll-bcast,one-shot-pull,auto > "$OUT/virtual$w.log" 2>&1
  echo "$w virtual ranks rc=$?"
  grep -E "^# floor: (input|one-shot|the same)|^# +[a-z-]+ +(graph|eager) " "$OUT/virtual$w.log"
done
{
  for tool in memcheck racecheck synccheck; do
    echo "== compute-sanitizer --tool $tool gpu_car_multigpu --quick --variant one-shot-ll --variant one-shot-ll-pull --variant one-shot-ll-bcast"
    timeout 150 compute-sanitizer --tool $tool --error-exitcode 3 "$BIN/gpu_car_multigpu" --quick \
      --variant one-shot-ll --variant one-shot-ll-pull --variant one-shot-ll-bcast
    echo "$tool multigpu rc=$?"
  done
  for tool in memcheck racecheck; do
    echo "== compute-sanitizer --tool $tool gpu_car_virtual --quick --timeout-ms 60000"
    timeout 100 compute-sanitizer --tool $tool --error-exitcode 3 "$BIN/gpu_car_virtual" --quick --timeout-ms 60000
    echo "$tool virtual rc=$?"
  done
} > "$OUT/sanitizers.log" 2>&1
grep -E "^==|rc=|SUMMARY|checks" "$OUT/sanitizers.log"
date -u
