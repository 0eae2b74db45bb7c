#!/usr/bin/env python3
"""Holds the code to the layer drawing in docs/architecture.md.

The drawing is the fenced block tagged `layers` there: one line per layer, lowest first, each
line the sim/ folders of that layer. A file may include its own folder and folders of lower
layers only; folders of one layer do not include each other. kernels/ sits beside the layer
marked `<- kernels`: it may include that layer and those below, and sim/ never includes kernels/.
tools/ and tests/ sit on top. Exit 1 naming each include against the drawing, 0 when none.
"""
import argparse
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCES = ("*.h", "*.cc", "*.cu", "*.cuh")


def read_drawing():
    """The layers (lowest first) and the index of the one kernels/ sits beside."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    block = re.search(r"```layers\n(.*?)```", text, re.S)
    if not block:
        sys.exit("check_layers: docs/architecture.md has no ```layers block")
    layers, kernels_at = [], None
    for line in block.group(1).splitlines():
        line = line.split("#")[0]
        if "<- kernels" in line:
            kernels_at = len(layers)
            line = line.replace("<- kernels", "")
        folders = line.split()
        if folders:
            layers.append(folders)
    if kernels_at is None:
        sys.exit("check_layers: the layers block marks no layer with '<- kernels'")
    return layers, kernels_at


def main():
    global ROOT
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=str(ROOT), help="the source tree to check (default: this checkout)")
    ROOT = pathlib.Path(parser.parse_args().root).resolve()
    layers, kernels_at = read_drawing()
    rank = {folder: i for i, names in enumerate(layers) for folder in names}
    errors = []
    for folder in sorted(p.name for p in (ROOT / "sim").iterdir() if p.is_dir() and any(p.iterdir())):
        if folder not in rank:
            errors.append(f"sim/{folder}/: not in the drawing (add it to the layers block of docs/architecture.md)")

    def target_of(include):
        head = include.split("/")[0]
        if head in ("replay",) or include.startswith("kernels/"):
            return "kernels"
        return head if "/" in include else None

    for top in ("sim", "kernels"):
        if not (ROOT / top).is_dir():
            continue
        for pattern in SOURCES:
            for path in (ROOT / top).rglob(pattern):
                rel = path.relative_to(ROOT)
                if top == "sim":
                    here = rel.parts[1]
                    here_rank = rank.get(here)
                else:
                    here, here_rank = "kernels", kernels_at + 0.5  # beside its layer: that one and below
                for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    target = target_of(m.group(1))
                    if target is None or target == here:
                        continue
                    where = f"{rel}:{n}: includes {m.group(1)}"
                    if target == "kernels":
                        errors.append(f"{where}: sim/ never includes kernels/")
                        continue
                    if target not in rank:
                        continue  # a library header (nlohmann/json.hpp, fmt/format.h, ...)
                    if here_rank is None:
                        continue  # the unknown folder is reported above
                    if rank[target] > here_rank:
                        errors.append(f"{where}: {here} may not reach up to {target}")
                    elif rank[target] == here_rank:
                        errors.append(f"{where}: {here} and {target} are one layer and may not include each other")
    for e in errors:
        print(e)
    if errors:
        print(f"check_layers: {len(errors)} include(s) against the drawing in docs/architecture.md")
        return 1
    print(f"check_layers: every include of sim/ and kernels/ follows the drawing ({len(layers)} layers)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
