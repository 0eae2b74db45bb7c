#!/usr/bin/env python3
"""Host time of FlashInfer's batch-decode plan, as SGLang's multi-step draft backend calls it.

SGLang drafts a tree (top-k > 1) on FlashInfer on Hopper. Before each cycle's draft graph replays,
its multi-step draft backend copies every step's KV index pointers to the host in one `.cpu()`
(which waits for the GPU's queued work), then plans each step's decode wrapper on the host, step
after step, through a trimmed copy of FlashInfer's plan that skips the buffer copies. The GPU has
nothing queued meanwhile, so these host calls sit in series with the draft forwards. This script
times, on the host clock:

  copy      the once-a-cycle `.cpu()` of a (steps, requests + 1) int32 index-pointer tensor,
            just after a small kernel was queued outside the timed region (what the cycle waits
            for is not in it);
  fast      one step's plan the way SGLang calls it: two empty device tensors for the dtypes,
            a device guard, and the compiled module's plan with the host index pointer already
            on the host (the tensor-core path also copies the last-page lengths to the host and
            derives the KV lengths, as SGLang 0.4-0.5's trimmed plan does);
  raw       the compiled module's plan call alone;
  standard  FlashInfer's own `plan` (buffer copies included), for comparison;
  verify    the target verify's plan on the tree: FlashInfer's paged prefill wrapper in CUDA-graph
            mode with a custom mask of `--verify-tokens` query tokens a request (batch requests),
            its own `plan` as SGLang calls it (index pointers copied to the host, mask packed);
  extend    the draft extend's plan: the same wrapper (FlashInfer's FA2 kernels) over the accepted
            tokens, `--extend-tokens` a request, no mask.

`requests` is batch x top-k (the draft decodes every top-k branch as a request). Each figure is the
median (and 90th percentile) of `--iters` calls after a warm-up, in microseconds. Needs PyTorch with
CUDA and an importable FlashInfer whose decode wrapper has `_cached_module.plan` (0.2-0.3 series);
its JIT compiles the decode module on first use.

Usage: python3 tools/hostbench/flashinfer_plan.py --requests 1,4,8,32 --kv-len 1024 \
         --qo-heads 32 --kv-heads 8 --head-dim 128 --tensor-cores 0,1 [--json OUT]
"""
import argparse
import json
import pathlib
import platform
import statistics
import sys
import time

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from flashinfer_common import (add_head_args, json_path, load_flashinfer, paged_prefill, positive_int,  # noqa: E402
                               positive_ints, run_meta, write_json)

MEASUREMENTS = ("decode", "verify", "extend", "copy")


def tensor_core_list(text):
    """argparse type: 0 (decode kernels), 1 (prefill kernels) or both, comma-separated."""
    values = [x for x in text.split(",") if x]
    if not values or any(x not in ("0", "1") for x in values):
        raise argparse.ArgumentTypeError(f"'{text}': give 0, 1 or 0,1")
    return [int(x) for x in values]


def measurement_list(text):
    """argparse type: some of decode, verify, extend and copy, comma-separated."""
    values = [x for x in text.split(",") if x]
    unknown = [x for x in values if x not in MEASUREMENTS]
    if not values or unknown:
        raise argparse.ArgumentTypeError(f"'{text}': give some of {','.join(MEASUREMENTS)}")
    return set(values)


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def timed(fn, iters, warmup=50, drain_every=100, setup=None):
    """Median and 90th percentile of fn's host time in us; `setup` runs before each call, outside
    the timed region. The GPU queue is drained every `drain_every` calls, outside the timed
    region, so that queued copies never fill it."""
    for _ in range(warmup):
        if setup:
            setup()
        fn()
    torch.cuda.synchronize()
    samples = []
    for i in range(iters):
        if setup:
            setup()
        t0 = time.perf_counter_ns()
        fn()
        samples.append((time.perf_counter_ns() - t0) / 1000.0)
        if (i + 1) % drain_every == 0:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    samples.sort()
    return statistics.median(samples), samples[int(0.9 * (len(samples) - 1))]


