#!/usr/bin/env bash
# Archived one-off (traces/experiments/README.md). Needs the timing-only build (-DSPECSIM_LL_PROBE),
# removed after commit f325b18: run it on a checkout of that commit, where it was tools/arbench/v8_tune2.sh.
# Third pass at 8 virtual ranks: the real build's table and floors (copy alone; the flag-free
# traffic alone with sends in order and rotated), and on the timing-only build thread-block
# clusters of the ranks' block b (SPECSIM_LL_CLUSTER), beside the defaults. Graph of 200, bf16.
#   usage: v8_tune2.sh REAL_ARBENCH PROBE_ARBENCH   (logs in $OUT, default ./out)
B=$1 P=$2
ROW_LOG=${OUT:-$PWD/out}/v8-tune2.log
. "$(dirname "$0")/v8_common.sh"
date -u
$B --virtual-ranks 8 --sizes 14336,43008,57344,114688 -n 200 -w 20 -d bf16 --mode both \
  --variant one-shot-ll,one-shot-ll-pull,one-shot-pull,auto > "$OUT/v8-real.log" 2>&1
echo "real rc=$?"
grep -E "^# (floor|copy)|^# +[a-z-]+ +(graph|eager) " "$OUT/v8-real.log"
for rep in 1 2; do
  row "probe build, defaults (rep $rep)" $P "${A[@]}" --variant one-shot-ll
  for n in 2 4 8; do row "clusters of $n (rep $rep)" env SPECSIM_LL_CLUSTER=$n $P "${A[@]}" --variant one-shot-ll; done
  row "pull, clusters of 8 (rep $rep)" env SPECSIM_LL_CLUSTER=8 $P "${A[@]}" --variant one-shot-ll-pull
  row "probe 8, clusters of 8 (rep $rep)" env SPECSIM_LL_PROBE=8 SPECSIM_LL_CLUSTER=8 $P "${A[@]}" --variant one-shot-ll
  row "probe 8 (rep $rep)" env SPECSIM_LL_PROBE=8 $P "${A[@]}" --variant one-shot-ll
done
$B --virtual-ranks 4 --sizes 14336,43008,57344,114688 -n 200 -w 20 -d bf16 --mode graph \
  --variant one-shot-ll,one-shot-ll-pull,one-shot-pull > "$OUT/v4-real.log" 2>&1
echo "real 4 virtual ranks rc=$?"
grep -E "^# (floor: (input|one-shot|the same))|^# +[a-z-]+ +graph " "$OUT/v4-real.log"
date -u
