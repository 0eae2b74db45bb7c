#!/usr/bin/env bash
# One-shot GPU check of the custom all-reduce: build, ctest gpu_*, the benchmark,
# compute-sanitizer memcheck + racecheck on the short test list. Logs go to $OUT (default ./out).
# Expects CLI11 headers in .deps/include on machines without libcli11-dev. Builds the whole tree
# when it configures; otherwise only the all-reduce targets through .deps/harness.
set -u -o pipefail
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
INC=$PWD/.deps/include
{ date -u; nvidia-smi; nvidia-smi topo -m; nvcc --version | tail -1; } > "$OUT/env.log" 2>&1
T="specsim_car specsim-arbench gpu_car_host gpu_car_virtual gpu_car_ipc gpu_car_multigpu"
B=build
if ! { cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
         -DSPECSIM_EXTRA_INCLUDE="$INC" && cmake --build $B -j16 --target $T; } > "$OUT/build.log" 2>&1; then
  echo "full-tree build failed (see build.log); building the all-reduce alone" | tee -a "$OUT/build.log"
  B=build-car
  { cmake -S .deps/harness -B $B -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
      -DSPECSIM_EXTRA_INCLUDE="$INC" && cmake --build $B -j16; } >> "$OUT/build.log" 2>&1 \
    || { tail -40 "$OUT/build.log"; exit 1; }
fi
echo "build dir: $B"
ctest --test-dir $B -R gpu_ -V --timeout 300 2>&1 | tee "$OUT/ctest.log"
$B/specsim-arbench --virtual-ranks 8 --sizes 14336,43008,57344,114688,8M -n 100 -w 20 -d bf16 \
  2>&1 | tee "$OUT/arbench.log"
V=$(find $B -name gpu_car_virtual -type f | head -1)
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 3 "$V" --quick --timeout-ms 60000 \
  > "$OUT/memcheck.log" 2>&1; echo "memcheck rc=$?" | tee -a "$OUT/memcheck.log"
timeout 120 compute-sanitizer --tool racecheck --error-exitcode 3 "$V" --quick --timeout-ms 60000 \
  > "$OUT/racecheck.log" 2>&1; echo "racecheck rc=$?" | tee -a "$OUT/racecheck.log"
tail -n 3 "$OUT/memcheck.log" "$OUT/racecheck.log"
grep -E "(ipc world|: world |graph |absent|gpu_car_[a-z]+: |SKIP)" "$OUT/ctest.log" | grep -v child; grep -E "tests passed|Skipped|Failed|\*\*\*" "$OUT/ctest.log"
