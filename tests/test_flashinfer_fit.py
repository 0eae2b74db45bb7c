#!/usr/bin/env python3
"""models/kernels/flashinfer_attention.json against the measurement it was fitted to: the fit tool
(tools/attnbench/fit_flashinfer.py) over the shipped H200 rows gives every coefficient the model
holds, and it refuses a file that is not its input with one line and exit 2."""
import json
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIT = [sys.executable, str(ROOT / "tools" / "attnbench" / "fit_flashinfer.py")]
ROWS = ROOT / "traces" / "attnbench" / "flashinfer-kernels-h200-2026-12-03" / "kernels.json"
MODEL = ROOT / "models" / "kernels" / "flashinfer_attention.json"

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


p = subprocess.run(FIT + [str(ROWS)], capture_output=True, text=True)
check(p.returncode == 0, f"fit over the shipped rows exits {p.returncode}: {p.stderr.strip()}")
fitted = {}
for line in p.stdout.splitlines():
    m = re.match(r"(\w+): (.*?); (\d+) rows", line)
    if m:
        fitted[m.group(1)] = {k: float(v) for k, v in re.findall(r"(\w+) ([-\d.e+]+)", m.group(2))}
model = json.loads(MODEL.read_text())
for kernel in ("prefill", "custom", "decode", "decode_tc"):
    terms = model[kernel]["terms"]
    check(kernel in fitted, f"the fit printed no {kernel}")
    for name, value in terms.items():
        got = fitted.get(kernel, {}).get(name)
        check(got is not None and abs(got - value) <= 0.005 * abs(value),
              f"{kernel}.{name}: model {value}, fit {got}")
    check(set(terms) == set(fitted.get(kernel, {})), f"{kernel}: the model's terms are not the fit's")

# the SM90 template's rows, shipped beside them, go through the same command
q = subprocess.run(FIT + [str(ROWS.parent / "fa3.json")], capture_output=True, text=True)
check(q.returncode == 0 and "fa3: 90 rows, not fitted" in q.stdout, f"fa3.json: exit {q.returncode}, {q.stdout!r}")

with tempfile.TemporaryDirectory() as d:
    bad = pathlib.Path(d) / "bad.json"
    row = ('{"kind": "causal", "qo_heads": 8, "kv_heads": 3, "requests": 1, "query_tokens": 4, '
           '"kv_bytes": 1e6, "flops": 1e9, "us": 10}')
    for text in ("not json", '{"rows": 3}', "[]", '{"rows": [' + row + ']}'):
        bad.write_text(text)
        q = subprocess.run(FIT + [str(bad)], capture_output=True, text=True)
        check(q.returncode == 2 and len(q.stderr.strip().splitlines()) == 1 and "error:" in q.stderr,
              f"{text!r}: exit {q.returncode}, stderr {q.stderr.strip()!r}")
    q = subprocess.run(FIT + [str(pathlib.Path(d) / "missing.json")], capture_output=True, text=True)
    check(q.returncode == 2 and "error:" in q.stderr, f"missing file: exit {q.returncode}")

for f in failures:
    print("FAIL:", f)
print(f"{len(failures)} failures")
sys.exit(1 if failures else 0)
