#!/usr/bin/env python3
"""Fits the price of FlashInfer's attention kernels to the rows of flashinfer_kernels.py --json.

Each kernel's time is a sum of terms, each a coefficient times a feature of the call, fitted by
least squares on the relative error (pure Python, no numpy):

  prefill (causal paged prefill): fixed_us + us_per_mb x KV MB + us_per_gflop x GFLOP + us_per_token x query tokens
  custom (paged prefill, custom mask): fixed_us_tile16/64/128 (by the query tile FlashInfer's CUDA-graph plan
      picks) + us_per_mb x KV MB + us_per_gflop x GFLOP + us_per_padded_gflop x GFLOP over whole query tiles
  decode, decode_tc (batch decode on CUDA / tensor cores): fixed_us + us_per_mb x KV MB

It prints the coefficients with the median and worst error over each kernel's rows: the values of
models/kernels/flashinfer_attention.json. The query tile and the padded work follow FlashInfer's
CUDA-graph plan (FA2DetermineCtaTileQ on (rows - requests + 1) x query heads a KV head); the
engine computes them the same way (sim/cost/flashinfer_attention_cost.cc).

Usage: python3 tools/attnbench/fit_flashinfer.py KERNELS.json
"""
import argparse
import json
import math
import statistics
import sys

TERMS = {
    "prefill": ["fixed_us", "us_per_mb", "us_per_gflop", "us_per_token"],
    "custom": ["fixed_us_tile16", "fixed_us_tile64", "fixed_us_tile128", "us_per_mb", "us_per_gflop",
               "us_per_padded_gflop"],
    "decode": ["fixed_us", "us_per_mb"],
    "decode_tc": ["fixed_us", "us_per_mb"],
}


def kind_of(row):
    """The kernel a row times: prefill, custom, decode or decode_tc."""
    if row["kind"] == "decode":
        return "decode_tc" if row["qo_heads"] // row["kv_heads"] > 4 else "decode"
    return "prefill" if row["kind"] == "causal" else row["kind"]


def query_tile(requests, q_len, group):
    """FlashInfer's FA2 query tile for a CUDA-graph plan of `requests` x `q_len` rows."""
    packed = (requests * q_len - requests + 1) * group
    return 128 if packed > 64 else (64 if packed > 16 else 16)


def feature(name, row):
    group = row["qo_heads"] // row["kv_heads"]
    tile = query_tile(row["requests"], row["query_tokens"], group)
    gflop = row["flops"] / 1e9
    if name.startswith("fixed_us_tile"):
        return 1.0 if tile == int(name[len("fixed_us_tile"):]) else 0.0
    return {
        "fixed_us": 1.0,
        "us_per_mb": row["kv_bytes"] / 1e6,
        "us_per_gflop": gflop,
        "us_per_token": row["requests"] * row["query_tokens"],
        "us_per_padded_gflop": gflop * math.ceil(row["query_tokens"] * group / tile) * tile
        / (row["query_tokens"] * group),
    }[name]


def solve(a, b):
    """Least squares a x = b by the normal equations (small systems)."""
    n = len(a[0])
    m = [[sum(r[i] * r[j] for r in a) for j in range(n)] for i in range(n)]
    v = [sum(r[i] * bi for r, bi in zip(a, b)) for i in range(n)]
    for i in range(n):
        p = max(range(i, n), key=lambda k: abs(m[k][i]))
        m[i], m[p], v[i], v[p] = m[p], m[i], v[p], v[i]
        if m[i][i] == 0:
            raise ValueError("the rows do not determine every term")
        for k in range(n):
            if k != i:
                f = m[k][i] / m[i][i]
                m[k] = [x - f * y for x, y in zip(m[k], m[i])]
                v[k] -= f * v[i]
    return [v[i] / m[i][i] for i in range(n)]


def fit(rows, names, feature):
    """Least squares on the relative error of the terms `names` (feature(name, row) each) over `rows`:
    the coefficients and each row's relative error; ValueError where the rows do not determine them."""
    coef = solve([[feature(n, r) / r["us"] for n in names] for r in rows], [1.0] * len(rows))
    return coef, [sum(c * feature(n, r) for c, n in zip(coef, names)) / r["us"] - 1 for r in rows]


def fit_line(kind, names, coef, errs):
    """A fit as the tools print it (and the tests read it): coefficients, rows, median and worst error."""
    return (f"{kind}: " + ", ".join(f"{n} {c:.4g}" for n, c in zip(names, coef)) +
            f"; {len(errs)} rows, |error| median {100 * statistics.median(abs(e) for e in errs):.1f}%, "
            f"worst {100 * max(errs, key=abs):+.1f}%")


FA3_KINDS = ("fa3", "fa3_mla")  # fa3_kernels.py's rows, fitted by fit_fa3.py
FIELDS = {"qo_heads": 1, "kv_heads": 1, "requests": 1, "query_tokens": 1, "kv_bytes": 0, "flops": 0}


def read_doc(path):
    """A flashinfer_kernels.py (or fa3_kernels.py) --json file, its rows checked; ValueError naming
    what is wrong."""
    with open(path) as f:
        doc = json.load(f)
    if not isinstance(doc, dict) or not isinstance(doc.get("rows"), list) or not doc["rows"]:
        raise ValueError('needs an object with a non-empty "rows" list')
    for i, r in enumerate(doc["rows"]):
        if not isinstance(r, dict) or r.get("kind") not in ("causal", "custom", "decode") + FA3_KINDS:
            raise ValueError(f"row {i}: kind must be causal, custom, decode, fa3 or fa3_mla")
        for k, lo in FIELDS.items():
            v = r.get(k)
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) or v < lo:
                raise ValueError(f"row {i}: {k} must be a finite number >= {lo}")
        if not isinstance(r.get("us"), (int, float)) or not math.isfinite(r["us"]) or not r["us"] > 0:
            raise ValueError(f"row {i}: us must be a finite number above 0")
        if r["qo_heads"] % r["kv_heads"]:
            raise ValueError(f"row {i}: {r['qo_heads']} query heads do not split over {r['kv_heads']} KV heads")
    return doc


def read_rows(path):
    """The rows of a flashinfer_kernels.py --json file; ValueError naming what is wrong."""
    return read_doc(path)["rows"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kernels_json")
    a = ap.parse_args()
    try:
        rows = read_rows(a.kernels_json)
    except (OSError, ValueError) as e:
        print(f"error: {a.kernels_json}: not a flashinfer_kernels.py --json file: {e}", file=sys.stderr)
        return 2
    for kind, names in TERMS.items():
        mine = [r for r in rows if kind_of(r) == kind]
        if not mine:
            continue
        try:
            coef, errs = fit(mine, names, feature)
        except ValueError as e:
            print(f"{kind}: not fitted: {e}")
            continue
        print(fit_line(kind, names, coef, errs))
    others = sorted({r["kind"] for r in rows if r["kind"] in FA3_KINDS})
    for kind in others:
        print(f"{kind}: {sum(r['kind'] == kind for r in rows)} rows, not fitted here (FA3's own rows: tools/attnbench/fit_fa3.py)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
