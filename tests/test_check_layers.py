#!/usr/bin/env python3
"""tools/check_layers.py on small trees: it passes one that follows its drawing and fails, naming
the file, each kind of include against it (reaching up, across one layer, sim/ into kernels/,
kernels/ above its layer, a folder the drawing lacks). Then the real tree passes."""
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
CHECK = [sys.executable, str(ROOT / "tools" / "check_layers.py")]
DRAWING = "# x\n\n```layers\nutil\nscenario\ncost  <- kernels\nreport timeline   # peers\n```\n"


def tree(files):
    d = pathlib.Path(tempfile.mkdtemp())
    (d / "docs").mkdir()
    (d / "docs" / "architecture.md").write_text(DRAWING)
    for path, text in files.items():
        (d / path).parent.mkdir(parents=True, exist_ok=True)
        (d / path).write_text(text)
    return d


def run(d):
    p = subprocess.run(CHECK + ["--root", str(d)], capture_output=True, text=True)
    return p.returncode, p.stdout


failures = []
cases = 0


def expect(name, files, code, needle):
    global cases
    cases += 1
    rc, out = run(tree(files))
    if rc != code or needle not in out:
        failures.append(f"{name}: exit {rc}, output:\n{out}")


ok = {
    "sim/util/error.h": "#pragma once\n#include <string>\n",
    "sim/scenario/run.h": '#include "util/error.h"\n#include "scenario/other.h"\n#include <fmt/format.h>\n',
    "sim/cost/model.cc": '#include "scenario/run.h"\n',
    "sim/report/text.cc": '#include "cost/model.h"\n',
    "kernels/car.cu": '#include "cost/model.h"\n#include "car_types.h"\n',
    "kernels/replay/run.cc": '#include "replay/op.h"\n#include "scenario/run.h"\n',
}
expect("clean tree", ok, 0, "follows the drawing (4 layers)")
expect("reach up", {**ok, "sim/scenario/bad.cc": '#include "report/text.h"\n'}, 1,
       "sim/scenario/bad.cc:1: includes report/text.h: scenario may not reach up to report")
expect("one layer", {**ok, "sim/report/x.cc": '#include "timeline/t.h"\n'}, 1,
       "report and timeline are one layer")
expect("into kernels", {**ok, "sim/cost/y.cc": '#include "replay/op.h"\n'}, 1, "sim/ never includes kernels/")
expect("kernels above", {**ok, "kernels/z.cc": '#include "report/text.h"\n'}, 1,
       "kernels may not reach up to report")
expect("unknown folder", {**ok, "sim/extra/a.h": "#pragma once\n"}, 1, "sim/extra/: not in the drawing")

if subprocess.run(CHECK, capture_output=True, text=True).returncode != 0:
    failures.append("the real tree breaks its own drawing: run tools/check_layers.py")

for f in failures:
    print("FAIL", f)
print(f"check_layers: {cases} small trees and the real one checked, {len(failures)} failed")
sys.exit(1 if failures else 0)
