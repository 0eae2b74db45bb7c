#!/bin/bash
# cluster-push with the cluster-started barrier: sanitizers, tests, and an in-run A/B of its timing
# against the kernel without the barrier (a second build of arbench from the committed sources).
set -u -o pipefail
O=${OUT:?set OUT to a folder}; mkdir -p $O
t0=$(date +%s)
B=build
CM="-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DSPECSIM_EXTRA_INCLUDE=$PWD/.deps/include"
rm -rf /tmp/base && mkdir -p /tmp/base && tar --exclude=./build --exclude=./build-dbg --exclude=./.deps/base -cf - . | tar -xf - -C /tmp/base
cp .deps/base/car_fused_norm.cu .deps/base/car_fused_rows.cuh /tmp/base/kernels/
(cmake -S . -B $B $CM && ninja -C $B -j16 gpu_car_fused gpu_car_fused_ipc specsim-arbench) > $O/build.log 2>&1 || { tail -40 $O/build.log; exit 1; }
(cd /tmp/base && cmake -S . -B build $CM -DSPECSIM_EXTRA_INCLUDE=$PWD/.deps/include && ninja -C build -j16 specsim-arbench) > $O/build-base.log 2>&1 || { tail -40 $O/build-base.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
F=$(find $B -name gpu_car_fused -type f | head -1)
for tool in racecheck synccheck memcheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 3 "$F" --sanitize --variant cluster-push --timeout-ms 60000 > $O/$tool-cluster-push.log 2>&1
  echo "$tool rc=$?"; tail -2 $O/$tool-cluster-push.log
done
echo "t $(( $(date +%s) - t0 )) s"
timeout 60 "$F" --quick --variant cluster-push > $O/gpu_car_fused-quick-cluster-push.log 2>&1; echo "quick cluster-push rc=$?"; tail -1 $O/gpu_car_fused-quick-cluster-push.log
A="--virtual-ranks 8 --fused-hidden 4096,7168,8192 --tokens 1,3,8 -d bf16 --mode graph -n 200 -w 20 --floors 0"
for rep in 1 2; do
  for v in cluster-push base-cluster-push split; do
    if [ $v = base-cluster-push ]; then bin=/tmp/base/build/specsim-arbench; fv=cluster-push; else bin=$B/specsim-arbench; fv=$v; fi
    timeout 60 $bin $A --fused-variant $fv > $O/arbench-$v-$rep.log 2>&1
    echo "arbench $v rep $rep rc=$?"
  done
done
echo "t $(( $(date +%s) - t0 )) s"
I=$(find $B -name gpu_car_fused_ipc -type f | head -1)
timeout 200 "$I" > $O/gpu_car_fused_ipc-full.log 2>&1; echo "gpu_car_fused_ipc (full) rc=$?"; tail -3 $O/gpu_car_fused_ipc-full.log
echo "t $(( $(date +%s) - t0 )) s"