class VerifyCase:
    """The target verify's prefill wrapper on a tree: `batch` requests of `q_len` query tokens over
    `kv_len` cached tokens plus themselves, a custom mask (none: the draft extend's plan), page
    size 1, CUDA-graph buffers."""

    def __init__(self, flashinfer, batch, q_len, kv_len, qo_heads, kv_heads, head_dim, dtype, masked=True):
        self.wrapper, index = paged_prefill(flashinfer, batch, q_len, kv_len, masked, "auto" if masked else "fa2")
        self.args = (*index, qo_heads, kv_heads, head_dim, 1)
        total_kv = kv_len + q_len
        self.mask = torch.ones(batch * q_len * total_kv, dtype=torch.bool, device="cuda") if masked else None
        self.dtype = dtype
        self.plan()
        torch.cuda.synchronize()

    def plan(self):
        self.wrapper.plan(*self.args, custom_mask=self.mask, q_data_type=self.dtype, kv_data_type=self.dtype)


class Case:
    """One decode wrapper in CUDA-graph mode (fixed buffers) for `requests` requests of `kv_len`
    tokens each, page size 1, as SGLang builds one per draft step."""

    def __init__(self, flashinfer, requests, kv_len, qo_heads, kv_heads, head_dim, tensor_cores, dtype):
        dev = torch.device("cuda")
        self.dev, self.dtype, self.requests = dev, dtype, requests
        self.qo_heads, self.kv_heads, self.head_dim = qo_heads, kv_heads, head_dim
        self.tensor_cores = tensor_cores
        workspace = torch.empty(256 * 1024 * 1024, dtype=torch.uint8, device=dev)
        self.indptr = torch.arange(requests + 1, dtype=torch.int32, device=dev) * kv_len
        self.indices = torch.arange(requests * kv_len, dtype=torch.int32, device=dev)
        self.last_page_len = torch.ones(requests, dtype=torch.int32, device=dev)
        self.wrapper = flashinfer.BatchDecodeWithPagedKVCacheWrapper(
            workspace,
            "NHD",
            use_cuda_graph=True,
            use_tensor_cores=tensor_cores,
            paged_kv_indptr_buffer=torch.zeros_like(self.indptr),
            paged_kv_indices_buffer=torch.zeros_like(self.indices),
            paged_kv_last_page_len_buffer=torch.zeros_like(self.last_page_len),
        )
        self.standard()  # compiles or loads the module
        torch.cuda.synchronize()
        self.module = self.wrapper._cached_module
        self.indptr_host = self.indptr.cpu()
        self.qo_indptr_host = torch.arange(requests + 1, dtype=torch.int32)

    def standard(self):
        self.wrapper.plan(self.indptr, self.indices, self.last_page_len, self.qo_heads, self.kv_heads,
                          self.head_dim, 1, data_type=self.dtype, q_data_type=self.dtype)

    def _plan_args(self, indptr_host, empty_q, empty_kv):
        w = self.wrapper
        n = self.requests
        if self.tensor_cores:
            last_host = self.last_page_len.cpu()
            kv_lens_host = (indptr_host[1:] - indptr_host[:-1] - 1) + last_host  # page size 1
            return (w._float_workspace_buffer, w._int_workspace_buffer, w._pin_memory_int_workspace_buffer,
                    self.qo_indptr_host, indptr_host, kv_lens_host, n, n, self.qo_heads, self.kv_heads, 1, True,
                    self.head_dim, self.head_dim, False)
        return (w._float_workspace_buffer, w._int_workspace_buffer, w._pin_memory_int_workspace_buffer, indptr_host,
                n, self.qo_heads, self.kv_heads, 1, True, -1, 0.0, self.head_dim, self.head_dim, empty_q, empty_kv)

    def fast(self):
        empty_q = torch.empty(0, dtype=self.dtype, device=self.dev)
        empty_kv = torch.empty(0, dtype=self.dtype, device=self.dev)
        with torch.cuda.device(self.dev):
            self.wrapper._plan_info = self.module.plan(*self._plan_args(self.indptr_host, empty_q, empty_kv))

    def raw_args(self):
        empty = torch.empty(0, dtype=self.dtype, device=self.dev)
        return self._plan_args(self.indptr_host, empty, empty)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=positive_ints, default="1,3,4,8,16,32,64",
                    help="batch x top-k values, comma-separated")
    ap.add_argument("--kv-len", type=positive_int, default=1024, help="KV tokens per request")
    add_head_args(ap)
    ap.add_argument("--tensor-cores", type=tensor_core_list, default="0,1",
                    help="0 (decode kernels), 1 (prefill kernels), or both")
    ap.add_argument("--steps", type=positive_ints, default="3,5,7", help="draft steps for the once-a-cycle copy")
    ap.add_argument("--verify-tokens", type=positive_ints, default="4,8,16",
                    help="draft tokens a request in the verify's plan")
    ap.add_argument("--verify-batches", type=positive_ints, default="1,4,8,32",
                    help="batch sizes for the verify's and extend's plans")
    ap.add_argument("--extend-tokens", type=positive_ints, default="4,8",
                    help="accepted tokens a request in the draft extend's plan")
    ap.add_argument("--what", type=measurement_list, default=",".join(MEASUREMENTS),
                    help="which of decode (raw, fast, standard), verify, extend and copy to time")
    ap.add_argument("--iters", type=positive_int, default=2000)
    ap.add_argument("--json", type=json_path, help="write the rows here as JSON")
    a = ap.parse_args()
    flashinfer = load_flashinfer()
    dtype = torch.bfloat16
    meta = run_meta(flashinfer, a, cpu=cpu_model(), python=platform.python_version(), kv_len=a.kv_len,
                    iters=a.iters)
    print("# " + json.dumps(meta))
    rows = []
    print(f"{'what':<10} {'tc':>2} {'requests':>8} {'n':>5} {'median_us':>10} {'p90_us':>8}   (n: draft steps for copy, query tokens a request for verify and extend)")

    def record(what, tc, requests, n, med, p90):
        row = {"what": what, "tensor_cores": tc, "requests": requests, "median_us": med, "p90_us": p90}
        if what == "copy":
            row["steps"] = n
        elif what in ("verify", "extend"):
            row["query_tokens"] = n
        rows.append(row)
        print(f"{what:<10} {tc:>2} {requests:>8} {n:>5} {med:>10.1f} {p90:>8.1f}", flush=True)

    small = torch.zeros(1024, device="cuda")
    what = a.what
    for tc in a.tensor_cores if "decode" in what else []:
        for n in a.requests:
            c = Case(flashinfer, n, a.kv_len, a.qo_heads, a.kv_heads, a.head_dim, bool(tc), dtype)
            args = c.raw_args()
            record("raw", tc, n, 1, *timed(lambda: c.module.plan(*args), a.iters))
            record("fast", tc, n, 1, *timed(c.fast, a.iters))
            record("standard", tc, n, 1, *timed(c.standard, a.iters))
    for q in a.verify_tokens if "verify" in what else []:
        for b in a.verify_batches:
            v = VerifyCase(flashinfer, b, q, a.kv_len, a.qo_heads, a.kv_heads, a.head_dim, dtype)
            record("verify", 1, b, q, *timed(v.plan, a.iters))
    for q in a.extend_tokens if "extend" in what else []:
        for b in a.verify_batches:
            e = VerifyCase(flashinfer, b, q, a.kv_len, a.qo_heads, a.kv_heads, a.head_dim, dtype, masked=False)
            record("extend", 1, b, q, *timed(e.plan, a.iters))
    for s in a.steps if "copy" in what else []:
        for n in a.requests:
            ptrs = torch.zeros((s, n + 1), dtype=torch.int32, device="cuda")
            # a queued kernel the copy waits behind, as the cycle's would; launched untimed
            record("copy", -1, n, s, *timed(ptrs.cpu, a.iters, setup=lambda: small.add_(1.0)))
    if a.json:
        write_json(a.json, {"meta": meta, "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
