#!/usr/bin/env python3
"""Times the two fp8 GEMM kinds the engine prices at DeepSeek-V3's per-GPU shapes (TP 8), M = 1..64:

- block: a block-scaled fp8 GEMM of the kind SGLang runs on Hopper for DeepSeek's checkpoints
  (weights with one fp32 scale per 128x128 block, activations with one per 1x128 group, fp32
  accumulation, bf16 out): a Triton kernel written here, its launch config picked as SGLang's
  tuning does (the fastest of a small set per shape and M);
- tensor: cuBLASLt's per-tensor-scaled fp8 GEMM (torch._scaled_mm), what the GPU replay runs.

Each kernel's output is checked against an fp32 reference first. Each time is the replay of a
CUDA graph of 200 calls whose weights cycle over 16 copies (every call reads cold weights, as
in a decode step), divided by 200. Then, per kernel, a least-squares fit of
time = fixed_us + weight_bytes / bandwidth over every shape and M <= 16 (the decode sizes, where
the weights dominate), printed with the rows as JSON.

Usage: block_fp8_bench.py [--out FILE.json] > log      Needs a Hopper GPU, torch and triton.
"""
import argparse
import json
import platform
import sys

import torch
import triton
import triton.language as tl

# DeepSeek-V3 at TP 8, per rank (N, K): fused_qkv_a_proj (replicated), q_b_proj, o_proj, a dense
# layer's gate_up and down, the lm_head's share is bf16 and left out.
SHAPES = {
    "fused_qkv_a_proj": (2112, 7168),
    "q_b_proj": (3072, 1536),
    "o_proj": (7168, 2048),
    "dense_gate_up": (4608, 7168),
    "dense_down": (7168, 2304),
}
MS = [1, 2, 4, 8, 16, 32, 64]
GROUP = 128  # DeepSeek's weight_block_size [128, 128]
CALLS, COPIES = 200, 16


