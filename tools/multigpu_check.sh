#!/usr/bin/env bash
# The custom all-reduce on a machine with several GPUs: build the all-reduce targets; the real-peer
# test under ctest; the benchmark on every GPU with NCCL and each custom variant (eager and CUDA
# graphs: the verify's sizes, and 1 KiB .. 8 MiB), the flag-free kernels' block size, 8 virtual
# ranks on GPU 0; the side-by-side with PyTorch (tools/arbench/side_by_side.sh); compute-sanitizer
# memcheck, racecheck and synccheck over the real-peer test of the flag-free variants; then the
# virtual-rank and multi-process tests. Stops after the real-peer test if it fails. STAGES picks
# parts (default "bench sanitize tests"; the build and the real-peer test always run). Logs go to
# $OUT (default ./out). Expects CLI11 headers in .deps/include where libcli11-dev is missing.
set -u -o pipefail
STAGES=${STAGES:-bench sanitize tests}
has() { [[ " $STAGES " == *" $1 "* ]]; }
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1  # never NVLink multicast
G=$(nvidia-smi -L | wc -l)
{ date -u; nvidia-smi; nvidia-smi topo -m; nvcc --version | tail -1; } > "$OUT/env.log" 2>&1
B=build-mgpu
T="specsim-arbench gpu_car_host gpu_car_virtual gpu_car_ipc gpu_car_multigpu"
{ cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DSPECSIM_EXTRA_INCLUDE="$PWD/.deps/include" && cmake --build $B -j32 --target $T; } > "$OUT/build.log" 2>&1 \
  || { tail -40 "$OUT/build.log"; exit 1; }
echo "== $G GPUs"; grep -A3 "GPU0" "$OUT/env.log" | head -4
M=$(find $B -name gpu_car_multigpu -type f | head -1)
V=$(find $B -name gpu_car_virtual -type f | head -1)
I=$(find $B -name gpu_car_ipc -type f | head -1)
ctest --test-dir $B -R "gpu_car_(host|multigpu)" -V --timeout 300 > "$OUT/ctest-multigpu.log" 2>&1
RC=$?
grep -E "world|SKIP|checks|tests passed|Failed|FAIL" "$OUT/ctest-multigpu.log" | head -20
[ $RC -eq 0 ] || exit 1
ALL=one-shot-ll,one-shot-ll-pull,one-shot-ll-bcast,one-shot-pull,one-shot-push,two-shot,auto,nccl
if has bench; then
$B/specsim-arbench -g "$G" --sizes 14336,43008,57344,114688 -n 200 -w 20 -d bf16 --mode both --variant $ALL \
  > "$OUT/arbench-g$G-verify-sizes.log" 2>&1
echo "arbench (verify sizes) rc=$?"
$B/specsim-arbench -g "$G" -b 1K -e 8M -f 2 -n 100 -w 20 -d bf16 --mode both --variant $ALL \
  > "$OUT/arbench-g$G.log" 2>&1
echo "arbench (1K..8M) rc=$?"
for t in 64 128 256 0; do
  $B/specsim-arbench -g "$G" --sizes 14336,43008,114688 -n 200 -w 20 -d bf16 --mode graph --floors 0 \
    --variant one-shot-ll --ll-threads $t 2>&1 | grep -E "one-shot-ll +graph" | sed "s/^/ll-threads $t: /"
done > "$OUT/arbench-g$G-ll-threads.log"
$B/specsim-arbench --virtual-ranks 8 --sizes 14336,43008,57344,114688,1M,8M -n 200 -w 20 -d bf16 \
  > "$OUT/arbench-virtual8.log" 2>&1
echo "arbench (8 virtual ranks) rc=$?"
tools/arbench/side_by_side.sh $B > /dev/null
grep -E "summary|^# +[a-z-]+ +(graph|eager)|speed-up|floor|Out of bounds" "$OUT/arbench-g$G-verify-sizes.log"
cat "$OUT/arbench-g$G-ll-threads.log"
grep -E "^# +one-shot-ll +graph|^# +(auto|one-shot-pull) +graph|Out of" "$OUT/arbench-virtual8.log"
tail -n 12 "$OUT/side-by-side.log"
fi
if has sanitize; then
for tool in memcheck racecheck synccheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 3 "$M" --quick --variant one-shot-ll \
    --variant one-shot-ll-pull --variant one-shot-ll-bcast > "$OUT/$tool-multigpu-ll.log" 2>&1
  echo "$tool rc=$?" | tee -a "$OUT/$tool-multigpu-ll.log"
  grep -E "SUMMARY|checks" "$OUT/$tool-multigpu-ll.log"
done
fi
if has tests; then
timeout 200 "$V" --quick --replays 100 > "$OUT/virtual.log" 2>&1; echo "gpu_car_virtual --quick rc=$?" | tee -a "$OUT/virtual.log"
grep -E "world|graph|chain|absent|checks" "$OUT/virtual.log" | tail -30
timeout 150 "$I" --quick > "$OUT/ipc.log" 2>&1; echo "gpu_car_ipc --quick rc=$?" | tee -a "$OUT/ipc.log"
grep -E "ipc world|checks" "$OUT/ipc.log"
fi
