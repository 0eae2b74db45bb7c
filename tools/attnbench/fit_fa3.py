#!/usr/bin/env python3
"""Fits the price of FA3's paged-KV kernel to the rows of fa3_kernels.py --json.

One call's time (its scheduler, attention and, when FA3 splits the KV, combine kernels) is

  fa3 (head dim 128), fa3_mla (MLA's absorbed call): fixed_us + us_per_mb x KV MB + us_per_gflop x GFLOP

fitted by least squares on the relative error over every row of a kind (one-token and multi-token
calls alike: FA3 runs the same kernel for both). It prints the coefficients with the median and
worst error for each kind the file has: the values of models/kernels/fa3_attention.json, which the
engine reads (sim/cost/fa3_attention_cost.cc).

Usage: python3 tools/attnbench/fit_fa3.py KERNELS.json
"""
import argparse
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from fit_flashinfer import FA3_KINDS as KINDS, fit, fit_line, read_doc  # noqa: E402

TERMS = {
    "fixed_us": lambda r: 1.0,
    "us_per_mb": lambda r: r["kv_bytes"] / 1e6,
    "us_per_gflop": lambda r: r["flops"] / 1e9,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kernels_json")
    a = ap.parse_args()
    try:
        doc = read_doc(a.kernels_json)
        kinds = [k for k in KINDS if any(r["kind"] == k for r in doc["rows"])]
        if not kinds:
            raise ValueError("no row of kind " + " or ".join(KINDS))
        meta = doc.get("meta")
        kernel = meta.get("kernel", "") if isinstance(meta, dict) else ""
        if not str(kernel).startswith("FlashAttention-3"):
            # flashinfer_kernels.py --kinds fa3 writes rows of FlashInfer's SM90 template, another kernel
            raise ValueError(f"its meta.kernel is {kernel!r}, not FlashAttention-3 (fa3_kernels.py writes it)")
    except (OSError, ValueError) as e:
        print(f"error: {a.kernels_json}: not a fa3_kernels.py --json file: {e}", file=sys.stderr)
        return 2
    names = list(TERMS)
    lines = []
    for kind in kinds:
        rows = [r for r in doc["rows"] if r["kind"] == kind]
        try:
            coef, errs = fit(rows, names, lambda n, r: TERMS[n](r))
        except ValueError as e:
            print(f"error: {a.kernels_json}: {kind}: {e}", file=sys.stderr)
            return 2
        negative = [n for n, c in zip(names, coef) if c < 0]
        if negative:
            print(f"error: {a.kernels_json}: {kind}: the fit gives a negative {', '.join(negative)}, which the engine "
                  f"refuses: the rows do not determine FA3's price (time more shapes)", file=sys.stderr)
            return 2
        lines.append(fit_line(kind, names, coef, errs))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
