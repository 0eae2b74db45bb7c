#!/usr/bin/env python3
"""Times a Triton grouped expert GEMM of the fused-MoE kind (tokens sorted by expert, one
weight tile per expert and block of BLOCK_M sorted rows) at Qwen3-30B-A3B's per-GPU shapes,
under several launch configs: the generic default that SGLang uses when it finds no tuned
file, and tuned tables read from JSON files given on the command line (M -> config, nearest M
wins, as SGLang looks them up).

Usage: moe_config_bench.py --tp 2 --tp 4 --tuned NAME:TP:PATH ... > log
Needs a GPU, torch and triton. Each layer has its own weights (16 layers, so every launch reads
cold experts, as in a real decode step) and its own uniform random routing; a CUDA graph runs
the launch for every layer, and the time per launch is the graph's replay time / layers.
"""
import argparse
import json
import math
import platform
import sys
import time

import torch
import triton
import triton.language as tl

HIDDEN = 2048  # Qwen3-30B-A3B hidden_size
MOE_INTER = 768  # moe_intermediate_size
EXPERTS = 128
TOPK = 8


@triton.jit
def grouped_expert_gemm(
    a_ptr, b_ptr, c_ptr, weight_ptr, rows_ptr, block_expert_ptr, padded_len_ptr,
    N, K, valid_rows, rows_len,
    stride_am, stride_be, stride_bn, stride_bk, stride_cm,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr, A_ROW_DIV: tl.constexpr, SCALE_ROWS: tl.constexpr,
):
    # One program computes a BLOCK_M x BLOCK_N tile of C for BLOCK_M sorted (token, slot) rows
    # that all go to one expert. The grid covers the worst-case padded length, as the
    # production kernel does under CUDA graphs; programs past the real padded length return.
    pid = tl.program_id(0)
    blocks_m = tl.cdiv(rows_len, BLOCK_M)
    blocks_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * blocks_n
    group = pid // per_group
    first_m = group * GROUP_M
    size_m = min(blocks_m - first_m, GROUP_M)
    pid_m = first_m + ((pid % per_group) % size_m)
    pid_n = (pid % per_group) // size_m
    if pid_m * BLOCK_M >= tl.load(padded_len_ptr):
        return
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rows = tl.load(rows_ptr + offs_m)
    row_ok = rows < valid_rows
    expert = tl.load(block_expert_ptr + pid_m).to(tl.int64)
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_rows = rows // A_ROW_DIV
    a_ptrs = a_ptr + a_rows[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + expert * stride_be + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=row_ok[:, None] & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < k_left, other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    if SCALE_ROWS:
        w = tl.load(weight_ptr + rows, mask=row_ok, other=0.0)
        acc = acc * w[:, None]
    out_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + rows[:, None] * stride_cm + out_n[None, :]
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=row_ok[:, None] & (out_n[None, :] < N))


