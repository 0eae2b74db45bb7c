#!/usr/bin/env bash
# Archived one-off (traces/experiments/README.md): the check run when this variant was added. It
# still runs on the current tree, from the repository root: traces/experiments/scripts/bcast_check.sh.
# The flag-free one-shot with one copy per owner (one-shot-ll-bcast) on one GPU, in one run: build
# the benchmark and the GPU tests, the virtual-rank test for it (bitwise against the CPU reference
# and across ranks, the reserved value among the inputs, graphs, the mixed-variant chain, an absent
# rank), compute-sanitizer memcheck, racecheck and synccheck over that test (--quick), the
# benchmark at 8, 4 and 2 virtual ranks beside one-shot-ll, one-shot-ll-pull and auto (bitwise-
# checked tables, graph of 200 calls, with the traffic floors), then gpu_car_host and
# gpu_car_ipc --quick (every variant, processes sharing the GPU through CUDA IPC). Logs in $OUT
# (default ./out), with build-machine paths stripped.
#   usage: bcast_check.sh   (from the repository root; CLI11 headers in .deps/include where the
#   machine has none)
set -u -o pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1  # never NVLink multicast
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
B=build-dev
S=14336,43008,57344,114688
VAR=one-shot-ll,one-shot-ll-bcast,one-shot-ll-pull,auto
strip_paths() { sed -E "s#$PWD/##g; s#(/work|/tmp|/root)/[^ ]*/##g"; }
{ date -u; nvidia-smi; nvcc --version | tail -1; } > "$OUT/env.log" 2>&1
t0=$(date +%s)
timeout 200 bash -c "cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DSPECSIM_EXTRA_INCLUDE=$PWD/.deps/include && cmake --build $B -j16 --target specsim-arbench gpu_car_virtual \
    gpu_car_host gpu_car_ipc" > "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
echo "build $(($(date +%s) - t0)) s"
V=$(find $B -name gpu_car_virtual -type f | head -1)
H=$(find $B -name gpu_car_host -type f | head -1)
I=$(find $B -name gpu_car_ipc -type f | head -1)
{
  echo "== gpu_car_virtual --variant one-shot-ll-bcast --replays 200"
  timeout 120 "$V" --variant one-shot-ll-bcast --replays 200; echo "gpu_car_virtual rc=$?"
} 2>&1 | strip_paths > "$OUT/tests.log"
grep -E "rc=|checks|FAIL|world [0-9]+:|chain|absent" "$OUT/tests.log" | head -30
for w in 8 4 2; do
  {
    echo "# command: specsim-arbench --virtual-ranks $w --sizes $S -n 200 -w 20 -d bf16 --mode both --variant $VAR"
    echo "# machine: 1x NVIDIA H200 (GPU 0), $(date -u +%F), run by traces/experiments/scripts/bcast_check.sh"
    timeout 60 $B/specsim-arbench --virtual-ranks $w --sizes $S -n 200 -w 20 -d bf16 --mode both --variant $VAR
    echo "rc=$?"
  } 2>&1 | strip_paths > "$OUT/virtual$w.log"
  echo "$w virtual ranks: $(grep rc= "$OUT/virtual$w.log")"
  grep -E "^# floor: (input|one-shot|the same)|^# +[a-z-]+ +(graph|eager) " "$OUT/virtual$w.log"
done
{
  for tool in memcheck racecheck synccheck; do
    echo "== compute-sanitizer --tool $tool gpu_car_virtual --quick --variant one-shot-ll-bcast --timeout-ms 60000"
    timeout 75 compute-sanitizer --tool $tool --error-exitcode 3 "$V" --quick --variant one-shot-ll-bcast \
      --timeout-ms 60000
    echo "$tool virtual rc=$?"
  done
} 2>&1 | strip_paths > "$OUT/sanitizers.log"
grep -E "^==|rc=|SUMMARY|checks" "$OUT/sanitizers.log"
{
  echo "== gpu_car_host"
  timeout 20 "$H"; echo "gpu_car_host rc=$?"
  echo "== gpu_car_ipc --quick"
  timeout 150 "$I" --quick; echo "gpu_car_ipc rc=$?"
} 2>&1 | strip_paths >> "$OUT/tests.log"
grep -E "rc=|checks|FAIL|ipc world" "$OUT/tests.log" | tail -12
date -u
