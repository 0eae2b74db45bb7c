#!/usr/bin/env bash
# Our custom all-reduce beside PyTorch's symmetric-memory one-shot and two-shot and NCCL, on one
# machine in one run: specsim-arbench -g N (our variants and NCCL 2.x through its own binary), then
# tools/arbench/torch_allreduce.py (torch one-shot, two-shot, NCCL through torch.distributed), then
# one table with the ratios. Needs N >= 2 GPUs and python3 with torch.
# Usage: tools/arbench/side_by_side.sh [BUILD_DIR]  (logs in $OUT, default ./out; SIZES, ITERS)
set -u -o pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1  # never NVLink multicast
B=${1:-build}
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
G=$(nvidia-smi -L | wc -l)
SIZES=${SIZES:-14336,43008,57344,114688}
ITERS=${ITERS:-200}
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $G x $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" \
  > "$OUT/side-by-side.log"
"$B/specsim-arbench" -g "$G" --sizes "$SIZES" -n "$ITERS" -w 20 -d bf16 --mode both \
  --variant one-shot-ll,one-shot-ll-pull,one-shot-ll-bcast,one-shot-pull,nccl > "$OUT/side-by-side-arbench.log" 2>&1
echo "arbench rc=$?" >> "$OUT/side-by-side.log"
PYTHONUNBUFFERED=1 python3 tools/arbench/torch_allreduce.py --gpus "$G" --sizes "$SIZES" --iters "$ITERS" \
  --arbench "$OUT/side-by-side-arbench.log" >> "$OUT/side-by-side.log" 2>&1
echo "torch rc=$?" >> "$OUT/side-by-side.log"
cat "$OUT/side-by-side.log"
