#!/usr/bin/env bash
# Archived one-off (traces/experiments/README.md). Needs the timing-only build (-DSPECSIM_LL_PROBE),
# removed after commit f325b18: run it on a checkout of that commit, where it was tools/arbench/ll_experiments.sh.
# Where the flag-free one-shot's time goes, in one run on a machine with 2+ GPUs: builds the real
# all-reduce and a timing-only build (-DSPECSIM_LL_PROBE, whose results are wrong and not checked),
# then times, 200 calls in one CUDA graph, bf16:
#   probe 0 real kernel | 1 launch + parameters only | 2 sends, no polls | 3 local copy only |
#   4 real but one poll pass (no waiting) | 5 real with %globaltimer stamps (medians printed) |
#   6 as 4 without emptying the slots | 7 as 4 without the slot loads;
# and the polls' load (SPECSIM_LL_LD: 0 ld.relaxed.sys, 1 ld.volatile, 2 ld.relaxed.gpu, 3 ld.cg)
# and the sends' store (SPECSIM_LL_ST: 0 st.relaxed.sys, 1 st.volatile, 2 weak st.global)
# each with programmatic dependent launch on and off (SPECSIM_LL_PDL), block sizes 64/128/256,
# and 8 virtual ranks on GPU 0; then the real build's bitwise-checked table beside NCCL and the
# real-peer test. Logs in $OUT (default ./out). Expects CLI11/Catch2 headers in .deps/include
# where their packages are missing. STAGES picks parts (default "probe real test"; "ab": the
# 2-rank kernel against the any-world one, SPECSIM_LL_GENERIC=1, with PDL on and off).
set -u -o pipefail
STAGES=${STAGES:-probe real test}
has() { [[ " $STAGES " == *" $1 "* ]]; }
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1  # never NVLink multicast
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
G=$(nvidia-smi -L | wc -l)
{ date -u; nvidia-smi; nvidia-smi topo -m; nvcc --version | tail -1; } > "$OUT/env.log" 2>&1
cfg() {
  cmake -S . -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DSPECSIM_EXTRA_INCLUDE="$PWD/.deps/include" "${@:2}"
}
T="specsim-arbench gpu_car_host gpu_car_virtual gpu_car_ipc gpu_car_multigpu"
(cfg build-ll && cmake --build build-ll -j16 --target $T) > "$OUT/build.log" 2>&1 &
BP=0
if has probe || has ab; then
  (cfg build-probe -DCMAKE_CUDA_FLAGS=-DSPECSIM_LL_PROBE -DCMAKE_CXX_FLAGS=-DSPECSIM_LL_PROBE &&
    cmake --build build-probe -j16 --target specsim-arbench) > "$OUT/build-probe.log" 2>&1 &
  BP=$!
fi
wait %1 || { tail -30 "$OUT/build.log"; exit 1; }
[ "$BP" = 0 ] || wait $BP || { tail -30 "$OUT/build-probe.log"; exit 1; }
date -u

