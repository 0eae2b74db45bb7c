#!/bin/bash
# DIAG: per-warp %globaltimer stamps of the fused (split) kernel and one-shot-ll, 8 virtual ranks.
set -u -o pipefail
O=${OUT:?set OUT to a folder}; mkdir -p $O
t0=$(date +%s)
B=build
(cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DSPECSIM_EXTRA_INCLUDE=$PWD/.deps/include \
  && ninja -C $B -j16 specsim-arbench) > $O/build.log 2>&1 || { tail -40 $O/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
for v in split cluster-push; do
  CAR_DIAG=1 timeout 60 $B/specsim-arbench --virtual-ranks 8 --fused-hidden 7168 --tokens 1,3 \
    -d bf16 --mode graph -n 200 -w 20 --floors 0 --fused-variant $v > $O/diag-$v.log 2>&1
  echo "== $v rc=$?"; grep -E "^DIAG|^  |^ +[0-9]+ +[0-9]+ " $O/diag-$v.log | head -60
done
echo "t $(( $(date +%s) - t0 )) s"
