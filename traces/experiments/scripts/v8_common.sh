# Archived with v8_floor.sh, v8_tune.sh, v8_tune2.sh (traces/experiments/README.md); tree of commit f325b18.
# Shared by v8_floor.sh, v8_tune.sh, v8_tune2.sh (sourced): the environment, the log folder, the
# timing-only build's arguments (8 virtual ranks, graph of 200, bf16, floors off) and `row LABEL
# CMD...`, which runs CMD, appends its output to $ROW_LOG and prints LABEL with the one-shot-ll
# graph row's us per call.
set -u -o pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1  # never NVLink multicast
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
A=(--virtual-ranks 8 --sizes 14336,43008,114688 -n 200 -w 20 -d bf16 --mode graph --floors 0)
ROW_WIDTH=${ROW_WIDTH:-44}
row() {
  local label=$1
  shift
  printf "%-${ROW_WIDTH}s" "$label"
  "$@" 2>&1 | tee -a "$ROW_LOG" | grep -E "^# +one-shot-ll(-pull)? +graph" | head -1 |
    sed -E 's/^# *one-shot-ll(-pull)? *graph//'
}
