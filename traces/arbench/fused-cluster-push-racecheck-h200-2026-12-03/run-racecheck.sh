#!/bin/bash
# racecheck on cluster-push: the first hazards it reports, in full.
set -u -o pipefail
O=${OUT:?set OUT to a folder}; mkdir -p $O
t0=$(date +%s)
B=build
(cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_CUDA_FLAGS=-lineinfo -DSPECSIM_EXTRA_INCLUDE=$PWD/.deps/include \
  && ninja -C $B -j16 gpu_car_fused) > $O/build.log 2>&1 || { tail -40 $O/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
F=$(find $B -name gpu_car_fused -type f | head -1)
timeout 100 compute-sanitizer --tool racecheck --racecheck-report all --print-limit 6 --error-exitcode 3 "$F" --sanitize --variant cluster-push --timeout-ms 60000 > $O/racecheck-cluster-push.log 2>&1
echo "racecheck rc=$?"; grep -v "^case" $O/racecheck-cluster-push.log | head -60; tail -3 $O/racecheck-cluster-push.log
echo "t $(( $(date +%s) - t0 )) s"
