#!/bin/bash
# EXP: split launched on grid (ranks, CTAs) (CAR_EXP_RF=1) against (CTAs, ranks), A/B interleaved.
set -u -o pipefail
O=${OUT:?set OUT to a folder}; mkdir -p $O
t0=$(date +%s)
B=build
(cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DSPECSIM_EXTRA_INCLUDE=$PWD/.deps/include \
  && ninja -C $B -j16 specsim-arbench gpu_car_fused) > $O/build.log 2>&1 || { tail -40 $O/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
F=$(find $B -name gpu_car_fused -type f | head -1)
CAR_EXP_RF=1 timeout 90 "$F" --quick --variant split > $O/gpu_car_fused-quick-rf1.log 2>&1; echo "gpu_car_fused quick rf1 rc=$?"; tail -1 $O/gpu_car_fused-quick-rf1.log
for rep in 1 2 3; do for e in 0 1; do
  CAR_EXP_RF=$e timeout 60 $B/specsim-arbench --virtual-ranks 8 --fused-hidden 4096,7168,8192 --tokens 1,3,8 \
    -d bf16 --mode graph -n 200 -w 20 --floors 0 --fused-variant split > $O/ab-split-rf$e-$rep.log 2>&1
  echo "== ab split rf $e rep $rep rc=$?"; grep -E "^ +[0-9]+ +[0-9]+ " $O/ab-split-rf$e-$rep.log | cut -c1-120 | sed -n "1,9p"
done; done
echo "t $(( $(date +%s) - t0 )) s"
