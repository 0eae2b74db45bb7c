#!/usr/bin/env bash
# Archived one-off (traces/experiments/README.md): the check run when this variant was added. It
# still runs on the current tree, from the repository root: traces/experiments/scripts/two_shot_ll.sh.
# The flag-free two-shot (two-shot-ll) on one GPU, in one run: build the benchmark and the
# virtual-rank test, 8 and 4 virtual ranks side by side with one-shot-ll (bitwise-checked tables,
# graph of 200 calls), the virtual-rank test for two-shot-ll (bitwise against the CPU reference
# and across ranks, the reserved value among the inputs), then compute-sanitizer memcheck and
# racecheck over the virtual-rank test of two-shot-ll (--quick). Logs in $OUT (default ./out).
#   usage: two_shot_ll.sh   (from the repository root; CLI11 and Catch2 headers in .deps/include
#   where the machine has none)
set -u -o pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1  # never NVLink multicast
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
B=build-dev
S=14336,43008,57344,114688
{ date -u; nvidia-smi; nvcc --version | tail -1; } > "$OUT/env.log" 2>&1
t0=$(date +%s)
timeout 170 bash -c "cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DSPECSIM_EXTRA_INCLUDE=$PWD/.deps/include && cmake --build $B -j16 --target specsim-arbench gpu_car_virtual" \
  > "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
echo "build $(($(date +%s) - t0)) s"
V=$(find $B -name gpu_car_virtual -type f | head -1)
for w in 8 4; do
  echo "# command: specsim-arbench --virtual-ranks $w --sizes $S -n 200 -w 20 -d bf16 --mode both" \
    "--variant one-shot-ll,two-shot-ll" > "$OUT/virtual$w.log"
  echo "# machine: 1x NVIDIA H200 (GPU 0), $(date -u +%F), run by traces/experiments/scripts/two_shot_ll.sh" >> "$OUT/virtual$w.log"
  timeout 45 $B/specsim-arbench --virtual-ranks $w --sizes $S -n 200 -w 20 -d bf16 --mode both \
    --variant one-shot-ll,two-shot-ll >> "$OUT/virtual$w.log" 2>&1
  echo "$w virtual ranks rc=$?"
  grep -E "^# floor: (input|one-shot|the same)|^# +[a-z-]+ +(graph|eager) " "$OUT/virtual$w.log"
done
{
  echo "== gpu_car_virtual --variant two-shot-ll --replays 200"
  timeout 100 "$V" --variant two-shot-ll --replays 200; echo "gpu_car_virtual rc=$?"
} > "$OUT/tests.log" 2>&1
grep -E "rc=|checks|FAIL|world [0-9]+:|chain|absent" "$OUT/tests.log" | head -30
{
  for tool in memcheck racecheck; do
    echo "== compute-sanitizer --tool $tool gpu_car_virtual --quick --variant two-shot-ll --timeout-ms 60000"
    timeout 60 compute-sanitizer --tool $tool --error-exitcode 3 "$V" --quick --variant two-shot-ll \
      --timeout-ms 60000
    echo "$tool virtual rc=$?"
  done
} > "$OUT/sanitizers.log" 2>&1
grep -E "^==|rc=|SUMMARY|checks" "$OUT/sanitizers.log"
date -u
