"""specsim from Python: the subcommands of the `specsim` command line, run in-process.

Each function takes the command's flags as keyword arguments (``model_path="llama-3.1-8b"`` is
``--model-path llama-3.1-8b``; ``True`` gives a bare flag; a list repeats the flag) and returns
what the command's ``--json`` prints, as dicts and lists. The flags are parsed and checked by the
command line's own code: bad input raises :class:`InputError` (a ``ValueError``) with the line the
command line prints, without its ``error:`` prefix.

    import specsim
    r = specsim.run(model_path="llama-3.1-70b", hardware="h100-sxm:nvswitch", tp_size=8, accept_len=3)
    print(r["scenarios"][0]["spec"]["tok_per_s"])

``sweep``, ``tune`` and ``validate`` return a pandas DataFrame of their rows when pandas is
installed (the rest of the JSON in ``DataFrame.attrs``), the dict otherwise; ``as_frame=False``
always gives the dict.
"""

import json
import os
import tempfile

from . import _native

__version__ = _native.version
__all__ = ["run", "sweep", "tune", "validate", "diagnose", "replay", "check", "call", "InputError", "SpecsimError"]


class SpecsimError(RuntimeError):
    """A run that failed for a reason other than its input (exit 3: a missing tool or temp folder;
    70: an internal error). ``exit_code`` holds the command line's exit code."""

    def __init__(self, message, exit_code):
        super().__init__(message)
        self.exit_code = exit_code


class InputError(ValueError):
    """Bad input: the command line's ``error: ...`` line (exit 2), naming the flag or file."""

    exit_code = 2


def _flag(name):
    return "--" + name.replace("_", "-")


def _value(v):
    if isinstance(v, float) and v.is_integer():
        return repr(v)
    return str(v)


def _argv(kwargs, tmp):
    """Keyword arguments -> flags. A dict given as ``scenario`` is written to a JSON file first."""
    argv = []
    for key, v in kwargs.items():
        if v is None or v is False:
            continue
        if key == "scenario" and isinstance(v, dict):
            path = os.path.join(tmp, "scenario.json")
            with open(path, "w") as f:
                json.dump(v, f)
            v = path
        flag = _flag(key)
        if v is True:
            argv.append(flag)
        elif isinstance(v, (list, tuple)):
            for x in v:
                argv += [flag, _value(x)]
        else:
            argv += [flag, _value(v)]
    return argv


def call(*argv):
    """Runs ``specsim ARGV...`` in-process: returns (exit code, stdout, stderr) as the command line
    would give them. No exception for a non-zero exit code."""
    rc, out, err = _native.call([str(a) for a in argv])
    return rc, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def _number(text):
    """A JSON number to 15 significant digits, the most a double keeps through a decimal round
    trip: 54.10000000000001 (the last bit of float noise in the JSON) reads as 54.1."""
    return float(f"{float(text):.15g}")


def _run(command, positional, kwargs, json_to_file=False, ok_codes=(0,)):
    with tempfile.TemporaryDirectory(prefix="specsim-py-") as tmp:
        argv = [command] + [str(p) for p in positional] + _argv(kwargs, tmp)
        json_path = os.path.join(tmp, "out.json")
        argv += ["--json", json_path] if json_to_file else ["--json"]
        rc, out, err = call(*argv)
        if rc == 2:
            line = err.strip().splitlines()[-1] if err.strip() else "bad input"
            raise InputError(line[len("error: "):] if line.startswith("error: ") else line)
        if rc not in ok_codes:
            raise SpecsimError(err.strip() or f"specsim {command} exited with {rc}", rc)
        if json_to_file:
            with open(json_path) as f:
                return json.load(f, parse_float=_number)
        return json.loads(out, parse_float=_number)


def _frame(data, rows_key, as_frame):
    if as_frame is False:
        return data
    try:
        import pandas
    except ImportError:
        if as_frame:
            raise
        return data
    rows = data.get(rows_key, [])
    if rows and isinstance(rows[0], list):  # sweep: rows as arrays under "columns"
        frame = pandas.DataFrame(rows, columns=data.get("columns"))
    else:
        frame = pandas.json_normalize(rows)
    frame.attrs = {k: v for k, v in data.items() if k != rows_key}
    return frame


def run(**flags):
    """``specsim run --json``: one scenario (the built-in one with no arguments)."""
    return _run("run", [], flags)


def sweep(as_frame=None, **flags):
    """``specsim sweep``: a grid of settings (lists ``"1,2,4"``, ranges ``"1..8"``); its points."""
    return _frame(_run("sweep", [], flags, json_to_file=True), "rows", as_frame)


def tune(as_frame=None, **flags):
    """``specsim tune --json``: draft settings ranked per batch size; one row per ranked setting."""
    data = _run("tune", [], flags)
    if as_frame is False:
        return data
    rows = []
    for b in data.get("batches", []):
        for r in b.get("ranked", []):
            rows.append(dict(r, batch_size=b.get("batch_size")))
    return _frame(dict(data, rows=rows), "rows", as_frame)


def validate(as_frame=None, **flags):
    """``specsim validate --json``: the published measurements predicted, one row per case."""
    return _frame(_run("validate", [], flags), "cases", as_frame)


def diagnose(log, **flags):
    """``specsim diagnose LOG --json``: the scenario that reproduces an SGLang log's tok/s."""
    return _run("diagnose", [log], flags)


def replay(**flags):
    """``specsim replay --json``: the cycle run on this machine's GPU(s), measured beside
    predicted (InputError where this build or machine has no GPU)."""
    return _run("replay", [], flags)


def check(baseline, **flags):
    """``specsim check --baseline BASELINE --json``: the verdict, each gated figure and the inputs
    that differ; a regression is ``result["verdict"] == "regressed"``, not an exception."""
    return _run("check", [], dict(flags, baseline=baseline), ok_codes=(0, 1))
