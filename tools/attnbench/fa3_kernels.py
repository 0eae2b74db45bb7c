#!/usr/bin/env python3
"""GPU time of FlashAttention-3's paged-KV kernel as SGLang's FA3 backend calls it.

On Hopper SGLang's default attention backend for Llama- and Qwen-class models is FA3
(flashattention_backend.py, the `flash_attn_with_kvcache` of sgl-kernel's FA3 build). A chain's
draft steps and a plain decode step call it with one query token a request, the verify and the
draft extend with a few (causal), always over the paged KV cache (page size 1) through a page table
as wide as the model's context, with `num_splits` left to FA3's heuristic. This script makes the
same call at decode-time shapes and prints, beside each time, its KV bytes and FLOPs (counted as
the engine counts an attention op), so that the kernel's terms can be fitted
(`tools/attnbench/fit_fa3.py`, models/kernels/fa3_attention.json).

First FA3's output is checked against attention computed by PyTorch at three small shapes (a
difference over 0.01 stops the run). Each case runs `--layers` calls, each over its own KV cache (so that the caches together exceed
the L2 and are read from memory, as a forward's layers are), captured in one CUDA graph, replayed
`--reps` times between CUDA events; the time per call is the median over `--rounds` timings.
Needs PyTorch with CUDA on a Hopper GPU and FA3's `flash_attn_interface` importable (FlashAttention's
`hopper/` folder, built for head dim 128 and bf16 at least).

Usage: python3 tools/attnbench/fa3_kernels.py --heads 32:8,16:2,8:1 --batches 1,4,16 \
         --query-tokens 2,4,8,16 --kv-lens 512,2048,8192 --decode-requests 1,4,16,64 [--json OUT]
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
                               positive_int, positive_ints, time_graph, write_json)

HEAD_DIM = 128


def load_fa3():
    """FA3's flash_attn_with_kvcache, or a one-line error and exit 2 where it cannot run."""
    if not torch.cuda.is_available():
        print("error: no CUDA device visible to PyTorch", file=sys.stderr)
        sys.exit(2)
    if torch.cuda.get_device_capability()[0] != 9:
        print(f"error: FA3 runs on Hopper (compute capability 9.x); this GPU is "
              f"{torch.cuda.get_device_name()}", file=sys.stderr)
        sys.exit(2)
    try:
        from flash_attn_interface import flash_attn_with_kvcache
    except ImportError as e:
        print(f"error: FA3 is not importable ({e}); put FlashAttention's built hopper/ folder on PYTHONPATH",
              file=sys.stderr)
        sys.exit(2)
    return flash_attn_with_kvcache


class Fa3Layers:
    """`layers` FA3 calls of one shape (`requests` x `q_len` query tokens, causal, over `kv_len`
    cached tokens plus themselves), each over its own paged KV cache, with SGLang's arguments."""

    def __init__(self, fa3, requests, q_len, kv_len, qo_heads, kv_heads, layers, table_width, dtype):
        dev = torch.device("cuda")
        total = kv_len + q_len  # SGLang stores the new tokens' K and V before the call
        g = torch.Generator(device=dev).manual_seed(1234)
        self.fa3, self.q_len = fa3, q_len
        self.q = torch.randn(requests * q_len, qo_heads, HEAD_DIM, device=dev, dtype=dtype, generator=g)
        self.caches = [(torch.randn(requests * total, 1, kv_heads, HEAD_DIM, device=dev, dtype=dtype, generator=g),
                        torch.randn(requests * total, 1, kv_heads, HEAD_DIM, device=dev, dtype=dtype, generator=g))
                       for _ in range(layers)]
        # One page a token; the table is as wide as the context SGLang's CUDA graphs are built for.
        self.page_table = torch.zeros(requests, max(table_width, total), dtype=torch.int32, device=dev)
        self.page_table[:, :total] = (torch.arange(requests, dtype=torch.int32, device=dev)[:, None] * total +
                                      torch.arange(total, dtype=torch.int32, device=dev)[None, :])
        self.cache_seqlens = torch.full((requests,), total, dtype=torch.int32, device=dev)
        self.cu_seqlens_q = torch.arange(requests + 1, dtype=torch.int32, device=dev) * q_len
        self.cu_seqlens_k = torch.arange(requests + 1, dtype=torch.int32, device=dev) * total
        self.scale = HEAD_DIM ** -0.5
        torch.cuda.synchronize()

    def forward(self):
        for k, v in self.caches:
            self.fa3(q=self.q, k_cache=k, v_cache=v, page_table=self.page_table, cache_seqlens=self.cache_seqlens,
                     cu_seqlens_q=self.cu_seqlens_q, cu_seqlens_k_new=self.cu_seqlens_k, max_seqlen_q=self.q_len,
                     softmax_scale=self.scale, causal=True)


