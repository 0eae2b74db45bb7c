#!/usr/bin/env bash
# The accuracy points of docs/README-replay.md: `specsim replay` on one H200 for Llama-3.1-8B at
# tp 1 and one rank's share of tp 8 for Llama-3.1-70B and DeepSeek-V3 (bf16), verify and decode at
# 1, 3, 4, 8, 16 tokens, context 2048. Writes one JSON + text per point into OUTDIR.
# usage: tools/replay_accuracy.sh SPECSIM_BIN OUTDIR [extra replay flags]
set -uo pipefail
BIN=${1:?specsim binary}
OUT=${2:?output folder}
shift 2
mkdir -p "$OUT"
COMMON=(--hardware h200:nvswitch --context-len 2048 "$@")
fail=0
point() {  # name, flags...
  local name=$1
  shift
  if ! "$BIN" replay "${COMMON[@]}" "$@" -o "$OUT/$name.json" >"$OUT/$name.txt" 2>&1; then
    echo "FAILED: $name: $(tail -1 "$OUT/$name.txt")"
    fail=1
  else
    echo "ok: $name"
  fi
}
for spec in "llama-3.1-8b 1" "llama-3.1-70b 8" "deepseek-v3 8 --dtype bf16"; do
  read -r model tp extra <<<"$spec"
  for t in 1 3 4 8 16; do
    # decode at t tokens: t requests, no speculation
    point "${model}_decode_t${t}" --model-path "$model" --tp-size "$tp" $extra --speculative-algorithm NONE --batch-size "$t"
    # verify at t tokens: one request, a chain of t draft tokens (topk 1: steps = t - 1); the
    # accept length only feeds tok/s, which the replay does not measure
    if [ "$t" -ge 2 ]; then
      point "${model}_verify_t${t}" --model-path "$model" --tp-size "$tp" $extra --batch-size 1 \
        --speculative-num-steps $((t - 1)) --speculative-eagle-topk 1 --speculative-num-draft-tokens "$t" --accept-len 1
    fi
  done
done
exit $fail
