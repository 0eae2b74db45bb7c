#!/bin/bash
# cluster-push with the cluster-started barrier: racecheck, the quick test, and its timing.
set -u -o pipefail
O=${OUT:?set OUT to a folder}; mkdir -p $O
t0=$(date +%s)
B=build
(cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DSPECSIM_EXTRA_INCLUDE=$PWD/.deps/include \
  && ninja -C $B -j16 gpu_car_fused specsim-arbench) > $O/build.log 2>&1 || { tail -40 $O/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
F=$(find $B -name gpu_car_fused -type f | head -1)
timeout 60 compute-sanitizer --tool racecheck --error-exitcode 3 "$F" --sanitize --variant cluster-push --timeout-ms 60000 > $O/racecheck-cluster-push.log 2>&1
echo "racecheck rc=$?"; tail -2 $O/racecheck-cluster-push.log
timeout 60 compute-sanitizer --tool synccheck --error-exitcode 3 "$F" --sanitize --variant cluster-push --timeout-ms 60000 > $O/synccheck-cluster-push.log 2>&1
echo "synccheck rc=$?"; tail -2 $O/synccheck-cluster-push.log
timeout 60 "$F" --quick --variant cluster-push > $O/gpu_car_fused-quick-cluster-push.log 2>&1; echo "quick rc=$?"; tail -1 $O/gpu_car_fused-quick-cluster-push.log
for v in cluster-push split; do
timeout 20 $B/specsim-arbench --virtual-ranks 8 --fused-hidden 7168 --tokens 1,3,8 -d bf16 --mode graph -n 200 -w 20 --floors 0 --fused-variant $v > $O/arbench-$v.log 2>&1
echo "arbench $v rc=$?"; grep -E "^ +[0-9]+ +[0-9]+ " $O/arbench-$v.log | cut -c1-120
done
echo "t $(( $(date +%s) - t0 )) s"
