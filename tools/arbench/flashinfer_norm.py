#!/usr/bin/env python3
"""GPU time of FlashInfer's fused_add_rmsnorm, the separate add+RMSNorm kernel SGLang runs after
every all-reduce of a decoder layer (sgl-kernel's fused_add_rmsnorm is FlashInfer's kernel).

specsim-arbench's `+norm` column runs this project's own separate kernel after the all-reduce;
this script times the kernel SGLang runs at the same shapes, so that the fused kernel's gain over
"the all-reduce, then the separate norm" can be read against what the stack would run. `rows` is
tokens a rank, or tokens x ranks for the 8 virtual ranks arbench runs on one GPU (one launch
normalizes all of them there). Each case runs `--layers` in-place calls (default 200) on one
[rows, hidden] bf16 buffer (L2-resident, as arbench's are) captured in one CUDA graph, replayed
`--reps` times between CUDA events; the time per call is the median over `--rounds` timings.
Needs PyTorch with CUDA and an importable FlashInfer of the 0.2-0.3 series (its JIT compiles the
norm module on first use).

Usage: python3 tools/arbench/flashinfer_norm.py --hidden 4096,7168,8192 --rows 1,3,8,24,64 [--json OUT]
"""
import argparse
import json
import pathlib
import sys
import time

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from flashinfer_common import add_timing_args, load_flashinfer, positive_ints, time_graph, write_json  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hidden", type=positive_ints, default="4096,7168,8192")
    ap.add_argument("--rows", type=positive_ints, default="1,3,8,24,64")
    add_timing_args(ap, layers=200)
    a = ap.parse_args()
    flashinfer = load_flashinfer()
    meta = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
            "flashinfer": getattr(flashinfer, "__version__", "unknown"), "calls": a.layers,
            "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime())}
    print("# " + json.dumps(meta))
    print(f"{'hidden':>6} {'rows':>5} {'bytes':>9} {'us':>7}")
    rows = []
    for h in a.hidden:
        for n in a.rows:
            x = torch.randn(n, h, device="cuda", dtype=torch.bfloat16)
            res = torch.randn(n, h, device="cuda", dtype=torch.bfloat16)
            w = torch.rand(h, device="cuda", dtype=torch.bfloat16)
            def calls():
                for _ in range(a.layers):
                    flashinfer.norm.fused_add_rmsnorm(x, res, w, 1e-6)
            us = time_graph(calls, a.layers, a.reps, a.rounds)
            rows.append({"hidden": h, "rows": n, "bytes": n * h * 2, "us": us})
            print(f"{h:>6} {n:>5} {n * h * 2:>9} {us:>7.2f}", flush=True)
    if a.json:
        write_json(a.json, {"meta": meta, "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
