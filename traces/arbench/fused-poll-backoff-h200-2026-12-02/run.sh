#!/bin/bash
# Experiment: poll backoff / rarer failure-flag checks in the fused kernel's data polls (env knobs).
# Applied on top of the tree at dd8bc1c with poll-knobs.patch (git apply), from the repository root:
#   OUT=DIR bash traces/arbench/fused-poll-backoff-h200-2026-12-02/run.sh
# (the .deps/include it names holds CLI11 and Catch2 headers on a machine without them).
set -u -o pipefail
O=${OUT:?set OUT to a folder}; mkdir -p $O
t0=$(date +%s)
B=build
(cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DSPECSIM_EXTRA_INCLUDE=$PWD/.deps/include \
  && ninja -C $B -j16 specsim-arbench gpu_car_fused) > $O/build.log 2>&1 || { tail -30 $O/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
run() { # name sleep failcheck
  CAR_EXP_SLEEP_NS=$2 CAR_EXP_FAILCHECK=$3 timeout 60 $B/specsim-arbench --virtual-ranks 8 --fused-hidden 7168,8192 --tokens 1,3,8 \
    -d bf16 --mode graph -n 200 -w 20 --floors 0 --fused-variant split > $O/ab-$1-$4.log 2>&1
  echo "== $1 (sleep $2 failcheck $3) rep $4 rc=$?"; grep -E "^# hidden|^ +[0-9]+ +[0-9]+ " $O/ab-$1-$4.log | head -12
}
for rep in 1 2; do
  run base 0 0 $rep
  run fc64 0 64 $rep
  run s50 50 0 $rep
  run s200 200 0 $rep
  run fc64s50 50 64 $rep
done
echo "t $(( $(date +%s) - t0 )) s"
F=$(find $B -name gpu_car_fused -type f | head -1)
CAR_EXP_SLEEP_NS=50 CAR_EXP_FAILCHECK=64 timeout 60 "$F" --quick > $O/gpu_car_fused-exp.log 2>&1; echo "gpu_car_fused (exp knobs) rc=$?"; tail -3 $O/gpu_car_fused-exp.log
echo "t $(( $(date +%s) - t0 )) s"
