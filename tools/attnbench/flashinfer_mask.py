#!/usr/bin/env python3
"""FlashInfer's paged prefill kernel with a custom mask against the same kernel with its causal mask.

SGLang's FlashInfer backend runs a speculative verify's attention (every layer) as FlashInfer's
paged prefill with the verify's tree passed as a custom mask, which FlashInfer reads bit-packed
beside the KV tiles. This script times that kernel on verify shapes (a few query tokens a request
over a long KV cache) with the mask given as a custom mask and, for the same shapes, with the
kernel's own causal mask, and prints their ratio: what `attention_time_factor` in
models/kernels/flashinfer_custom_mask.json stands for. The custom mask holds the causal pattern,
so both runs attend to the same keys.

Each case runs `--layers` attention calls, each over its own KV cache (so that the caches together
exceed the L2 and are read from memory, as a forward's layers are), captured in one CUDA graph;
the graph is replayed `--reps` times between CUDA events and the time per call is the median over
`--rounds` such timings. Needs PyTorch with CUDA and an importable FlashInfer of the 0.2-0.3
series (its JIT compiles the prefill module on first use).

Usage: python3 tools/attnbench/flashinfer_mask.py --batches 1,4,8 --query-tokens 4,8,16 \
         --kv-lens 1024,4096 --qo-heads 32 --kv-heads 8 --head-dim 128 [--json OUT]
"""
import argparse
import json
import pathlib
import statistics
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from flashinfer_common import (add_head_args, add_timing_args, load_flashinfer, paged_prefill,  # noqa: E402
                               positive_ints, run_meta, time_graph, write_json)


def causal_tree_mask(batch, q_len, kv_len, device):
    """Per request: q_len query rows over kv_len + q_len keys, row i seeing the cached keys and
    the query keys 0..i (the causal pattern, so that both runs do the same work)."""
    total = kv_len + q_len
    rows = torch.arange(q_len, device=device).unsqueeze(1)
    cols = torch.arange(total, device=device).unsqueeze(0)
    one = cols < kv_len + rows + 1
    return one.expand(batch, q_len, total).reshape(-1).contiguous()


class Layers:
    """`layers` paged-prefill calls of one shape, each over its own KV cache, on one wrapper in
    CUDA-graph mode (planned once: every layer shares the index pointers, as a forward's do), on
    FlashInfer's FA2 kernels or (backend "fa3") its SM90 template."""

    def __init__(self, flashinfer, batch, q_len, kv_len, qo_heads, kv_heads, head_dim, layers, masked, dtype,
                 backend="fa2"):
        dev = torch.device("cuda")
        total = kv_len + q_len
        self.wrapper, index = paged_prefill(flashinfer, batch, q_len, kv_len, masked, backend)
        kwargs = dict(q_data_type=dtype, kv_data_type=dtype)
        if masked:
            kwargs["custom_mask"] = causal_tree_mask(batch, q_len, kv_len, dev)
        else:
            kwargs["causal"] = True
        self.wrapper.plan(*index, qo_heads, kv_heads, head_dim, 1, **kwargs)
        g = torch.Generator(device=dev).manual_seed(1234)
        self.q = torch.randn(batch * q_len, qo_heads, head_dim, device=dev, dtype=dtype, generator=g)
        # page size 1, NHD: (pages, 2, 1, kv_heads, head_dim)
        self.caches = [
            torch.randn(batch * total, 2, 1, kv_heads, head_dim, device=dev, dtype=dtype, generator=g)
            for _ in range(layers)
        ]
        self.out = torch.empty_like(self.q)
        torch.cuda.synchronize()

    def forward(self):
        for kv in self.caches:
            self.wrapper.run(self.q, kv, out=self.out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batches", type=positive_ints, default="1,4,8")
    ap.add_argument("--query-tokens", type=positive_ints, default="4,8,16", help="verify tokens a request")
    ap.add_argument("--kv-lens", type=positive_ints, default="1024,4096", help="cached tokens a request")
    add_head_args(ap)
    add_timing_args(ap, layers=32)
    a = ap.parse_args()
    flashinfer = load_flashinfer()
    dtype = torch.bfloat16
    meta = run_meta(flashinfer, a, layers=a.layers)
    print("# " + json.dumps(meta))
    print(f"{'batch':>5} {'q':>3} {'kv':>6} {'causal_us':>10} {'custom_us':>10} {'ratio':>6}")
    rows = []
    for kv_len in a.kv_lens:
        for b in a.batches:
            for q in a.query_tokens:
                t = {}
                for masked in (False, True):
                    layers = Layers(flashinfer, b, q, kv_len, a.qo_heads, a.kv_heads, a.head_dim, a.layers, masked,
                                    dtype)
                    t[masked] = time_graph(layers.forward, a.layers, a.reps, a.rounds)
                    del layers
                    torch.cuda.empty_cache()
                ratio = t[True] / t[False]
                rows.append({"batch": b, "query_tokens": q, "kv_len": kv_len, "causal_us": t[False],
                             "custom_us": t[True], "ratio": ratio})
                print(f"{b:>5} {q:>3} {kv_len:>6} {t[False]:>10.2f} {t[True]:>10.2f} {ratio:>6.2f}", flush=True)
    print(f"# median ratio {statistics.median(r['ratio'] for r in rows):.3f} over {len(rows)} shapes")
    if a.json:
        write_json(a.json, {"meta": meta, "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
