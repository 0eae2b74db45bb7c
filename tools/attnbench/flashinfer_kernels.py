#!/usr/bin/env python3
"""GPU time of FlashInfer's attention kernels as SGLang's FlashInfer backend runs them.

On the FlashInfer backend SGLang runs a speculative cycle's attention on three FlashInfer kernels:
the verify on the paged prefill kernel (FA2) with the draft tree as a custom mask, the draft
extend on the same kernel with its causal mask, and every draft step (and a plain decode step) on
the batch-decode kernel, its tensor-core path when a KV head serves more than four query heads.
This script times each at decode-time shapes (a few query tokens a request over a long KV cache)
and prints, beside each time, its KV bytes and FLOPs (the KV alone; the engine adds the query and
output activations, a few percent at these shapes), so that
the kernels' terms can be fitted (tools/attnbench/fit_flashinfer.py,
models/kernels/flashinfer_attention.json). `--kinds fa3` times FlashInfer's SM90
(FlashAttention-3) template with its causal mask at one-token and verify shapes: the closest
kernel this script can build to the FA3 SGLang's FA3 backend runs from sgl-kernel, not the same
code (it needs CUTLASS's headers under flashinfer/data/cutlass).

Each case runs `--layers` calls, each over its own KV cache (so that the caches together exceed
the L2 and are read from memory, as a forward's layers are), captured in one CUDA graph, replayed
`--reps` times between CUDA events; the time per call is the median over `--rounds` timings.
Needs PyTorch with CUDA and an importable FlashInfer of the 0.2-0.3 series (its JIT compiles the
prefill and decode modules on first use).

Usage: python3 tools/attnbench/flashinfer_kernels.py --heads 32:8,16:2,8:1 --batches 1,4,16 \
         --query-tokens 4,16 --kv-lens 512,2048,8192 --decode-requests 1,4,16,64 [--json OUT]
"""
import argparse
import json
import pathlib
import sys
import time

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from flashinfer_common import (KERNEL_ROW_HEADER, add_timing_args, head_pairs, kernel_row,  # noqa: E402
                               load_flashinfer, positive_ints, time_graph, write_json)
from flashinfer_mask import Layers  # noqa: E402

HEAD_DIM = 128
KINDS = ("causal", "custom", "decode", "fa3")


def kinds(text):
    """argparse type: some of causal, custom and decode, comma-separated."""
    chosen = [x for x in text.split(",") if x]
    bad = [x for x in chosen if x not in KINDS]
    if bad or not chosen:
        raise argparse.ArgumentTypeError(f"choose from {', '.join(KINDS)}")
    return chosen


class DecodeLayers:
    """`layers` batch-decode calls of one shape (`requests` one-token queries over `kv_len` cached
    tokens each), each over its own KV cache, on one wrapper in CUDA-graph mode, planned once."""

    def __init__(self, flashinfer, requests, kv_len, qo_heads, kv_heads, layers, dtype):
        dev = torch.device("cuda")
        indptr = torch.arange(requests + 1, dtype=torch.int32, device=dev) * kv_len
        indices = torch.arange(requests * kv_len, dtype=torch.int32, device=dev)
        last = torch.ones(requests, dtype=torch.int32, device=dev)
        self.tensor_cores = qo_heads // kv_heads > 4  # SGLang's should_use_tensor_core for 16-bit KV
        self.wrapper = flashinfer.BatchDecodeWithPagedKVCacheWrapper(
            torch.empty(256 * 1024 * 1024, dtype=torch.uint8, device=dev), "NHD", use_cuda_graph=True,
            use_tensor_cores=self.tensor_cores, paged_kv_indptr_buffer=torch.zeros_like(indptr),
            paged_kv_indices_buffer=torch.zeros_like(indices), paged_kv_last_page_len_buffer=torch.zeros_like(last))
        self.wrapper.plan(indptr, indices, last, qo_heads, kv_heads, HEAD_DIM, 1, data_type=dtype, q_data_type=dtype)
        g = torch.Generator(device=dev).manual_seed(1234)
        self.q = torch.randn(requests, qo_heads, HEAD_DIM, device=dev, dtype=dtype, generator=g)
        self.caches = [torch.randn(requests * kv_len, 2, 1, kv_heads, HEAD_DIM, device=dev, dtype=dtype, generator=g)
                       for _ in range(layers)]
        self.out = torch.empty_like(self.q)
        torch.cuda.synchronize()

    def forward(self):
        for kv in self.caches:
            self.wrapper.run(self.q, kv, out=self.out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--heads", type=head_pairs, default="32:8,16:2,8:1", help="qo:kv heads a rank holds")
    ap.add_argument("--batches", type=positive_ints, default="1,4,16", help="requests of the prefill kinds")
    ap.add_argument("--query-tokens", type=positive_ints, default="4,16", help="query tokens a request (prefill)")
    ap.add_argument("--kv-lens", type=positive_ints, default="512,2048,8192", help="cached tokens a request")
    ap.add_argument("--decode-requests", type=positive_ints, default="1,4,16,64",
                    help="requests of the decode kind (batch x top-k for a draft step)")
    ap.add_argument("--kinds", type=kinds, default="causal,custom,decode",
                    help="some of causal, custom, decode, fa3 (Hopper only)")
    add_timing_args(ap, layers=16)
    a = ap.parse_args()
    flashinfer = load_flashinfer()
    dtype = torch.bfloat16
    meta = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
            "flashinfer": getattr(flashinfer, "__version__", "unknown"), "head_dim": HEAD_DIM, "layers": a.layers,
            "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime())}
    print("# " + json.dumps(meta))
    print(KERNEL_ROW_HEADER)
    rows = []
    for qo, kvh in a.heads:
        for kind in a.kinds:
            if kind == "decode":
                shapes = [(r, 1, L) for L in a.kv_lens for r in a.decode_requests]
            elif kind == "fa3":  # one-token decode shapes too: FA3 decodes with the same kernel
                shapes = ([(r, 1, L) for L in a.kv_lens for r in a.decode_requests] +
                          [(b, q, L) for L in a.kv_lens for b in a.batches for q in a.query_tokens])
            else:
                shapes = [(b, q, L) for L in a.kv_lens for b in a.batches for q in a.query_tokens]
            for reqs, q, kv_len in shapes:
                if kind == "decode":
                    layers = DecodeLayers(flashinfer, reqs, kv_len, qo, kvh, a.layers, dtype)
                else:
                    layers = Layers(flashinfer, reqs, q, kv_len, qo, kvh, HEAD_DIM, a.layers, kind == "custom", dtype,
                                    "fa3" if kind == "fa3" else "fa2")
                us = time_graph(layers.forward, a.layers, a.reps, a.rounds)
                del layers
                torch.cuda.empty_cache()
                # decode's KV holds the context only; a prefill's its new tokens too
                context = kv_len + (q if kind != "decode" else 0)
                rows.append(kernel_row(kind, qo, kvh, reqs, q, kv_len, context, us, HEAD_DIM))
    if a.json:
        write_json(a.json, {"meta": meta, "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
