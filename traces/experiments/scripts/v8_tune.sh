#!/usr/bin/env bash
# Archived one-off (traces/experiments/README.md). Needs the timing-only build (-DSPECSIM_LL_PROBE),
# removed after commit f325b18: run it on a checkout of that commit, where it was tools/arbench/v8_tune.sh.
# Second pass of v8_floor.sh on the timing-only build, with the kernel's new defaults (sends to
# rank+1, rank+2, ...; grid (ranks, blocks)): poll back-off, emptying order, fixed-world kernels,
# against the real build's bitwise-checked table. 8 virtual ranks on GPU 0, graph of 200, bf16.
#   usage: v8_tune.sh REAL_ARBENCH PROBE_ARBENCH   (logs in $OUT, default ./out)
B=$1 P=$2
ROW_LOG=${OUT:-$PWD/out}/v8-tune.log
. "$(dirname "$0")/v8_common.sh"
date -u
for rep in 1 2; do
  row "real build (rep $rep)" $B "${A[@]}" --variant one-shot-ll
  row "real build pull (rep $rep)" $B "${A[@]}" --variant one-shot-ll-pull
  row "probe build, defaults (rep $rep)" $P "${A[@]}" --variant one-shot-ll
  row "rotated empties (rep $rep)" env SPECSIM_LL_ROT_EMPTY=1 $P "${A[@]}" --variant one-shot-ll
  for ns in 32 100 200 400; do
    row "poll back-off $ns ns (rep $rep)" env SPECSIM_LL_SLEEP=$ns $P "${A[@]}" --variant one-shot-ll
  done
  row "fixed world (rep $rep)" env SPECSIM_LL_FIXED=1 $P "${A[@]}" --variant one-shot-ll
  row "fixed world, rotated empties (rep $rep)" env SPECSIM_LL_FIXED=1 SPECSIM_LL_ROT_EMPTY=1 $P "${A[@]}" \
    --variant one-shot-ll
done
date -u