@triton.jit
def block_fp8_gemm(a_ptr, b_ptr, c_ptr, as_ptr, bs_ptr, M, N, K,
                   stride_am, stride_bn, stride_cm, stride_asm, stride_bsn,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_N: tl.constexpr):
    # C[m, n] = sum over k blocks of (A[m, kb] . B[n, kb]) * a_scale[m, kb] * b_scale[n // 128, kb]
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    m_ok = offs_m < M
    n_ok = offs_n < N
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_n[None, :] * stride_bn + offs_k[:, None]
    as_ptrs = as_ptr + offs_m * stride_asm
    bs_ptrs = bs_ptr + (offs_n // GROUP_N) * stride_bsn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kb in range(0, tl.cdiv(K, BLOCK_K)):
        k_ok = offs_k < K - kb * BLOCK_K
        a = tl.load(a_ptrs, mask=m_ok[:, None] & k_ok[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=k_ok[:, None] & n_ok[None, :], other=0.0)
        a_s = tl.load(as_ptrs + kb, mask=m_ok, other=0.0)
        b_s = tl.load(bs_ptrs + kb, mask=n_ok, other=0.0)
        acc += tl.dot(a, b) * a_s[:, None] * b_s[None, :]
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :]
    tl.store(c_ptrs, acc.to(tl.bfloat16), mask=m_ok[:, None] & n_ok[None, :])


CONFIGS = [  # (BLOCK_N, num_warps, num_stages): SGLang's tuned H200 tables for these shapes use these
    (64, 4, 3), (64, 4, 4), (128, 4, 3), (128, 8, 3), (32, 4, 4)]


def block_call(a, a_s, b, b_s, c, cfg):
    M, K = a.shape
    N = b.shape[0]
    bn, warps, stages = cfg
    bm = max(16, triton.next_power_of_2(M))
    grid = (triton.cdiv(M, bm), triton.cdiv(N, bn))
    block_fp8_gemm[grid](a, b, c, a_s, b_s, M, N, K, a.stride(0), b.stride(0), c.stride(0), a_s.stride(0),
                         b_s.stride(0), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=GROUP, GROUP_N=GROUP, num_warps=warps,
                         num_stages=stages)


def quantize_rows(x):
    """bf16 [M, K] -> fp8 [M, K] with one scale per 1x128 group."""
    M, K = x.shape
    g = x.float().view(M, K // GROUP, GROUP)
    s = g.abs().amax(-1).clamp(min=1e-4) / 448.0
    return (g / s[..., None]).view(M, K).to(torch.float8_e4m3fn), s.contiguous()


def quantize_blocks(w):
    """bf16 [N, K] -> fp8 [N, K] with one scale per 128x128 block."""
    N, K = w.shape
    nb = (N + GROUP - 1) // GROUP
    pad = nb * GROUP - N
    wp = torch.nn.functional.pad(w.float(), (0, 0, 0, pad)).view(nb, GROUP, K // GROUP, GROUP)
    s = wp.abs().amax(dim=(1, 3)).clamp(min=1e-4) / 448.0
    q = (wp / s[:, None, :, None]).view(nb * GROUP, K)[:N].to(torch.float8_e4m3fn)
    return q.contiguous(), s.contiguous()


def graph_time_us(fn_for_copy):
    """Replay time of a CUDA graph of CALLS calls cycling over COPIES weight copies, per call."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for i in range(3):
            fn_for_copy(i % COPIES)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for i in range(CALLS):
            fn_for_copy(i % COPIES)
    g.replay()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(5):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        g.replay()
        end.record()
        end.synchronize()
        best = min(best, start.elapsed_time(end) * 1000.0 / CALLS)
    return best


def fit(rows):
    """Least squares of us = fixed + bytes / bw over rows (bytes in B, bw in GB/s)."""
    n = len(rows)
    sx = sum(r["weight_bytes"] for r in rows)
    sy = sum(r["us"] for r in rows)
    sxx = sum(r["weight_bytes"] ** 2 for r in rows)
    sxy = sum(r["weight_bytes"] * r["us"] for r in rows)
    slope = (n * sxy - sx * sy) / (n * sxx - sx * sx)  # us per byte
    fixed = (sy - slope * sx) / n
    worst = max(abs(fixed + slope * r["weight_bytes"] - r["us"]) / r["us"] for r in rows)
    return {"fixed_us": fixed, "bandwidth_gbps": 1e-3 / slope, "points": n, "worst_rel_residual": worst}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", help="also write the rows and fits as JSON to this file")
    args = p.parse_args()
    if not torch.cuda.is_available():
        sys.exit("block_fp8_bench: no CUDA GPU")
    torch.manual_seed(0)
    dev = torch.cuda.get_device_name()
    print(f"# {dev}, torch {torch.__version__}, triton {triton.__version__}, {platform.node()}")
    rows = []
    one = torch.ones((), device="cuda")
    for name, (N, K) in SHAPES.items():
        ws = [quantize_blocks(torch.randn(N, K, device="cuda", dtype=torch.bfloat16) * 0.05) for _ in range(COPIES)]
        wt = [w.to(torch.float8_e4m3fn) for w, _ in ws]  # per-tensor: scale 1, the same bytes
        for M in MS:
            x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
            a, a_s = quantize_rows(x)
            c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
            # correctness of the block kernel against the dequantized fp32 product
            ref = (a.float().view(M, K // GROUP, GROUP) * a_s[..., None]).view(M, K) @ \
                (ws[0][0].float().view(N, K // GROUP, GROUP) *
                 ws[0][1].repeat_interleave(GROUP, 0)[:N][:, :, None]).view(N, K).t()
            best = None
            for cfg in CONFIGS:
                block_call(a, a_s, ws[0][0], ws[0][1], c, cfg)
                torch.cuda.synchronize()
                err = ((c.float() - ref).abs().max() / ref.abs().max().clamp(min=1e-6)).item()
                if err > 2e-2:
                    sys.exit(f"block_fp8_bench: {name} M={M} config {cfg}: max error {err:.3g} of the largest value")
                us = graph_time_us(lambda i, cfg=cfg: block_call(a, a_s, ws[i][0], ws[i][1], c, cfg))
                if best is None or us < best[0]:
                    best = (us, cfg)
            rows.append({"kernel": "block", "shape": name, "N": N, "K": K, "M": M, "us": best[0],
                         "config": list(best[1]), "weight_bytes": N * K})
            mp = max(M, 16)  # cuBLASLt's fp8 wants rows in multiples of 16: the replay pads the same way
            xa = torch.zeros(mp, K, device="cuda", dtype=torch.float8_e4m3fn)
            us = graph_time_us(lambda i: torch._scaled_mm(xa, wt[i].t(), scale_a=one, scale_b=one,
                                                          out_dtype=torch.bfloat16))
            rows.append({"kernel": "tensor", "shape": name, "N": N, "K": K, "M": M, "us": us, "weight_bytes": N * K})
            print(f"{name:<17} N={N:<5} K={K:<5} M={M:<3} block {best[0]:7.2f} us {str(best[1]):<14} "
                  f"tensor {us:7.2f} us  weights {N * K / 1e6:5.1f} MB")
    fits = {k: fit([r for r in rows if r["kernel"] == k and r["M"] <= 16]) for k in ("block", "tensor")}
    for k, f in fits.items():
        print(f"fit {k}: fixed {f['fixed_us']:.2f} us + weights at {f['bandwidth_gbps']:.0f} GB/s "
              f"(M <= 16, {f['points']} points, worst residual {100 * f['worst_rel_residual']:.1f}%)")
    out = {"device": dev, "torch": torch.__version__, "triton": triton.__version__, "calls": CALLS,
           "weight_copies": COPIES, "rows": rows, "fits": fits}
    if args.out:
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
