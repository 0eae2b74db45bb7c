#!/usr/bin/env bash
# two-shot with the first input hoisted: A/B against split over 1..64 tokens, then the whole GPU suite
set -u -o pipefail
OUT=${OUT:-$PWD/out}; mkdir -p "$OUT"
B=build
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; nvcc --version | tail -1; git rev-parse HEAD; git status --short; } > "$OUT/env.log" 2>&1
t0=$(date +%s)
if ! { cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DSPECSIM_EXTRA_INCLUDE=$PWD/.deps/include &&
       cmake --build $B -j16; } > "$OUT/build.log" 2>&1; then
  tail -40 "$OUT/build.log"; echo "build failed"; exit 1
fi
echo "build $(( $(date +%s) - t0 )) s; warnings: $(grep -c -i 'warning' $OUT/build.log)"
A="--virtual-ranks 8 --fused-hidden 4096,7168,8192 --tokens 1,3,8,16,32,64 -d bf16 --mode graph -n 200 -w 20 --floors 0"
for round in 1 2; do for v in split two-shot; do
  echo "### round $round variant $v" >> "$OUT/arbench.log"
  timeout 60 $B/specsim-arbench $A --fused-variant $v >> "$OUT/arbench.log" 2>&1
done; done
echo "arbench done $(( $(date +%s) - t0 )) s"
awk '/^### /{r=$3; v=$5} /^# hidden/{h=$3; sub(":","",h)} /^ +[0-9]+ +[0-9]+ /{printf "%-9s r%s h%s t%s ar %s +norm %s fused %s wrong %s\n", v, r, h, $1, $4, $5, $6, $9}' "$OUT/arbench.log"
timeout 420 ctest --test-dir $B -j12 --timeout 240 --output-on-failure > "$OUT/ctest.log" 2>&1
echo "ctest rc=$?"; grep -E "tests passed|Failed|\*\*\*|Not Run|Skipped" "$OUT/ctest.log" | tail -12
echo "all done $(( $(date +%s) - t0 )) s"
