#!/usr/bin/env bash
# One rank's share of Llama-3.3-70B at tp 8 replayed on one GPU: the plain step, a chain verify
# at 8, 16, 32 and 64 tokens, and the (8, 8, 64) tree cycle (draft decode over 8 branches, verify
# of 64 tokens, extend). Collectives are left out (one GPU). Writes one JSON + text per point.
# usage: tools/replay_verify_sweep.sh SPECSIM_BIN OUTDIR [extra replay flags]
set -uo pipefail
BIN=${1:?specsim binary}
OUT=${2:?output folder}
shift 2
mkdir -p "$OUT"
COMMON=(--model-path llama-3.3-70b --speculative-draft-model-path models/llama-3.1-70b/eagle3
  --tp-size 8 --batch-size 1 --context-len 2048 --allreduce nccl "$@")
fail=0
point() { # name, flags...
  local name=$1
  shift
  local t0=$SECONDS
  if ! "$BIN" replay "${COMMON[@]}" "$@" -o "$OUT/$name.json" >"$OUT/$name.txt" 2>&1; then
    echo "FAILED: $name: $(tail -1 "$OUT/$name.txt")"
    fail=1
  else
    echo "ok: $name ($((SECONDS - t0)) s)"
  fi
}
point tree_s8_k8_n64 --speculative-algorithm EAGLE3 --speculative-num-steps 8 --speculative-eagle-topk 8 \
  --speculative-num-draft-tokens 64 --accept-len 5.88
for t in 8 16 32 64; do
  point "chain_t$t" --speculative-algorithm EAGLE3 --speculative-num-steps $((t - 1)) --speculative-eagle-topk 1 \
    --speculative-num-draft-tokens "$t" --accept-len 1 --no-gemm-chain
done
exit $fail
