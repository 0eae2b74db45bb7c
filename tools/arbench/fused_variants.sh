#!/usr/bin/env bash
# The fused all-reduce + residual add + RMSNorm's row-split variants side by side on one GPU
# (8 virtual ranks): Release build for sm_90; specsim-arbench --fused-variant for every variant at
# hidden 4096/7168/8192 x tokens 1,3,8,64 (bf16, one graph of 200 calls); a summary of which
# variant meets the targets (fused within 0.4 us of the all-reduce alone and at least 1.6x faster
# than the all-reduce then the separate add+RMSNorm, the fastest separate kernel of any variant);
# gpu_car_fused --quick over every variant; compute-sanitizer memcheck / racecheck / synccheck on
# every variant but cluster (gpu_car_fused --sanitize), as far as the time box allows.
# Run from the repository root on one H200 (16 cores): OUT=/some/dir tools/arbench/fused_variants.sh
# Every log goes to $OUT (default ./out); the whole run stays under BUDGET_S seconds (default 450).
set -u -o pipefail
OUT=${OUT:-$PWD/out}
BUDGET_S=${BUDGET_S:-450}
mkdir -p "$OUT"
T0=$(date +%s)
left() { echo $((BUDGET_S - ($(date +%s) - T0))); }
# timeout for a step: at most $1 seconds and what is left of the budget (0: skip the step)
cap() { local l; l=$(left); if [ "$l" -lt "$1" ]; then echo $((l > 5 ? l : 0)); else echo "$1"; fi; }
VARIANTS="cluster cluster-push block split two-shot"
B=build
{ date -u; nvidia-smi; nvcc --version | tail -1; git rev-parse HEAD; git status --short | head -20; } > "$OUT/env.log" 2>&1
echo "== build (Release, sm_90)"
GEN=(); command -v ninja > /dev/null && [ ! -f $B/Makefile ] && GEN=(-G Ninja)
if ! cmake -S . -B $B "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > "$OUT/build.log" 2>&1 ||
   ! timeout "$(cap 300)" cmake --build $B -j16 --target specsim-arbench gpu_car_fused >> "$OUT/build.log" 2>&1; then
  tail -40 "$OUT/build.log"; echo "build failed (build.log)"; exit 1
fi
echo "built in $(( $(date +%s) - T0 )) s"
F=$(find $B -name gpu_car_fused -type f | head -1)

echo "== arbench: all-reduce alone vs + separate add+RMSNorm vs fused, per variant (8 virtual ranks, graph of 200)"
for v in $VARIANTS; do
  t=$(cap 60); [ "$t" -gt 0 ] || { echo "arbench $v: not run (time box)"; continue; }
  timeout "$t" $B/specsim-arbench --virtual-ranks 8 --fused-hidden 4096,7168,8192 --tokens 1,3,8,64 -d bf16 \
    --mode graph -n 200 -w 20 --floors 0 --fused-variant "$v" > "$OUT/arbench-$v.log" 2>&1
  echo "arbench $v rc=$?"
done

# summary: rows "hidden tokens" of every variant; best pair = the fastest all-reduce + separate norm
# of any variant at that shape
awk '
  FNR == 1 { v = FILENAME; sub(/.*arbench-/, "", v); sub(/\.log$/, "", v) }
  /^# hidden [0-9]+:/ { h = $3; sub(/:/, "", h) }
  /^ +[0-9]+ +[0-9]+ / && h != "" && NF == 11 && $8 ~ /x$/ {
    k = h "x" $1; ar[v, k] = $4; pair[v, k] = $5; fused[v, k] = $6; wrong[v, k] = $9; rows[v, k] = $11
    if (!(k in best) || $5 < best[k]) best[k] = $5
    if (!(k in seen)) { seen[k] = 1; keys[++n] = k }
    vs[v] = 1
  }
  END {
    printf "%-13s %-9s %8s %8s %8s %9s %10s %12s %5s %6s  %s\n", "variant", "shape", "ar", "+norm", "fused",
           "fused-ar", "pair/fus", "bestpair/fus", "rows", "wrong", "targets (<= ar+0.4, >= 1.6x best pair)"
    split("cluster cluster-push block split two-shot", order, " ")
    for (i = 1; i <= n; ++i) for (j = 1; j <= 5; ++j) {
      v = order[j]; k = keys[i]
      if (!((v, k) in fused)) continue
      d = fused[v, k] - ar[v, k]; r = pair[v, k] / fused[v, k]; rb = best[k] / fused[v, k]
      ok = (d <= 0.4 && rb >= 1.6) ? "MEETS" : "misses"
      printf "%-13s %-9s %8.2f %8.2f %8.2f %9.2f %9.2fx %11.2fx %5s %6s  %s\n", v, k, ar[v, k], pair[v, k],
             fused[v, k], d, r, rb, rows[v, k], wrong[v, k], ok
    }
  }' "$OUT"/arbench-*.log | tee "$OUT/summary.txt"
echo "-- the issue's target shape, 7168 x 3 (42 KB):"
grep -E "^(variant|[a-z-]+ +7168x3 )" "$OUT/summary.txt"

echo "== gpu_car_fused --quick (every variant)"
t=$(cap 120)
if [ "$t" -gt 0 ]; then
  timeout "$t" "$F" --quick > "$OUT/fused-quick.log" 2>&1; echo "gpu_car_fused --quick rc=$?"
  grep -E "FAIL|gpu_car_fused: " "$OUT/fused-quick.log" | head -20
else
  echo "gpu_car_fused --quick: not run (time box)"
fi

echo "== compute-sanitizer on every variant but cluster (gpu_car_fused --sanitize)"
for tool in memcheck racecheck synccheck; do
  for v in cluster-push block split two-shot; do
    t=$(cap 60)
    if [ "$t" -le 0 ]; then echo "$tool $v: not run (time box)"; continue; fi
    timeout "$t" compute-sanitizer --tool $tool --error-exitcode 3 "$F" --sanitize --variant "$v" \
      --timeout-ms 60000 > "$OUT/$tool-$v.log" 2>&1
    echo "$tool $v rc=$? ($(grep -E "ERROR SUMMARY|RACECHECK SUMMARY|gpu_car_fused: " "$OUT/$tool-$v.log" | tr '\n' ' '))"
  done
done
echo "total $(( $(date +%s) - T0 )) s; logs in $OUT"
