#!/usr/bin/env bash
# Archived one-off (traces/experiments/README.md). Needs the timing-only build (-DSPECSIM_LL_PROBE),
# removed after commit f325b18: run it on a checkout of that commit, where it was tools/arbench/v8_floor.sh.
# Where the flag-free one-shot's time goes at 8 virtual ranks on one GPU, in one run: the real
# build's bitwise-checked table, then the timing-only build (-DSPECSIM_LL_PROBE; results wrong by
# design, not checked) with each probe, store kind, block size, block count and the fixed-world
# kernels, 200 calls in one CUDA graph, bf16, us per call at 14336 43008 114688 B.
#   usage: v8_floor.sh REAL_ARBENCH PROBE_ARBENCH   (logs in $OUT, default ./out)
# Probes (kernels/car_kernels.cu): 0 real | 1 launch + parameters | 2 sends, no polls | 3 input ->
# output only | 4 real, one poll pass | 6 as 4 without emptying | 7 as 4 without the slot loads |
# 8 the real kernel's loads and stores and nothing else (no checks, no reduction).
B=$1 P=$2
ROW_LOG=${OUT:-$PWD/out}/v8-probe.log ROW_WIDTH=40
. "$(dirname "$0")/v8_common.sh"
date -u
$B --virtual-ranks 8 --sizes 14336,43008,57344,114688 -n 200 -w 20 -d bf16 --mode graph \
  --variant one-shot-ll,one-shot-ll-pull,one-shot-pull > "$OUT/v8-real.log" 2>&1
echo "real rc=$?"
grep -E "^# (floor|copy)|^# +[a-z-]+ +graph " "$OUT/v8-real.log"
echo "== 8 virtual ranks, timing-only build, us per call at 14336 43008 114688 B"
export SPECSIM_LL_ROT=0 SPECSIM_LL_SWAP=0  # the kernel as it was: sends to 0, 1, ...; grid (blocks, ranks)
for probe in 0 1 2 3 4 6 7 8; do row "probe $probe" env SPECSIM_LL_PROBE=$probe $P "${A[@]}" --variant one-shot-ll; done
row "probe 1 pdl 0" env SPECSIM_LL_PROBE=1 SPECSIM_LL_PDL=0 $P "${A[@]}" --variant one-shot-ll
for probe in 0 4 8; do
  row "probe $probe fixed world" env SPECSIM_LL_PROBE=$probe SPECSIM_LL_FIXED=1 $P "${A[@]}" --variant one-shot-ll
done
for st in 1 2 3; do row "probe 0 store $st" env SPECSIM_LL_ST=$st $P "${A[@]}" --variant one-shot-ll; done
row "probe 0 load 2 store 3 (gpu scope)" env SPECSIM_LL_LD=2 SPECSIM_LL_ST=3 $P "${A[@]}" --variant one-shot-ll
row "probe 8 load 2 store 3 (gpu scope)" env SPECSIM_LL_PROBE=8 SPECSIM_LL_LD=2 SPECSIM_LL_ST=3 $P "${A[@]}" \
  --variant one-shot-ll
row "probe 0 rotated sends" env SPECSIM_LL_ROT=1 $P "${A[@]}" --variant one-shot-ll
for t in 64 256; do row "probe 0 threads $t" $P "${A[@]}" --variant one-shot-ll --ll-threads $t; done
for b in 8 12 16 33; do row "probe 0 blocks $b" env SPECSIM_LL_BLOCKS=$b $P "${A[@]}" --variant one-shot-ll; done
for b in 8 16; do
  row "probe 0 blocks $b threads 256" env SPECSIM_LL_BLOCKS=$b $P "${A[@]}" --variant one-shot-ll --ll-threads 256
done
for probe in 0 8; do row "pull probe $probe" env SPECSIM_LL_PROBE=$probe $P "${A[@]}" --variant one-shot-ll-pull; done
B4=(--virtual-ranks 4 --sizes 14336,43008,114688 -n 200 -w 20 -d bf16 --mode graph --floors 0)
for probe in 0 1 8; do row "4 virtual ranks probe $probe" env SPECSIM_LL_PROBE=$probe $P "${B4[@]}" --variant one-shot-ll; done
row "4 virtual ranks probe 0 fixed world" env SPECSIM_LL_FIXED=1 $P "${B4[@]}" --variant one-shot-ll
row "probe 0 (again)" $P "${A[@]}" --variant one-shot-ll
echo "== grid (ranks, blocks) (SPECSIM_LL_SWAP), rotated sends (SPECSIM_LL_ROT), fixed world (SPECSIM_LL_FIXED)"
for rep in 1 2; do
  for sw in 0 1; do
    for rot in 0 1; do
      for fx in 0 1; do
        row "swap $sw rot $rot fixed $fx (rep $rep)" env SPECSIM_LL_SWAP=$sw SPECSIM_LL_ROT=$rot SPECSIM_LL_FIXED=$fx \
          $P "${A[@]}" --variant one-shot-ll
      done
    done
  done
done
for sw in 0 1; do
  row "pull swap $sw rot 1 fixed 1" env SPECSIM_LL_SWAP=$sw SPECSIM_LL_ROT=1 SPECSIM_LL_FIXED=1 $P "${A[@]}" \
    --variant one-shot-ll-pull
  row "4 virtual ranks swap $sw rot 1 fixed 1" env SPECSIM_LL_SWAP=$sw SPECSIM_LL_ROT=1 SPECSIM_LL_FIXED=1 $P \
    "${B4[@]}" --variant one-shot-ll
  row "probe 8 swap $sw" env SPECSIM_LL_PROBE=8 SPECSIM_LL_SWAP=$sw $P "${A[@]}" --variant one-shot-ll
done
date -u