def sort_rows(topk_ids, block_m, experts):
    """Sorted (token, slot) row ids padded per expert to a multiple of block_m, one expert per
    block, and the padded length; sized for the worst case like the production align kernel."""
    flat = topk_ids.flatten()
    valid = flat.numel()
    worst = valid + experts * (block_m - 1)
    worst = math.ceil(worst / block_m) * block_m
    rows = torch.full((worst,), valid, dtype=torch.int32)
    block_expert = torch.zeros((worst // block_m,), dtype=torch.int32)
    order = torch.argsort(flat.cpu(), stable=True)
    counts = torch.bincount(flat.cpu(), minlength=experts)
    pos, src = 0, 0
    for e in range(experts):
        c = int(counts[e])
        if c == 0:
            continue
        rows[pos:pos + c] = order[src:src + c].to(torch.int32)
        padded = math.ceil(c / block_m) * block_m
        block_expert[pos // block_m:(pos + padded) // block_m] = e
        pos += padded
        src += c
    dev = topk_ids.device
    return rows.to(dev), block_expert.to(dev), torch.tensor([pos], dtype=torch.int32, device=dev)


def launch(a, b, c, weights, sorted_rows, cfg, a_row_div, scale_rows):
    rows, block_expert, padded = sorted_rows
    e, n, k = b.shape
    bm = cfg["BLOCK_SIZE_M"]
    grid = (triton.cdiv(rows.numel(), bm) * triton.cdiv(n, cfg["BLOCK_SIZE_N"]),)
    extra = {}
    if "num_warps" in cfg:
        extra["num_warps"] = cfg["num_warps"]
    if "num_stages" in cfg:
        extra["num_stages"] = cfg["num_stages"]
    grouped_expert_gemm[grid](
        a, b, c, weights, rows, block_expert, padded,
        n, k, c.shape[0], rows.numel(),
        a.stride(0), b.stride(0), b.stride(1), b.stride(2), c.stride(0),
        BLOCK_M=bm, BLOCK_N=cfg["BLOCK_SIZE_N"], BLOCK_K=cfg["BLOCK_SIZE_K"],
        GROUP_M=cfg["GROUP_SIZE_M"], A_ROW_DIV=a_row_div, SCALE_ROWS=scale_rows, **extra)


def default_config(m):
    # SGLang v0.5.5 get_default_config for bf16 (no dtype), not marlin: M <= E -> this small-M
    # tile with Triton's default warps and stages; larger M -> 64/64/32/8.
    if m <= EXPERTS:
        return {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 1}
    return {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}


def nearest(table, m):
    return table[min(table, key=lambda x: abs(x - m))]


def check_correct(dev):
    # Small check against a dense reference: M=5 tokens, E=8, N=96, K=256.
    torch.manual_seed(1)
    m, e, n, k, topk = 5, 8, 96, 256, 3
    a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
    b = torch.randn(e, n, k, device=dev, dtype=torch.bfloat16) * 0.05
    ids = torch.stack([torch.randperm(e, device=dev)[:topk] for _ in range(m)])
    c = torch.zeros(m * topk, n, device=dev, dtype=torch.bfloat16)
    cfg = {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 1}
    launch(a, b, c, c, sort_rows(ids, 16, e), cfg, topk, False)
    ref = torch.stack([a[i // topk].float() @ b[ids.flatten()[i]].float().T for i in range(m * topk)])
    err = (c.float() - ref).abs().max().item() / ref.abs().max().item()
    return err


def time_graph(fn, reps=20):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn()  # compile and warm outside the graph
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    for _ in range(3):
        g.replay()
    torch.cuda.synchronize()
    t0, t1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    best = float("inf")
    for _ in range(5):
        t0.record()
        for _ in range(reps):
            g.replay()
        t1.record()
        torch.cuda.synchronize()
        best = min(best, t0.elapsed_time(t1) * 1000.0 / reps)  # us per replay
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tp", type=int, action="append", required=True)
    ap.add_argument("--m", type=int, action="append")
    ap.add_argument("--layers", type=int, default=16)
    ap.add_argument("--tuned", action="append", default=[],
                    help="NAME:TP:PATH, a JSON table M -> config used at that TP")
    args = ap.parse_args()
    ms = args.m or [1, 2, 4, 8, 16, 32, 64, 128]
    dev = torch.device("cuda")
    print(f"# gpu: {torch.cuda.get_device_name()}  torch {torch.__version__}  triton {triton.__version__}"
          f"  python {platform.python_version()}  date {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"# shapes: Qwen3-30B-A3B hidden {HIDDEN}, moe_intermediate {MOE_INTER}, E {EXPERTS}, topk {TOPK}, bf16;"
          f" {args.layers} layers of distinct weights, uniform random routing per layer")
    print(f"# correctness vs dense reference (max rel err): {check_correct(dev):.2e}")
    tuned = {}
    for spec in args.tuned:
        name, tp, path = spec.split(":", 2)
        with open(path) as f:
            tuned.setdefault(int(tp), []).append((name, {int(k): v for k, v in json.load(f).items()}))
    print("tp\tM\tconfig\tgemm\tBM/BN/BK/GM/warps/stages\tus_per_launch\tweight_MB\tGB_s")
    for tp in args.tp:
        n_inter = MOE_INTER // tp  # SGLang's config-file N
        torch.manual_seed(tp)
        w1 = [torch.randn(EXPERTS, 2 * n_inter, HIDDEN, device=dev, dtype=torch.bfloat16) * 0.02
              for _ in range(args.layers)]
        w2 = [torch.randn(EXPERTS, HIDDEN, n_inter, device=dev, dtype=torch.bfloat16) * 0.02
              for _ in range(args.layers)]
        for m in ms:
            x = torch.randn(m, HIDDEN, device=dev, dtype=torch.bfloat16)
            ids = [torch.rand(m, EXPERTS, device=dev).topk(TOPK, dim=1).indices for _ in range(args.layers)]
            rw = torch.rand(m * TOPK, device=dev, dtype=torch.float32)
            mid = torch.zeros(m * TOPK, 2 * n_inter, device=dev, dtype=torch.bfloat16)
            act = torch.randn(m * TOPK, n_inter, device=dev, dtype=torch.bfloat16)
            out = torch.zeros(m * TOPK, HIDDEN, device=dev, dtype=torch.bfloat16)
            experts_hit = sum(int(torch.unique(i).numel()) for i in ids) / args.layers
            cfgs = [("default", default_config(m))] + [(n, nearest(t, m)) for n, t in tuned.get(tp, [])]
            for name, cfg in cfgs:
                srt = [sort_rows(i, cfg["BLOCK_SIZE_M"], EXPERTS) for i in ids]
                desc = "/".join(str(cfg.get(k, "-")) for k in
                                ("BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M", "num_warps", "num_stages"))
                up = time_graph(lambda: [launch(x, w1[l], mid, rw, srt[l], cfg, TOPK, False)
                                         for l in range(args.layers)]) / args.layers
                down = time_graph(lambda: [launch(act, w2[l], out, rw, srt[l], cfg, 1, True)
                                           for l in range(args.layers)]) / args.layers
                mb_up = experts_hit * 2 * n_inter * HIDDEN * 2 / 1e6
                mb_down = experts_hit * HIDDEN * n_inter * 2 / 1e6
                # MB per us x 1000 = GB/s
                print(f"{tp}\t{m}\t{name}\tup\t{desc}\t{up:.2f}\t{mb_up:.1f}\t{mb_up / up * 1000:.0f}")
                print(f"{tp}\t{m}\t{name}\tdown\t{desc}\t{down:.2f}\t{mb_down:.1f}\t{mb_down / down * 1000:.0f}")
                both = up + down
                print(f"{tp}\t{m}\t{name}\tboth\t{desc}\t{both:.2f}\t{mb_up + mb_down:.1f}\t"
                      f"{(mb_up + mb_down) / both * 1000:.0f}")
                sys.stdout.flush()
        del w1, w2
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
