#!/bin/bash
# EXP: split's row-sum words a 128-byte line apart (CAR_EXP_WARPSUM=3), a back-off in the word polls (4: 20 ns,
# 6: 100 ns), both (5), against split as it is (0); A/B interleaved.
set -u -o pipefail
O=${OUT:?set OUT to a folder}; mkdir -p $O
t0=$(date +%s)
B=build
(cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DSPECSIM_EXTRA_INCLUDE=$PWD/.deps/include \
  && ninja -C $B -j16 specsim-arbench gpu_car_fused) > $O/build.log 2>&1 || { tail -40 $O/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
F=$(find $B -name gpu_car_fused -type f | head -1)
for e in 3 5; do
  CAR_EXP_WARPSUM=$e timeout 90 "$F" --quick --variant split > $O/gpu_car_fused-quick-e$e.log 2>&1; echo "gpu_car_fused quick exp $e rc=$?"; tail -1 $O/gpu_car_fused-quick-e$e.log
done
echo "t $(( $(date +%s) - t0 )) s"
for rep in 1 2; do for e in 0 3 4 5 6; do
  CAR_EXP_WARPSUM=$e timeout 60 $B/specsim-arbench --virtual-ranks 8 --fused-hidden 4096,7168,8192 --tokens 1,3,8 \
    -d bf16 --mode graph -n 200 -w 20 --floors 0 --fused-variant split > $O/ab-split-e$e-$rep.log 2>&1
  echo "== ab split exp $e rep $rep rc=$?"; grep -E "^ +[0-9]+ +[0-9]+ " $O/ab-split-e$e-$rep.log | cut -c1-120 | sed -n "4,6p;8p"
done; done
echo "t $(( $(date +%s) - t0 )) s"
