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

`--kind mla` makes the call SGLang's FA3 backend makes for an MLA model (DeepSeek-V3/R1, Kimi-K2)
instead: the absorbed form, one cache of 576 columns a token (the 512-wide latent and the 64-wide
rope key), the query's rope part as `q` against the rope columns and its latent part as `qv`
against the latent ones, which are V too; `--mla-heads` query heads a rank (rows of kind
`fa3_mla`).

First FA3's output is checked against attention computed by PyTorch at three small shapes (a
difference over 0.01 stops the run). Each case runs `--layers` calls, each over its own KV cache (so that the caches together exceed
the L2 and are read from memory, as a forward's layers are), captured in one CUDA graph, replayed
`--reps` times between CUDA events; the time per call is the median over `--rounds` timings.
Needs PyTorch with CUDA on a Hopper GPU and FA3's `flash_attn_interface` importable (FlashAttention's
`hopper/` folder, built for head dim 128 and bf16 at least).

Usage: python3 tools/attnbench/fa3_kernels.py --heads 32:8,16:2,8:1 --batches 1,4,16 \
         --query-tokens 2,4,8,16 --kv-lens 512,2048,8192 --decode-requests 1,4,16,64 [--json OUT]
       python3 tools/attnbench/fa3_kernels.py --kind mla --mla-heads 8,16,32,128 [the same shape flags]
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
MLA_ROPE_DIM, MLA_LATENT_DIM = 64, 512  # DeepSeek-V3's qk_rope_head_dim and kv_lora_rank (Kimi-K2's too)
DEFAULT_HEADS, DEFAULT_MLA_HEADS = "32:8,16:2,8:1", "8,16,32,128"


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
    cached tokens plus themselves), each over its own paged KV cache, with SGLang's arguments.
    `mla`: MLA's absorbed call (one KV head; `q` the rope part, `qv` the latent part; the cache's
    latent columns are V)."""

    def __init__(self, fa3, requests, q_len, kv_len, qo_heads, kv_heads, layers, table_width, dtype, mla=False):
        dev = torch.device("cuda")
        total = kv_len + q_len  # SGLang stores the new tokens' K and V before the call
        g = torch.Generator(device=dev).manual_seed(1234)
        self.fa3, self.q_len, self.mla = fa3, q_len, mla
        qk_dim = MLA_ROPE_DIM if mla else HEAD_DIM
        self.q = torch.randn(requests * q_len, qo_heads, qk_dim, device=dev, dtype=dtype, generator=g)
        if mla:
            self.qv = torch.randn(requests * q_len, qo_heads, MLA_LATENT_DIM, device=dev, dtype=dtype, generator=g)
            # SGLang's MLA cache: [tokens, 1, latent + rope]; the rope columns are K, the latent ones V
            caches = [torch.randn(requests * total, 1, MLA_LATENT_DIM + MLA_ROPE_DIM, device=dev, dtype=dtype,
                                  generator=g) for _ in range(layers)]
            self.caches = [(c[:, :, MLA_LATENT_DIM:].view(-1, 1, 1, MLA_ROPE_DIM),
                            c[:, :, :MLA_LATENT_DIM].view(-1, 1, 1, MLA_LATENT_DIM)) for c in caches]
            self.scale = (MLA_LATENT_DIM + MLA_ROPE_DIM) ** -0.5
        else:
            self.qv = None
            self.caches = [(torch.randn(requests * total, 1, kv_heads, HEAD_DIM, device=dev, dtype=dtype, generator=g),
                            torch.randn(requests * total, 1, kv_heads, HEAD_DIM, device=dev, dtype=dtype, generator=g))
                           for _ in range(layers)]
            self.scale = HEAD_DIM ** -0.5
        # One page a token; the table is as wide as the context SGLang's CUDA graphs are built for.
        self.page_table = torch.zeros(requests, max(table_width, total), dtype=torch.int32, device=dev)
        self.page_table[:, :total] = (torch.arange(requests, dtype=torch.int32, device=dev)[:, None] * total +
                                      torch.arange(total, dtype=torch.int32, device=dev)[None, :])
        self.cache_seqlens = torch.full((requests,), total, dtype=torch.int32, device=dev)
        self.cu_seqlens_q = torch.arange(requests + 1, dtype=torch.int32, device=dev) * q_len
        self.cu_seqlens_k = torch.arange(requests + 1, dtype=torch.int32, device=dev) * total
        torch.cuda.synchronize()

    def call(self, k, v):
        extra = {"qv": self.qv} if self.mla else {}
        return self.fa3(q=self.q, k_cache=k, v_cache=v, page_table=self.page_table, cache_seqlens=self.cache_seqlens,
                        cu_seqlens_q=self.cu_seqlens_q, cu_seqlens_k_new=self.cu_seqlens_k, max_seqlen_q=self.q_len,
                        softmax_scale=self.scale, causal=True, **extra)

    def forward(self):
        for k, v in self.caches:
            self.call(k, v)


def check(fa3, dtype, mla):
    """FA3's output against attention computed in fp32 by PyTorch, through a shuffled page table, at
    three small shapes; the worst absolute difference (bf16 outputs: about 1e-3 when right)."""
    worst = 0.0
    shapes = ([(1, 1, 700, 16, 1), (3, 4, 1500, 8, 1), (2, 8, 5000, 128, 1)] if mla else
              [(1, 1, 700, 32, 8), (3, 4, 1500, 16, 2), (2, 8, 5000, 8, 1)])
    for reqs, q_len, kv_len, qo, kvh in shapes:
        layer = Fa3Layers(fa3, reqs, q_len, kv_len, qo, kvh, 1, 8192, dtype, mla)
        total = kv_len + q_len
        layer.page_table[:, :total] = torch.randperm(reqs * total, device="cuda").int().view(reqs, total)
        k, v = layer.caches[0]
        out = layer.call(k, v)
        # query token i of a request sees its context and the new tokens up to itself
        hidden = torch.arange(total, device="cuda")[None, :] > (kv_len + torch.arange(q_len, device="cuda"))[:, None]
        for r in range(reqs):
            pages = layer.page_table[r, :total].long()
            kk = k[pages, 0].float().repeat_interleave(qo // kvh, dim=1)
            vv = v[pages, 0].float().repeat_interleave(qo // kvh, dim=1)
            rows = slice(r * q_len, (r + 1) * q_len)
            s = torch.einsum("qhd,khd->hqk", layer.q[rows].float(), kk)
            if mla:  # the latent part of the query against the latent columns (V)
                s = s + torch.einsum("qhd,khd->hqk", layer.qv[rows].float(), vv)
            p = (s * layer.scale).masked_fill(hidden[None], float("-inf")).softmax(-1)
            ref = torch.einsum("hqk,khd->qhd", p, vv)
            worst = max(worst, (out[rows].float() - ref).abs().max().item())
    return worst


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kind", choices=["mha", "mla"], default="mha",
                    help="mha: --heads query:KV heads of head dim 128; mla: MLA's absorbed call, --mla-heads")
    ap.add_argument("--heads", type=head_pairs, help=f"qo:kv heads a rank holds (mha; default {DEFAULT_HEADS})")
    ap.add_argument("--mla-heads", type=positive_ints,
                    help=f"query heads a rank holds (mla; default {DEFAULT_MLA_HEADS}: DeepSeek-V3's 128 at TP 16, 8, "
                         "4 and 1, Kimi-K2's 64 at TP 8)")
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
    if a.kind == "mla" and a.heads is not None:
        ap.error("--heads is for --kind mha; give MLA's query heads a rank with --mla-heads")
    if a.kind == "mha" and a.mla_heads is not None:
        ap.error("--mla-heads is for --kind mla")
    a.heads = a.heads or head_pairs(DEFAULT_HEADS)
    a.mla_heads = a.mla_heads or positive_ints(DEFAULT_MLA_HEADS)
    fa3 = load_fa3()
    dtype = torch.bfloat16
    mla = a.kind == "mla"
    # the width kernel_row counts: MLA's one cache of latent + rope columns, the first latent_v_dim V
    head_dim, latent_v_dim = (MLA_LATENT_DIM + MLA_ROPE_DIM, MLA_LATENT_DIM) if mla else (HEAD_DIM, None)
    try:
        worst = check(fa3, dtype, mla)
    except (RuntimeError, torch.cuda.OutOfMemoryError) as e:
        built = "MLA's 64 x 512" if mla else "head dim 128"
        print(f"error: FA3 failed its check ({str(e).splitlines()[0]}); is it built for {built}, bf16?",
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
            "call": "mla" if mla else "mha",
            "head_dim": head_dim, "layers": a.layers, "table_width": a.table_width, "check_max_abs_diff": worst,
            "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime())}
    print("# " + json.dumps(meta))
    print(KERNEL_ROW_HEADER)
    rows = []
    kind = "fa3_mla" if mla else "fa3"
    for qo, kvh in ([(h, 1) for h in a.mla_heads] if mla else a.heads):
        shapes = ([(r, 1, L) for L in a.kv_lens for r in a.decode_requests] +
                  [(b, q, L) for L in a.kv_lens for b in a.batches for q in a.query_tokens if q > 1])
        for reqs, q, kv_len in shapes:
            try:
                layers = Fa3Layers(fa3, reqs, q, kv_len, qo, kvh, a.layers, a.table_width, dtype, mla)
                us = time_graph(layers.forward, a.layers, a.reps, a.rounds)
            except (RuntimeError, torch.cuda.OutOfMemoryError) as e:
                print(f"error: {qo}:{kvh} heads, {reqs} requests of {q} tokens over {kv_len}: "
                      f"{str(e).splitlines()[0]} (fewer --layers or smaller shapes)", file=sys.stderr)
                return 1
            del layers
            torch.cuda.empty_cache()
            # the cache holds the new tokens' K and V too (SGLang stores them before the call)
            rows.append(kernel_row(kind, qo, kvh, reqs, q, kv_len, kv_len + q, us, head_dim, latent_v_dim))
    if a.json:
        write_json(a.json, {"meta": meta, "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
