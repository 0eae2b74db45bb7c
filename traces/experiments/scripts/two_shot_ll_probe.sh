#!/usr/bin/env bash
# Archived one-off (traces/experiments/README.md). Needs the timing-only build (-DSPECSIM_LL_PROBE),
# removed after commit f325b18: run it on a checkout of that commit, where it was tools/arbench/two_shot_ll_probe.sh.
# Where two-shot-ll's time goes at 8 (and 4) virtual ranks on one GPU, in one run: the
# timing-only build (-DSPECSIM_LL_PROBE; results wrong by design, not checked) of specsim-arbench,
# then one row per setting: 200 calls in one CUDA graph, bf16, us per call at 14336 43008 114688 B.
# Settings (kernels/car_kernels.cu, two_shot_ll_kernel): SPECSIM_LL_PROBE 0 real | 1 launch +
# parameters | 4 one poll pass whatever it finds (no waiting); SPECSIM_LL_SLEEP n: back-off of n ns
# between round-3 polls; SPECSIM_LL_ROT 0: round 2 in the plain thread order; SPECSIM_LL_BLOCKS,
# --ll-threads: the grid. Compare rows within this build (its probe code has a cost of its own).
#   usage: two_shot_ll_probe.sh   (from the repository root; logs in $OUT, default ./out)
set -u -o pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1  # never NVLink multicast
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
B=build-probe
t0=$(date +%s)
timeout 170 bash -c "cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DSPECSIM_EXTRA_INCLUDE=$PWD/.deps/include -DCMAKE_CUDA_FLAGS=-DSPECSIM_LL_PROBE \
    -DCMAKE_CXX_FLAGS=-DSPECSIM_LL_PROBE && cmake --build $B -j16 --target specsim-arbench" \
  > "$OUT/build-probe.log" 2>&1 || { tail -40 "$OUT/build-probe.log"; exit 1; }
echo "build $(($(date +%s) - t0)) s"
P=$B/specsim-arbench
# row LABEL WORLD VARIANTS [VAR=VALUE ...] [-- ARBENCH ARGS]
row() {
  local label=$1 w=$2 v=$3
  shift 3
  local envs=() args=()
  while [ $# -gt 0 ]; do
    if [ "$1" = -- ]; then shift; args=("$@"); break; fi
    envs+=("$1"); shift
  done
  printf '%-40s' "$label"
  timeout 30 env "${envs[@]}" $P --virtual-ranks "$w" --sizes 14336,43008,114688 -n 200 -w 20 -d bf16 \
    --mode graph --floors 0 --variant "$v" "${args[@]}" 2>&1 | tee -a "$OUT/probe.log" |
    grep -E "^# +[a-z-]+ +graph " | sed -E 's/^# *//; s/ +graph//' | tr -s ' ' | tr '\n' ' '
  echo
}
echo "== virtual ranks, timing-only build, graph of 200, us per call at 14336 43008 114688 B"
row "8 ranks, real kernels" 8 one-shot-ll,two-shot-ll
row "8 ranks, probe 1 (launch + parameters)" 8 two-shot-ll SPECSIM_LL_PROBE=1
row "8 ranks, probe 4 (no waiting)" 8 two-shot-ll SPECSIM_LL_PROBE=4
for ns in 100 300 1000; do row "8 ranks, round-3 back-off $ns ns" 8 two-shot-ll SPECSIM_LL_SLEEP=$ns; done
row "8 ranks, round 2 in plain thread order" 8 two-shot-ll SPECSIM_LL_ROT=0
for b in 8 11 33; do row "8 ranks, $b blocks a rank" 8 two-shot-ll SPECSIM_LL_BLOCKS=$b; done
for t in 64 256; do row "8 ranks, $t threads a block" 8 two-shot-ll -- --ll-threads $t; done
row "8 ranks, real kernels (again)" 8 one-shot-ll,two-shot-ll
row "4 ranks, real kernels" 4 one-shot-ll,two-shot-ll
row "4 ranks, probe 4 (no waiting)" 4 two-shot-ll SPECSIM_LL_PROBE=4
row "4 ranks, round-3 back-off 300 ns" 4 two-shot-ll SPECSIM_LL_SLEEP=300
date -u