# one line: label, then the summary row's times of the first variant
row() {
  local label=$1
  shift
  printf '%-44s' "$label"
  "$@" 2>&1 | tee -a "$OUT/probe.log" | grep -E "^# +one-shot-ll +graph" | head -1 | sed 's/^# *one-shot-ll *graph//'
}
# stamps of thread 0 of block 0 of each rank, every 64th call: medians (ns) over the printed calls
stamps() {
  python3 -c '
import sys, statistics as st
v = {}
for l in sys.stdin:
  f = l.split()
  if f[:1] != ["stamps"]: continue
  for k, x in zip(f[8::2], f[9::2]): v.setdefault((int(f[2]), k), []).append(int(x))
for r in sorted({r for r, _ in v}):
  print("  rank %d median ns:" % r, " ".join("%s %d" % (k, st.median(x)) for (q, k), x in v.items() if q == r))
'
}
if has probe; then
  P=build-probe/specsim-arbench
  A=(--sizes 14336,43008,114688 -n 200 -w 20 -d bf16 --mode graph --floors 0 --variant one-shot-ll)
  echo "== timing-only probes, 2 GPUs, graph of 200, us per call at 14336 43008 114688 B (not checked)"
  for pdl in 0 1; do
    for probe in 0 1 2 3 4; do
      row "probe $probe pdl $pdl" env SPECSIM_LL_PROBE=$probe SPECSIM_LL_PDL=$pdl $P -g 2 "${A[@]}"
    done
    for t in 64 256; do
      row "probe 0 pdl $pdl ll-threads $t" env SPECSIM_LL_PROBE=0 SPECSIM_LL_PDL=$pdl $P -g 2 "${A[@]}" --ll-threads $t
    done
  done
  for probe in 6 7; do
    row "probe $probe pdl 1" env SPECSIM_LL_PROBE=$probe $P -g 2 "${A[@]}"
  done
  for probe in 0 4; do
    for ld in 1 2 3; do
      row "probe $probe pdl 1 load $ld" env SPECSIM_LL_PROBE=$probe SPECSIM_LL_LD=$ld $P -g 2 "${A[@]}"
    done
    for st in 1 2; do
      row "probe $probe pdl 1 store $st" env SPECSIM_LL_PROBE=$probe SPECSIM_LL_ST=$st $P -g 2 "${A[@]}"
    done
  done
  for pdl in 0 1; do
    for size in 14336 114688; do
      echo "stamps, 2 GPUs, pdl $pdl, $size B:"
      SPECSIM_LL_PROBE=5 SPECSIM_LL_PDL=$pdl $P -g 2 --sizes $size -n 200 -w 20 -d bf16 --mode graph --floors 0 \
        --variant one-shot-ll 2>&1 | tee -a "$OUT/stamps.log" | stamps
    done
  done
  echo "stamps, 8 virtual ranks, pdl 1, 43008 B:"
  SPECSIM_LL_PROBE=5 SPECSIM_LL_PDL=1 $P --virtual-ranks 8 --sizes 43008 -n 200 -w 20 -d bf16 --mode graph \
    --floors 0 --variant one-shot-ll 2>&1 | tee -a "$OUT/stamps.log" | stamps
  echo "== timing-only probes, 8 virtual ranks on GPU 0"
  for pdl in 0 1; do
    for probe in 0 1 3 4; do
      row "virtual 8 probe $probe pdl $pdl" env SPECSIM_LL_PROBE=$probe SPECSIM_LL_PDL=$pdl $P --virtual-ranks 8 "${A[@]}"
    done
  done
  for probe in 6 7; do
    row "virtual 8 probe $probe pdl 1" env SPECSIM_LL_PROBE=$probe $P --virtual-ranks 8 "${A[@]}"
  done
  for ld in 1 2 3; do
    row "virtual 8 probe 0 pdl 1 load $ld" env SPECSIM_LL_PROBE=0 SPECSIM_LL_LD=$ld $P --virtual-ranks 8 "${A[@]}"
  done
fi
if has ab; then
  P=build-probe/specsim-arbench
  A=(--sizes 14336,43008,114688 -n 200 -w 20 -d bf16 --mode graph --floors 0 --variant one-shot-ll)
  echo "== 2-rank kernel (kWorld 2) against the any-world kernel, 2 GPUs, us per call at 14336 43008 114688 B"
  for rep in 1 2; do
    for pdl in 1 0; do
      for gen in 1 0; do
        row "probe 0 pdl $pdl any-world $gen (rep $rep)" env SPECSIM_LL_GENERIC=$gen SPECSIM_LL_PDL=$pdl $P -g 2 "${A[@]}"
      done
    done
  done
  for probe in 1 2 3 4; do
    row "probe $probe pdl 1 (2-rank kernel)" env SPECSIM_LL_PROBE=$probe $P -g 2 "${A[@]}"
  done
  echo "stamps, 2 GPUs, pdl 1, 2-rank kernel, 14336 B:"
  SPECSIM_LL_PROBE=5 $P -g 2 --sizes 14336 -n 200 -w 20 -d bf16 --mode graph --floors 0 --variant one-shot-ll \
    2>&1 | tee -a "$OUT/stamps.log" | stamps
fi
if has real; then
  B=build-ll/specsim-arbench
  $B -g 2 --sizes 14336,43008,57344,114688 -n 200 -w 20 -d bf16 --mode both \
    --variant one-shot-ll,one-shot-ll-pull,one-shot-pull,nccl > "$OUT/real-g2.log" 2>&1
  echo "real -g 2 rc=$?"
  $B --virtual-ranks 8 --sizes 14336,43008,57344,114688 -n 200 -w 20 -d bf16 --mode both \
    --variant one-shot-ll,one-shot-ll-pull,one-shot-pull,auto > "$OUT/real-v8.log" 2>&1
  echo "real virtual 8 rc=$?"
  grep -E "^# (floor: empty|summary|speed-up)|^# +[a-z-]+ +(graph|eager) " "$OUT/real-g2.log"
  grep -E "^# +[a-z-]+ +(graph|eager) " "$OUT/real-v8.log" | grep -v "x "
fi
if has test; then
  ctest --test-dir build-ll -R "gpu_car_(host|virtual|ipc|multigpu)" --timeout 240 > "$OUT/ctest.log" 2>&1
  echo "ctest rc=$?"
  grep -E "tests passed|Passed|Failed|Skipped|SKIP" "$OUT/ctest.log"
fi
date -u
