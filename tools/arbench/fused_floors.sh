#!/usr/bin/env bash
# What the fused all-reduce + add + RMSNorm's extra over the all-reduce alone cannot go below on one
# GPU (8 virtual ranks): specsim-arbench --floors 1 with --fused-hidden prints, per shape, the
# fused kernel's loads and stores alone (one-shot-ll's, and with the norm's) and its row sums alone
# (each CTA's own partial; split's words in global memory; cluster-push's shared memory and
# cluster barrier). Two rounds of the floors, then `split` and `cluster-push` timed in full, two
# rounds each, interleaved; then at 2 and 4 virtual ranks the floors and every row-split variant.
# Run from the repository root on one H200: OUT=/some/dir tools/arbench/fused_floors.sh
# (CLI11 headers from elsewhere than /usr/include: SPECSIM_EXTRA_INCLUDE=DIR)
set -u -o pipefail
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
B=build
SHAPES=(--virtual-ranks 8 --fused-hidden 4096,7168,8192 --tokens 1,3,8 -d bf16 --mode graph -n 200 -w 20)
{ date -u; nvidia-smi; nvcc --version | tail -1; git rev-parse HEAD; git status --short | head -20; } > "$OUT/env.log" 2>&1
if ! cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
       ${SPECSIM_EXTRA_INCLUDE:+-DSPECSIM_EXTRA_INCLUDE=$SPECSIM_EXTRA_INCLUDE} > "$OUT/build.log" 2>&1 ||
   ! cmake --build $B -j16 --target specsim-arbench >> "$OUT/build.log" 2>&1; then
  tail -40 "$OUT/build.log"; echo "build failed (build.log)"; exit 1
fi
for round in 1 2; do
  for v in split cluster-push; do
    floors=0; [ "$v" = split ] && floors=1
    $B/specsim-arbench "${SHAPES[@]}" --floors $floors --fused-variant $v > "$OUT/arbench-$v-$round.log" 2>&1
    echo "arbench $v round $round rc=$?"
  done
done
# the same at 2 and 4 virtual ranks, every variant (one log per world)
for w in 2 4; do
  for v in split block cluster-push two-shot; do
    floors=0; [ "$v" = split ] && floors=1
    echo "==== --virtual-ranks $w --fused-variant $v" >> "$OUT/worlds-$w.log"
    $B/specsim-arbench --virtual-ranks $w "${SHAPES[@]:2}" --floors $floors --fused-variant $v >> "$OUT/worlds-$w.log" 2>&1
    echo "arbench world $w $v rc=$?"
  done
done
grep -h "^# floor (fused)" "$OUT"/arbench-split-*.log "$OUT"/worlds-*.log
