#!/bin/bash
# EXP: the first vector's residual (and own input) loaded at the top too (CAR_EXP_RES), A/B interleaved.
set -u -o pipefail
O=${OUT:?set OUT to a folder}; mkdir -p $O
t0=$(date +%s)
B=build
(cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DSPECSIM_EXTRA_INCLUDE=$PWD/.deps/include \
  && ninja -C $B -j16 specsim-arbench gpu_car_fused) > $O/build.log 2>&1 || { tail -40 $O/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
for rep in 1 2 3; do for r in 0 1; do for v in split; do
  CAR_EXP_RES=$r timeout 60 $B/specsim-arbench --virtual-ranks 8 --fused-hidden 4096,7168,8192 --tokens 1,3,8 \
    -d bf16 --mode graph -n 200 -w 20 --floors 0 --fused-variant $v > $O/ab-$v-r$r-$rep.log 2>&1
  echo "== $v res $r rep $rep rc=$?"; grep -E "^ +[0-9]+ +[0-9]+ " $O/ab-$v-r$r-$rep.log | cut -c1-125
done; done; done
F=$(find $B -name gpu_car_fused -type f | head -1)
CAR_EXP_RES=1 timeout 90 "$F" --quick > $O/quick-res.log 2>&1; echo "gpu_car_fused --quick (res) rc=$?"; tail -1 $O/quick-res.log
echo "t $(( $(date +%s) - t0 )) s"
