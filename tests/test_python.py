#!/usr/bin/env python3
"""The Python module `specsim` (tools/python) against the command line it wraps: the same data as
`--json`, the same errors as InputError, every function. Run by ctest with PYTHONPATH=build/python
and SPECSIM_BIN=build/specsim."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import specsim

BIN = os.environ["SPECSIM_BIN"]
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BOX = dict(model_path="llama-3.1-8b", hardware="h200:nvswitch", tp_size=2)


def cli(*args):
    """What the `specsim` binary prints and returns for ARGS."""
    p = subprocess.run([BIN, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def close(a, b):
    """Same JSON up to the 15 significant digits the module keeps."""
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(close(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return abs(a - b) <= 1e-12 * max(abs(a), abs(b), 1e-300)
    return a == b


class Run(unittest.TestCase):
    def test_builtin_is_the_cli_json(self):
        r = specsim.run()
        self.assertEqual(r["scenarios"][0]["spec"]["tok_per_s"], 54.1)
        rc, out, _ = cli("run", "--json")
        self.assertEqual(rc, 0)
        self.assertTrue(close(r, json.loads(out)))

    def test_keywords_are_flags(self):
        r = specsim.run(**BOX, batch_size=4, accept_len=2.5, allreduce=["nccl", "fixed:40"])
        rc, out, _ = cli("run", "--model-path", "llama-3.1-8b", "--hardware", "h200:nvswitch", "--tp-size", "2",
                         "--batch-size", "4", "--accept-len", "2.5", "--allreduce", "nccl", "--allreduce", "fixed:40",
                         "--json")
        self.assertEqual(rc, 0)
        self.assertTrue(close(r, json.loads(out)))
        self.assertEqual(len(r["scenarios"]), 2)
        self.assertEqual(r["settings"]["batch_size"], 4)

    def test_scenario_file_and_dict(self):
        saved = specsim.run(**BOX, accept_len=2.5)["scenario_file"]
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "s.json")
            with open(path, "w") as f:
                json.dump(saved, f)
            from_file = specsim.run(scenario=path)
        from_dict = specsim.run(scenario=saved)
        self.assertEqual(from_file["scenarios"], from_dict["scenarios"])
        self.assertEqual(from_dict["settings"]["tp_size"], 2)


class Errors(unittest.TestCase):
    def assert_same_error(self, fn, kwargs, argv):
        rc, _, err = cli(*argv)
        self.assertEqual(rc, 2)
        with self.assertRaises(specsim.InputError) as e:
            fn(**kwargs)
        self.assertIsInstance(e.exception, ValueError)
        self.assertEqual("error: " + str(e.exception), err.strip())

    def test_bad_input_raises_the_cli_message(self):
        self.assert_same_error(specsim.run, dict(model_path="no-such-model"), ["run", "--model-path", "no-such-model"])
        self.assert_same_error(specsim.run, dict(batch_size=0), ["run", "--batch-size", "0"])
        self.assert_same_error(specsim.run, dict(no_such_flag=1), ["run", "--no-such-flag", "1"])
        self.assert_same_error(specsim.tune, dict(), ["tune"])
        self.assert_same_error(specsim.diagnose, dict(log="/nonexistent.log"), ["diagnose", "/nonexistent.log"])


class Commands(unittest.TestCase):
    def test_sweep(self):
        r = specsim.sweep(as_frame=False, **BOX, batch_size="1,4", accept_len=2.5)
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "s.json")
            rc, _, _ = cli("sweep", "--model-path", "llama-3.1-8b", "--hardware", "h200:nvswitch", "--tp-size", "2",
                           "--batch-size", "1,4", "--accept-len", "2.5", "--json", out)
            self.assertEqual(rc, 0)
            with open(out) as f:
                want = json.load(f)
        self.assertTrue(close(r, want))
        self.assertGreaterEqual(len(r["rows"]), 2)

    def test_tune_validate(self):
        t = specsim.tune(as_frame=False, **BOX, accept_len=2.5, batch_size="1")
        self.assertEqual(len(t["batches"]), 1)
        self.assertGreater(len(t["batches"][0]["ranked"]), 0)
        v = specsim.validate(as_frame=False)
        rc, out, _ = cli("validate", "--json")
        self.assertEqual(rc, 0)
        self.assertEqual(len(v["cases"]), len(json.loads(out)["cases"]))

    def test_diagnose(self):
        log = os.path.join(REPO, "traces", "sglang-logs", "sglang-eagle3-llama3.1-8b-h100-synthetic-from-real-format.log")
        d = specsim.diagnose(log, hardware="h100-sxm:nvswitch")
        rc, out, _ = cli("diagnose", log, "--hardware", "h100-sxm:nvswitch", "--json")
        self.assertEqual(rc, 0)
        self.assertTrue(close(d, json.loads(out)))

    def test_check_regression_is_data(self):
        with tempfile.TemporaryDirectory() as d:
            base = os.path.join(d, "b.json")
            rc, out, _ = cli("run", "--json")
            with open(base, "w") as f:
                f.write(out)
            self.assertEqual(specsim.check(base)["verdict"], "ok")
            slower = specsim.check(base, context_len=16384)
            self.assertEqual(slower["verdict"], "regressed")
            self.assertEqual(slower["changes_under_test"], ["--context-len 16384"])

    def test_ctrl_c_stays_python_s(self):
        # sweep writes its JSON through a temporary file, whose signal handlers would end python
        before = signal.getsignal(signal.SIGINT)
        specsim.sweep(as_frame=False, **BOX, batch_size="1", accept_len=2.5)
        self.assertIs(signal.getsignal(signal.SIGINT), before)
        with self.assertRaises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1)

    def test_frames_when_pandas(self):
        try:
            import pandas  # noqa: F401
        except ImportError:
            self.assertIsInstance(specsim.sweep(**BOX, batch_size="1,2", accept_len=2.5), dict)
            return
        f = specsim.sweep(**BOX, batch_size="1,2", accept_len=2.5)
        self.assertEqual(len(f), len(specsim.sweep(as_frame=False, **BOX, batch_size="1,2", accept_len=2.5)["rows"]))

    def test_call_is_the_command_line(self):
        # exit code, stdout and stderr as `specsim ARGV...` gives them, never an exception
        for argv in (["--version"], ["--help"], ["help"], ["bogus"], ["ingest", "--help"], []):
            with self.subTest(argv=argv):
                self.assertEqual(specsim.call(*argv), cli(*argv))
        rc, out, err = specsim.call("--version")
        self.assertEqual((rc, out, err), (0, "specsim " + specsim.__version__ + "\n", ""))
        rc, out, err = specsim.call("bogus")
        self.assertEqual(rc, 2)
        self.assertEqual(out, "")
        self.assertTrue(err.startswith("error: unknown command 'bogus'"), err)
        rc, out, _ = specsim.call()  # `specsim` alone: the built-in run
        self.assertEqual(rc, 0)
        self.assertIn("tok/s", out)

    def test_version_and_replay(self):
        rc, out, _ = cli("--version")
        self.assertEqual(out.strip(), "specsim " + specsim.__version__)
        rc, out, err = cli("replay", "--iters", "1", "--warmup", "0", "--json")
        if rc == 0:  # a GPU machine: measured data, checked by tests/gpu
            self.assertIn("scenarios", specsim.replay(iters=1, warmup=0))
            return
        # no GPU here, or no CUDA in this build: raised with the command line's line and exit code
        with self.assertRaises((specsim.InputError, specsim.SpecsimError)) as e:
            specsim.replay(iters=1, warmup=0)
        self.assertEqual(getattr(e.exception, "exit_code", None), rc)
        self.assertIn(str(e.exception).removeprefix("error: ").splitlines()[-1][:40], err)


if __name__ == "__main__":
    unittest.main(verbosity=2)
