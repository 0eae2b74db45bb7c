#!/usr/bin/env python3
"""models/kernels/fa3_attention.json against the measurements it was fitted to: the fit tool
(tools/attnbench/fit_fa3.py) over the shipped H200 rows (head dim 128, and MLA's call) gives every
coefficient the model holds; the other runs' rows go through it too and agree; it refuses a file that is not its input (FlashInfer's rows
among them) with one line and exit 2."""
import json
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIT = [sys.executable, str(ROOT / "tools" / "attnbench" / "fit_fa3.py")]
ROWS = ROOT / "traces" / "attnbench" / "fa3-kernels-h200-2026-12-03"
MODEL = ROOT / "models" / "kernels" / "fa3_attention.json"

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def fitted_terms(path, kind="fa3", rows=144):
    """The coefficients the fit prints for `kind` over `path`, and its error summary ("median M%,
    worst W%")."""
    p = subprocess.run(FIT + [str(path)], capture_output=True, text=True)
    check(p.returncode == 0, f"fit over {path.name} exits {p.returncode}: {p.stderr.strip()}")
    m = re.search(rf"^{kind}: (.*?); {rows} rows, \|error\| (median [\d.]+%, worst [-+\d.]+%)", p.stdout, re.M)
    check(m is not None, f"{path.name}: no {kind} fit of {rows} rows printed: {p.stdout!r}")
    if not m:
        return {}, ""
    return {k: float(v) for k, v in re.findall(r"(\w+) ([-\d.e+]+)", m.group(1))}, m.group(2)


model = json.loads(MODEL.read_text())
terms = model["fa3"]["terms"]
fitted, errors = fitted_terms(ROWS / "fa3-kernels.json")
# the error the model states is the fit's
check(f"|error| {errors}" in model["fa3"]["fit"], f"the model's fit text does not say {errors!r}")
check(set(terms) == set(fitted), f"the model's terms {sorted(terms)} are not the fit's {sorted(fitted)}")
for name, value in terms.items():
    got = fitted.get(name)
    check(got is not None and abs(got - value) <= 0.005 * abs(value), f"fa3.{name}: model {value}, fit {got}")
# the other runs, on other machines of the same kind, agree: the fixed and byte terms within 1%,
# the FLOP term (a few us at most over these shapes, the least determined) within 5%
TOLERANCE = {"fixed_us": 0.01, "us_per_mb": 0.01, "us_per_gflop": 0.05}
for run in ("first-run.json", "third-run.json"):
    other, _ = fitted_terms(ROWS / run)
    for name, value in terms.items():
        got = other.get(name)
        check(got is not None and abs(got - value) <= TOLERANCE[name] * abs(value),
              f"{run}'s {name}: {got} against {value}")

# MLA's absorbed call (fa3_mla): the shipped run gives the model's terms, the other two agree
MLA_ROWS = ROOT / "traces" / "attnbench" / "fa3-mla-kernels-h200-2026-12-03"
mla_terms = model["fa3_mla"]["terms"]
mla_fitted, mla_errors = fitted_terms(MLA_ROWS / "fa3-mla-kernels.json", "fa3_mla", 192)
check(f"|error| {mla_errors}" in model["fa3_mla"]["fit"], f"the model's fa3_mla fit text does not say {mla_errors!r}")
check(set(mla_terms) == set(mla_fitted), f"fa3_mla terms {sorted(mla_terms)} are not the fit's {sorted(mla_fitted)}")
for name, value in mla_terms.items():
    got = mla_fitted.get(name)
    check(got is not None and abs(got - value) <= 0.005 * abs(value), f"fa3_mla.{name}: model {value}, fit {got}")
for run in ("second-run.json", "third-run.json"):
    other, _ = fitted_terms(MLA_ROWS / run, "fa3_mla", 192)
    for name, value in mla_terms.items():
        got = other.get(name)
        check(got is not None and abs(got - value) <= TOLERANCE[name] * abs(value),
              f"MLA {run}'s {name}: {got} against {value}")

flashinfer = ROOT / "traces" / "attnbench" / "flashinfer-kernels-h200-2026-12-03"
with tempfile.TemporaryDirectory() as d:
    bad = pathlib.Path(d) / "bad.json"
    row = ('{"kind": "fa3", "qo_heads": 8, "kv_heads": 1, "requests": 1, "query_tokens": 4, '
           '"kv_bytes": 1e6, "flops": 1e9, "us": 10}')
    cases = {"not json": "not json", "no rows": '{"rows": 3}', "a list": "[]",
             "no meta": '{"rows": [' + row + ']}', "a bad meta": '{"meta": 3, "rows": [' + row + ']}',
             "a NaN": '{"meta": {"kernel": "FlashAttention-3"}, "rows": [' + row.replace("1e6", "NaN") + ']}'}
    for what, text in cases.items():
        bad.write_text(text)
        q = subprocess.run(FIT + [str(bad)], capture_output=True, text=True)
        check(q.returncode == 2 and len(q.stderr.strip().splitlines()) == 1 and "error:" in q.stderr,
              f"{what}: exit {q.returncode}, stderr {q.stderr.strip()!r}")
    # FlashInfer's rows, its SM90 template's among them: another kernel
    for path in (flashinfer / "kernels.json", flashinfer / "fa3.json", pathlib.Path(d) / "missing.json"):
        q = subprocess.run(FIT + [str(path)], capture_output=True, text=True)
        check(q.returncode == 2 and len(q.stderr.strip().splitlines()) == 1 and "error:" in q.stderr,
              f"{path.name}: exit {q.returncode}, stderr {q.stderr.strip()!r}")

for f in failures:
    print("FAIL:", f)
print(f"{len(failures)} failures")
sys.exit(1 if failures else 0)
