#!/bin/bash
# The IPC test after its stream fix; cluster-push with the started-wait in the row sum (a) or right
# after the sends (b), against split, in one run.
set -u -o pipefail
O=${OUT:?set OUT to a folder}; mkdir -p $O
t0=$(date +%s)
B=build
CM="-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90"
rm -rf /tmp/vb && mkdir -p /tmp/vb && tar --exclude=./build --exclude=./build-dbg -cf - . | tar -xf - -C /tmp/vb
cp .deps/varb/car_fused_norm.cu .deps/varb/car_fused_rows.cuh /tmp/vb/kernels/
(cmake -S . -B $B $CM -DSPECSIM_EXTRA_INCLUDE=$PWD/.deps/include && ninja -C $B -j16 gpu_car_fused gpu_car_fused_ipc specsim-arbench) > $O/build.log 2>&1 || { tail -40 $O/build.log; exit 1; }
(cd /tmp/vb && cmake -S . -B build $CM -DSPECSIM_EXTRA_INCLUDE=$PWD/.deps/include && ninja -C build -j16 specsim-arbench gpu_car_fused) > $O/build-b.log 2>&1 || { tail -40 $O/build-b.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
I=$(find $B -name gpu_car_fused_ipc -type f | head -1)
timeout 200 "$I" > $O/ipc-full.log 2>&1; echo "gpu_car_fused_ipc (full) rc=$?"; grep -E "FAILED|passed|checks" $O/ipc-full.log | tail -12
echo "t $(( $(date +%s) - t0 )) s"
FB=$(find /tmp/vb/build -name gpu_car_fused -type f | head -1)
timeout 100 compute-sanitizer --tool racecheck --error-exitcode 3 "$FB" --sanitize --variant cluster-push --timeout-ms 60000 > $O/racecheck-b.log 2>&1
echo "racecheck b rc=$?"; tail -2 $O/racecheck-b.log
A="--virtual-ranks 8 --fused-hidden 4096,7168,8192 --tokens 1,3,8 -d bf16 --mode graph -n 200 -w 20 --floors 0"
for rep in 1 2 3; do
  for v in a b split; do
    if [ $v = b ]; then bin=/tmp/vb/build/specsim-arbench; fv=cluster-push; elif [ $v = a ]; then bin=$B/specsim-arbench; fv=cluster-push; else bin=$B/specsim-arbench; fv=split; fi
    timeout 60 $bin $A --fused-variant $fv > $O/ab-$v-$rep.log 2>&1 || echo "arbench $v $rep rc=$?"
  done
done
cd $O; for v in a b split; do cat ab-$v-*.log > arbench-$v.log; rm ab-$v-*.log; done
echo "t $(( $(date +%s) - t0 )) s"
