#!/bin/bash
# The fused kernel with the first residual loaded after the sends: gpu_car_fused in full, sanitizers, arbench.
set -u -o pipefail
O=${OUT:?set OUT to a folder}; mkdir -p $O
t0=$(date +%s)
B=build
(cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DSPECSIM_EXTRA_INCLUDE=$PWD/.deps/include \
  && ninja -C $B -j16 specsim-arbench gpu_car_fused) > $O/build.log 2>&1 || { tail -40 $O/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
F=$(find $B -name gpu_car_fused -type f | head -1)
timeout 260 "$F" > $O/gpu_car_fused-full.log 2>&1; echo "gpu_car_fused (full) rc=$?"; tail -1 $O/gpu_car_fused-full.log
echo "t $(( $(date +%s) - t0 )) s"
for tool in memcheck synccheck; do
  timeout 40 compute-sanitizer --tool $tool --error-exitcode 3 "$F" --quick --timeout-ms 60000 > $O/$tool.log 2>&1
  echo "$tool rc=$?"; tail -n 2 $O/$tool.log
done
timeout 40 compute-sanitizer --tool racecheck --error-exitcode 3 "$F" --quick --variant split --timeout-ms 60000 > $O/racecheck-split.log 2>&1
echo "racecheck split rc=$?"; tail -n 2 $O/racecheck-split.log
echo "t $(( $(date +%s) - t0 )) s"
for v in split cluster-push; do
  timeout 30 $B/specsim-arbench --virtual-ranks 8 --fused-hidden 4096,7168,8192 --tokens 1,3,8 \
    -d bf16 --mode graph -n 200 -w 20 --floors 0 --fused-variant $v > $O/arbench-$v.log 2>&1
  echo "== $v rc=$?"; grep -E "^ +[0-9]+ +[0-9]+ " $O/arbench-$v.log | cut -c1-125
done
echo "t $(( $(date +%s) - t0 )) s"
