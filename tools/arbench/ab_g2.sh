#!/usr/bin/env bash
# A/B on all GPUs of the machine: two specsim-arbench builds alternated, one-shot-ll graph rows.
#   usage: ab_g2.sh BASE_ARBENCH NEW_ARBENCH   (log in $OUT/ab-g2.log)
set -u -o pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1  # never NVLink multicast
G=$(nvidia-smi -L | wc -l)
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
date -u | tee "$OUT/ab-g2.log"
for rep in 1 2 3; do
  for b in "$1" "$2"; do
    printf '%-28s rep %d' "$b" $rep | tee -a "$OUT/ab-g2.log"
    "$b" -g "$G" --sizes 14336,43008,57344,114688 -n 200 -w 20 -d bf16 --mode graph --floors 0 \
      --variant one-shot-ll 2>&1 | grep -E "^# +one-shot-ll +graph +[0-9]" | sed 's/^# *one-shot-ll *graph//' |
      tee -a "$OUT/ab-g2.log"
  done
done
