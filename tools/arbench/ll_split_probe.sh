#!/usr/bin/env bash
# Split roles in one-shot-ll (ll_split.sh) taken apart on the timing-only build (-DSPECSIM_LL_PROBE:
# 0.4 us slower than the real build, results not checked), 8 and 4 virtual ranks, graph of 200,
# bf16, us per call at 14336 43008 114688 B: the plain kernel, the split with 128 + 128 threads
# (the real build's choice), 64 + 64 (the plain kernel's thread count, two vectors a role thread),
# 128 + 128 in half the blocks, 33 blocks, and the receivers backing off after a failed poll pass.
#   usage: ll_split_probe.sh   (from the repository root; headers as ll_split.sh; logs in $OUT)
ROW_LOG=${OUT:-$PWD/out}/split-probe.log ROW_WIDTH=52
. "$(dirname "$0")/v8_common.sh"
INC=${SPECSIM_DEPS_INCLUDE:-$PWD/.deps/include}
t0=$(date +%s)
{ cmake -S . -B build-probe -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DSPECSIM_EXTRA_INCLUDE="$INC" -DCMAKE_CUDA_FLAGS=-DSPECSIM_LL_PROBE -DCMAKE_CXX_FLAGS=-DSPECSIM_LL_PROBE &&
  cmake --build build-probe -j16 --target specsim-arbench; } > "$OUT/build-probe.log" 2>&1 ||
  { tail -30 "$OUT/build-probe.log"; exit 1; }
echo "build $(($(date +%s) - t0)) s"
P=build-probe/specsim-arbench
B4=(--virtual-ranks 4 --sizes 14336,43008,114688 -n 200 -w 20 -d bf16 --mode graph --floors 0)
date -u
for rep in 1 2; do
  row "plain, 128 threads (rep $rep)" $P "${A[@]}" --variant one-shot-ll --ll-threads 128
  row "split 128 + 128 (rep $rep)" $P "${A[@]}" --variant one-shot-ll
  row "split 64 + 64 (rep $rep)" env SPECSIM_LL_SPLIT=1 $P "${A[@]}" --variant one-shot-ll --ll-threads 128
  row "split 128 + 128, half the blocks (rep $rep)" env SPECSIM_LL_SPLIT=1 $P "${A[@]}" --variant one-shot-ll \
    --ll-threads 256
  row "split 128 + 128, 33 blocks (rep $rep)" env SPECSIM_LL_BLOCKS=33 $P "${A[@]}" --variant one-shot-ll
  for ns in 100 300 1000; do
    row "split 128 + 128, back-off $ns ns (rep $rep)" env SPECSIM_LL_SLEEP=$ns $P "${A[@]}" --variant one-shot-ll
  done
  row "plain, back-off 300 ns (rep $rep)" env SPECSIM_LL_SLEEP=300 $P "${A[@]}" --variant one-shot-ll --ll-threads 128
  row "4 virtual ranks plain, 128 threads (rep $rep)" $P "${B4[@]}" --variant one-shot-ll --ll-threads 128
  row "4 virtual ranks split 128 + 128 (rep $rep)" $P "${B4[@]}" --variant one-shot-ll
  row "4 virtual ranks split 64 + 64 (rep $rep)" env SPECSIM_LL_SPLIT=1 $P "${B4[@]}" --variant one-shot-ll \
    --ll-threads 128
done
date -u
