#!/usr/bin/env python3
"""specsim from Python: the built-in scenario, a what-if, a batch-size sweep and a regression check.

Run after the README's build:  PYTHONPATH=build/python python3 docs/examples/python_example.py
(ctest runs it as python_example). Every function takes the command line's flags as keyword
arguments and returns what its --json prints; bad input raises specsim.InputError."""
import json
import os
import tempfile

import specsim

# The built-in scenario: DeepSeek-V3 + EAGLE-3 on 8 PCIe GPUs, where speculation was slower.
r = specsim.run()
for s in r["scenarios"]:
    print(f"{s['label']:>8}: {s['spec']['tok_per_s']:6.1f} tok/s speculative, "
          f"{s['baseline']['tok_per_s']:6.1f} plain, break-even accept len {s['spec']['breakeven_accept_len']:.2f}")

# A what-if on another box: Llama-3.1-70B on 8 H100s, accept len 3.
w = specsim.run(model_path="llama-3.1-70b", hardware="h100-sxm:nvswitch", tp_size=8, accept_len=3)
print("llama-3.1-70b on 8x h100:", {s["label"]: round(s["spec"]["speedup"], 2) for s in w["scenarios"]})

# A sweep over batch sizes: a pandas DataFrame when pandas is installed, else the JSON's dict.
sw = specsim.sweep(as_frame=False, model_path="llama-3.1-70b", hardware="h100-sxm:nvswitch", tp_size=8,
                   accept_len=3, batch_size="1,8,32")
print(f"sweep: {sw['points']} points, columns {sw['columns'][:4]} ...")

# Bad input: the command line's message, as a ValueError.
try:
    specsim.run(batch_size=0)
except specsim.InputError as e:
    print("refused:", e)

# A regression check, as CI would run it: the baseline carries its scenario.
with tempfile.TemporaryDirectory() as d:
    base = os.path.join(d, "baseline.json")
    with open(base, "w") as f:
        json.dump(r, f)
    same = specsim.check(base)
    slower = specsim.check(base, context_len=16384)
    print(f"check as made: {same['verdict']}; with {slower['changes_under_test']}: {slower['verdict']}")
    assert same["verdict"] == "ok" and slower["verdict"] == "regressed"
