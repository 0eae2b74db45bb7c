#!/bin/bash
# The fused kernel with its first input load hoisted: build, fused tests, sanitizers, arbench.
set -u -o pipefail
O=${OUT:?set OUT to a folder}; mkdir -p $O
t0=$(date +%s)
B=build
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; nvcc --version | tail -1; } > $O/env.log 2>&1
(cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DSPECSIM_EXTRA_INCLUDE=$PWD/.deps/include \
  && ninja -C $B -j16 specsim_car specsim-arbench gpu_car_host gpu_car_fused gpu_car_virtual) > $O/build.log 2>&1 || { tail -40 $O/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
timeout 200 ctest --test-dir $B -R 'gpu_car_(fused|host)' -V --timeout 180 > $O/ctest.log 2>&1
echo "ctest rc=$?"; grep -E "gpu_car_[a-z]+: |tests passed|Failed" $O/ctest.log | head
F=$(find $B -name gpu_car_fused -type f | head -1)
for tool in memcheck synccheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 3 "$F" --quick --timeout-ms 60000 > $O/$tool.log 2>&1
  echo "$tool rc=$?"; tail -n 2 $O/$tool.log
done
timeout 120 compute-sanitizer --tool racecheck --error-exitcode 3 "$F" --quick --variant split --timeout-ms 60000 > $O/racecheck-split.log 2>&1
echo "racecheck split rc=$?"; tail -n 2 $O/racecheck-split.log
echo "t $(( $(date +%s) - t0 )) s"
for rep in 1 2; do for v in split cluster-push; do
  timeout 60 $B/specsim-arbench --virtual-ranks 8 --fused-hidden 4096,7168,8192 --tokens 1,3,8,64 \
    -d bf16 --mode graph -n 200 -w 20 --floors 0 --fused-variant $v > $O/arbench-$v-$rep.log 2>&1
  echo "== $v rep $rep rc=$?"; grep -E "^ +[0-9]+ +[0-9]+ " $O/arbench-$v-$rep.log | cut -c1-125
done; done
echo "t $(( $(date +%s) - t0 )) s"
