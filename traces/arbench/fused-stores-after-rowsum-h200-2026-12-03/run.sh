#!/bin/bash
# (1) the fused kernel with its residual and slot-emptying stores moved after the row sum (a copy
# of the tree in /tmp/mv) against the tree: arbench A/B, quick test, sanitizers, IPC test;
# (2) the tree's Release build and whole test suite.
set -u -o pipefail
O=${OUT:?set OUT to a folder}; mkdir -p $O/mv $O/suite
t0=$(date +%s)
B=build
CM="-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90"
rm -rf /tmp/mv && mkdir -p /tmp/mv && tar --exclude=./build --exclude=./build-dbg -cf - . | tar -xf - -C /tmp/mv
cp .deps/moved/car_fused_norm.cu /tmp/mv/kernels/
cmake -S . -B $B $CM -DSPECSIM_EXTRA_INCLUDE=$PWD/.deps/include > $O/suite/build.log 2>&1
(cd /tmp/mv && cmake -S . -B build $CM -DSPECSIM_EXTRA_INCLUDE=$PWD/.deps/include && ninja -C build -j16 specsim-arbench gpu_car_fused gpu_car_fused_ipc) > $O/mv/build.log 2>&1 || { tail -30 $O/mv/build.log; exit 1; }
ninja -C $B -j16 specsim-arbench >> $O/suite/build.log 2>&1 || { tail -30 $O/suite/build.log; exit 1; }
echo "build (A/B) $(( $(date +%s) - t0 )) s"
A="--virtual-ranks 8 --fused-hidden 4096,7168,8192 --tokens 1,3,8 -d bf16 --mode graph -n 200 -w 20 --floors 0"
for rep in 1 2 3; do
  for v in before after; do
    for fv in split cluster-push; do
      if [ $v = after ]; then bin=/tmp/mv/build/specsim-arbench; else bin=$B/specsim-arbench; fi
      timeout 60 $bin $A --fused-variant $fv > $O/mv/ab-$v-$fv-$rep.log 2>&1 || echo "arbench $v $fv $rep rc=$?"
    done
  done
done
(cd $O/mv; for v in before after; do for fv in split cluster-push; do cat ab-$v-$fv-*.log > arbench-$v-$fv.log; rm ab-$v-$fv-*.log; done; done)
for v in before after; do for fv in split cluster-push; do echo "$v $fv 42KB: $(grep -E '^ +3 +43008 ' $O/mv/arbench-$v-$fv.log | awk '{printf "%s ", $6}')  7168x1: $(grep -E '^ +1 +14336 ' $O/mv/arbench-$v-$fv.log | awk '{printf "%s ", $6}') 7168x8: $(grep -E '^ +8 +114688 ' $O/mv/arbench-$v-$fv.log | awk '{printf "%s ", $6}')"; done; done
echo "t $(( $(date +%s) - t0 )) s"
F=/tmp/mv/build/tests/gpu/gpu_car_fused; [ -x $F ] || F=$(find /tmp/mv/build -name gpu_car_fused -type f | head -1)
timeout 60 "$F" --quick > $O/mv/quick.log 2>&1; echo "mv quick rc=$?"; tail -1 $O/mv/quick.log
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 3 "$F" --quick > $O/mv/memcheck.log 2>&1; echo "mv memcheck rc=$?"; tail -1 $O/mv/memcheck.log
I=$(find /tmp/mv/build -name gpu_car_fused_ipc -type f | head -1)
timeout 100 "$I" > $O/mv/ipc-full.log 2>&1; echo "mv gpu_car_fused_ipc (full) rc=$?"; tail -1 $O/mv/ipc-full.log
echo "t $(( $(date +%s) - t0 )) s"
ninja -C $B -j16 >> $O/suite/build.log 2>&1 || { tail -30 $O/suite/build.log; exit 1; }
echo "build (suite) $(( $(date +%s) - t0 )) s; warnings: $(grep -c warning $O/suite/build.log)"
left=$(( 585 - ($(date +%s) - t0) ))
timeout $left ctest --test-dir $B -j12 --output-on-failure > $O/suite/ctest.log 2>&1; echo "ctest rc=$? (limit $left s)"
grep -E "tests passed|\*\*\*Failed|Timeout|Not Run" $O/suite/ctest.log | head -10
echo "t $(( $(date +%s) - t0 )) s"
