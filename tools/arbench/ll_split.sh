#!/usr/bin/env bash
# One-shot-ll with split roles (a block's first warps only send, the others only poll, reduce and
# write the output) against the kernel before it, on one GPU, in one run: builds BASE (the tree
# before) and this tree, alternates their specsim-arbench at 8, 4 and 2 virtual ranks (one-shot-ll,
# bf16, 200 calls, eager and one graph, every result bitwise-checked: #wrong), this tree with
# --ll-threads 128 too (the same build with the split off), then gpu_car_virtual (every variant,
# 200 replays) and compute-sanitizer memcheck + racecheck over gpu_car_virtual --quick --variant
# one-shot-ll. Logs in $OUT (default ./out).
#   usage: ll_split.sh BASE_SRC   (from this tree's root; CLI11 and Catch2 headers in
#   $SPECSIM_DEPS_INCLUDE, default BASE_SRC/.deps/include, where the machine has none)
set -u -o pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1  # never NVLink multicast
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
BASE=$(cd "$1" && pwd)
INC=${SPECSIM_DEPS_INCLUDE:-$BASE/.deps/include}
S=14336,43008,57344,114688
{ date -u; nvidia-smi; nvcc --version | tail -1; } > "$OUT/env.log" 2>&1
cfg() {
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DSPECSIM_EXTRA_INCLUDE="$INC"
}
t0=$(date +%s)
(cfg "$BASE" "$BASE/build-base" && cmake --build "$BASE/build-base" -j8 --target specsim-arbench) > "$OUT/build-base.log" 2>&1 &
(cfg . build-dev && cmake --build build-dev -j8 --target specsim-arbench gpu_car_virtual) > "$OUT/build-dev.log" 2>&1
rc_dev=$?
wait $! || { tail -30 "$OUT/build-base.log"; exit 1; }
[ $rc_dev -eq 0 ] || { tail -30 "$OUT/build-dev.log"; exit 1; }
echo "build $(($(date +%s) - t0)) s"
OLD=$BASE/build-base/specsim-arbench NEW=build-dev/specsim-arbench
# one line per run: label, graph us at each size, eager us at each size, #wrong summed over both tables
ab() {
  local label=$1
  shift
  "$@" > "$OUT/run.tmp" 2>&1
  local rc=$?
  cat "$OUT/run.tmp" >> "$OUT/ab-raw.log"
  printf '%-34s graph %s | eager %s | wrong %s rc %d\n' "$label" \
    "$(grep -E '^# +one-shot-ll +graph' "$OUT/run.tmp" | sed -E 's/^# *one-shot-ll *graph *//')" \
    "$(grep -E '^# +one-shot-ll +eager' "$OUT/run.tmp" | sed -E 's/^# *one-shot-ll *eager *//')" \
    "$(awk '$1 ~ /^[0-9]+$/ && NF >= 9 {w += $9} END {print w + 0}' "$OUT/run.tmp")" $rc
}
{
  echo "# us per call at $S B: specsim-arbench --virtual-ranks W --sizes $S -n 200 -w 20 -d bf16 --mode both" \
    "--floors 0 --variant one-shot-ll; before = the tree before, split = this tree,"
  echo "# split off = this tree with --ll-threads 128 (Options::ll_threads set keeps the plain kernel)"
  date -u
  for rep in 1 2 3; do
    for w in 8 4 2; do
      A=(--virtual-ranks "$w" --sizes "$S" -n 200 -w 20 -d bf16 --mode both --floors 0 --variant one-shot-ll)
      ab "before  v$w rep $rep" timeout 40 "$OLD" "${A[@]}"
      ab "split   v$w rep $rep" timeout 40 "$NEW" "${A[@]}"
      [ $w -ne 2 ] && ab "split off v$w rep $rep" timeout 40 "$NEW" "${A[@]}" --ll-threads 128
    done
  done
  date -u
} 2>&1 | tee "$OUT/ab.log"
V=build-dev/tests/gpu/gpu_car_virtual
[ -x "$V" ] || V=$(find build-dev -name gpu_car_virtual -type f | head -1)
{
  echo "== gpu_car_virtual --replays 200"
  timeout 150 "$V" --replays 200
  echo "gpu_car_virtual rc=$?"
} > "$OUT/tests.log" 2>&1
grep -E "rc=|checks|FAIL|world [0-9]+:|chain|absent" "$OUT/tests.log" | head -30
{
  for tool in memcheck racecheck; do
    echo "== compute-sanitizer --tool $tool gpu_car_virtual --quick --variant one-shot-ll --timeout-ms 60000"
    timeout 90 compute-sanitizer --tool $tool --error-exitcode 3 "$V" --quick --variant one-shot-ll --timeout-ms 60000
    echo "$tool virtual rc=$?"
  done
} > "$OUT/sanitizers.log" 2>&1
grep -E "^==|rc=|SUMMARY|checks" "$OUT/sanitizers.log"
rm -f "$OUT/run.tmp"
date -u
