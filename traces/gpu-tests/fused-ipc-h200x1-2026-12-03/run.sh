#!/bin/bash
# The fused kernel with one process a rank on one GPU (gpu_car_fused_ipc), gpu_car_ipc after the
# shared process-group helper moved, and compute-sanitizer on the per-rank fused path.
set -u -o pipefail
O=${OUT:?set OUT to a folder}; mkdir -p $O
t0=$(date +%s)
B=build
(cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DSPECSIM_EXTRA_INCLUDE=$PWD/.deps/include \
  && ninja -C $B -j16 gpu_car_fused_ipc gpu_car_ipc) > $O/build.log 2>&1 || { tail -40 $O/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
F=$(find $B -name gpu_car_fused_ipc -type f | head -1)
I=$(find $B -name gpu_car_ipc -type f | head -1)
timeout 300 "$F" > $O/gpu_car_fused_ipc-full.log 2>&1; echo "gpu_car_fused_ipc (full) rc=$?"; grep -E "^fused ipc|checks" $O/gpu_car_fused_ipc-full.log | tail -25
echo "t $(( $(date +%s) - t0 )) s"
timeout 120 "$I" --quick > $O/gpu_car_ipc-quick.log 2>&1; echo "gpu_car_ipc --quick rc=$?"; tail -1 $O/gpu_car_ipc-quick.log
echo "t $(( $(date +%s) - t0 )) s"
for tool in memcheck synccheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool --target-processes all --error-exitcode 3 "$F" --quick > $O/$tool.log 2>&1
  echo "$tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^fused ipc|gpu_car_fused_ipc:" $O/$tool.log | sort | uniq -c | head -12
  echo "t $(( $(date +%s) - t0 )) s"
done