def check(fa3, dtype):
    """FA3's output against attention computed in fp32 by PyTorch, through a shuffled page table, at
    three small shapes; the worst absolute difference (bf16 outputs: about 1e-3 when right)."""
    worst = 0.0
    for reqs, q_len, kv_len, qo, kvh in [(1, 1, 700, 32, 8), (3, 4, 1500, 16, 2), (2, 8, 5000, 8, 1)]:
        layer = Fa3Layers(fa3, reqs, q_len, kv_len, qo, kvh, 1, 8192, dtype)
        total = kv_len + q_len
        layer.page_table[:, :total] = torch.randperm(reqs * total, device="cuda").int().view(reqs, total)
        k, v = layer.caches[0]
        out = fa3(q=layer.q, k_cache=k, v_cache=v, page_table=layer.page_table, cache_seqlens=layer.cache_seqlens,
                  cu_seqlens_q=layer.cu_seqlens_q, cu_seqlens_k_new=layer.cu_seqlens_k, max_seqlen_q=q_len,
                  softmax_scale=layer.scale, causal=True)
        # query token i of a request sees its context and the new tokens up to itself
        hidden = torch.arange(total, device="cuda")[None, :] > (kv_len + torch.arange(q_len, device="cuda"))[:, None]
        for r in range(reqs):
            pages = layer.page_table[r, :total].long()
            kk = k[pages, 0].float().repeat_interleave(qo // kvh, dim=1)
            vv = v[pages, 0].float().repeat_interleave(qo // kvh, dim=1)
            s = torch.einsum("qhd,khd->hqk", layer.q[r * q_len:(r + 1) * q_len].float(), kk) * layer.scale
            ref = torch.einsum("hqk,khd->qhd", s.masked_fill(hidden[None], float("-inf")).softmax(-1), vv)
            worst = max(worst, (out[r * q_len:(r + 1) * q_len].float() - ref).abs().max().item())
    return worst


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--heads", type=head_pairs, default="32:8,16:2,8:1", help="qo:kv heads a rank holds")
    ap.add_argument("--batches", type=positive_ints, default="1,4,16", help="requests of the multi-token calls")
    ap.add_argument("--query-tokens", type=positive_ints, default="2,4,8,16",
                    help="query tokens a request (verify, draft extend)")
    ap.add_argument("--kv-lens", type=positive_ints, default="512,2048,8192", help="cached tokens a request")
    ap.add_argument("--decode-requests", type=positive_ints, default="1,4,16,64",
                    help="requests of the one-token calls (draft steps, plain decode)")
    ap.add_argument("--table-width", type=positive_int, default=131072,
                    help="page-table columns (SGLang: the model's context length)")
    add_timing_args(ap, layers=16)
    a = ap.parse_args()
    fa3 = load_fa3()
    dtype = torch.bfloat16
    try:
        worst = check(fa3, dtype)
    except (RuntimeError, torch.cuda.OutOfMemoryError) as e:
        print(f"error: FA3 failed its check ({str(e).splitlines()[0]}); is it built for head dim 128, bf16?",
              file=sys.stderr)
        return 1
    if worst > 0.01:
        print(f"error: FA3's output differs from PyTorch's attention by {worst:.4f}; not timed", file=sys.stderr)
        return 1
    try:
        from fa3_build_info import BUILD  # written by tools/attnbench/build_fa3.sh
    except ImportError:
        BUILD = "unknown (not built by tools/attnbench/build_fa3.sh)"
    meta = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "kernel": "FlashAttention-3 (hopper/)",
            "build": BUILD, "cuda": str(torch.version.cuda),
            "head_dim": HEAD_DIM, "layers": a.layers, "table_width": a.table_width, "check_max_abs_diff": worst,
            "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime())}
    print("# " + json.dumps(meta))
    print(KERNEL_ROW_HEADER)
    rows = []
    for qo, kvh in a.heads:
        shapes = ([(r, 1, L) for L in a.kv_lens for r in a.decode_requests] +
                  [(b, q, L) for L in a.kv_lens for b in a.batches for q in a.query_tokens if q > 1])
        for reqs, q, kv_len in shapes:
            try:
                layers = Fa3Layers(fa3, reqs, q, kv_len, qo, kvh, a.layers, a.table_width, dtype)
                us = time_graph(layers.forward, a.layers, a.reps, a.rounds)
            except (RuntimeError, torch.cuda.OutOfMemoryError) as e:
                print(f"error: {qo}:{kvh} heads, {reqs} requests of {q} tokens over {kv_len}: "
                      f"{str(e).splitlines()[0]} (fewer --layers or smaller shapes)", file=sys.stderr)
                return 1
            del layers
            torch.cuda.empty_cache()
            # the cache holds the new tokens' K and V too (SGLang stores them before the call)
            rows.append(kernel_row("fa3", qo, kvh, reqs, q, kv_len, kv_len + q, us, HEAD_DIM))
    if a.json:
        write_json(a.json, {"meta": meta, "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
