#!/bin/bash
# EXP: the fused kernel's first input load hoisted above the call-count load (CAR_EXP_HOIST), with
# and without the per-warp stamps (CAR_DIAG); A/B interleaved.
set -u -o pipefail
O=${OUT:?set OUT to a folder}; mkdir -p $O
t0=$(date +%s)
B=build
(cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DSPECSIM_EXTRA_INCLUDE=$PWD/.deps/include \
  && ninja -C $B -j16 specsim-arbench gpu_car_fused) > $O/build.log 2>&1 || { tail -40 $O/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
for v in split cluster-push; do
  for h in 1 0; do
    CAR_EXP_HOIST=$h CAR_DIAG=1 timeout 60 $B/specsim-arbench --virtual-ranks 8 --fused-hidden 7168 --tokens 1,3 \
      -d bf16 --mode graph -n 200 -w 20 --floors 0 --fused-variant $v > $O/diag-$v-h$h.log 2>&1
    echo "== diag $v hoist $h rc=$?"; grep -E "^DIAG fused|data-in\(warp\)|row sum:|^ +[0-9]+ +[0-9]+ " $O/diag-$v-h$h.log | head -20
  done
done
for rep in 1 2; do for h in 0 1; do for v in split cluster-push; do
  CAR_EXP_HOIST=$h timeout 60 $B/specsim-arbench --virtual-ranks 8 --fused-hidden 4096,7168,8192 --tokens 1,3,8 \
    -d bf16 --mode graph -n 200 -w 20 --floors 0 --fused-variant $v > $O/ab-$v-h$h-$rep.log 2>&1
  echo "== ab $v hoist $h rep $rep rc=$?"; grep -E "^# hidden|^ +[0-9]+ +[0-9]+ " $O/ab-$v-h$h-$rep.log | cut -c1-120 | grep -v "^# hidden" | head -9
done; done; done
F=$(find $B -name gpu_car_fused -type f | head -1)
CAR_EXP_HOIST=1 timeout 90 "$F" --quick > $O/gpu_car_fused-hoist.log 2>&1; echo "gpu_car_fused hoist rc=$?"; tail -2 $O/gpu_car_fused-hoist.log
echo "t $(( $(date +%s) - t0 )) s"
