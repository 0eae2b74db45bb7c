#!/usr/bin/env python3
"""GPU time of FlashInfer's fused_add_rmsnorm, the separate add+RMSNorm kernel SGLang runs after
every all-reduce of a decoder layer (sgl-kernel's fused_add_rmsnorm is FlashInfer's kernel).

specsim-arbench's `+norm` column runs this project's own separate kernel after the all-reduce;
this script times the kernel SGLang runs at the same shapes, so that the fused kernel's gain over
"the all-reduce, then the separate norm" can be read against what the stack would run. `rows` is
tokens a rank, or tokens x ranks for the 8 virtual ranks arbench runs on one GPU (one launch
normalizes all of them there). Each case runs `--calls` in-place calls on one [rows, hidden] bf16
buffer (L2-resident, as arbench's are) captured in one CUDA graph; the time per call is the
median over `--rounds` replays. Needs PyTorch with CUDA and an importable FlashInfer of the
0.2-0.3 series (its JIT compiles the norm module on first use).

Usage: python3 tools/arbench/flashinfer_norm.py --hidden 4096,7168,8192 --rows 1,3,8,24,64 [--json OUT]
"""
import argparse
import json
import pathlib
import statistics
import sys
import time

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from flashinfer_common import json_path, load_flashinfer, positive_int, positive_ints, write_json  # noqa: E402


def time_calls(fn, calls, rounds):
    """us per call: `calls` calls of fn captured in one CUDA graph, median over `rounds` replays."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(calls):
            fn()
    graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(rounds):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000.0 / calls)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hidden", type=positive_ints, default="4096,7168,8192")
    ap.add_argument("--rows", type=positive_ints, default="1,3,8,24,64")
    ap.add_argument("--calls", type=positive_int, default=200, help="calls captured in the graph")
    ap.add_argument("--rounds", type=positive_int, default=11)
    ap.add_argument("--json", type=json_path, help="write the rows here as JSON")
    a = ap.parse_args()
    flashinfer = load_flashinfer()
    meta = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
            "flashinfer": getattr(flashinfer, "__version__", "unknown"), "calls": a.calls,
            "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime())}
    print("# " + json.dumps(meta))
    print(f"{'hidden':>6} {'rows':>5} {'bytes':>9} {'us':>7}")
    rows = []
    for h in a.hidden:
        for n in a.rows:
            x = torch.randn(n, h, device="cuda", dtype=torch.bfloat16)
            res = torch.randn(n, h, device="cuda", dtype=torch.bfloat16)
            w = torch.rand(h, device="cuda", dtype=torch.bfloat16)
            us = time_calls(lambda: flashinfer.norm.fused_add_rmsnorm(x, res, w, 1e-6), a.calls, a.rounds)
            rows.append({"hidden": h, "rows": n, "bytes": n * h * 2, "us": us})
            print(f"{h:>6} {n:>5} {n * h * 2:>9} {us:>7.2f}", flush=True)
    if a.json:
        write_json(a.json, {"meta": meta, "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
