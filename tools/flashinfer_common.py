"""What the FlashInfer measurement scripts share (tools/hostbench/flashinfer_plan.py,
tools/attnbench/flashinfer_mask.py and flashinfer_kernels.py, tools/arbench/flashinfer_norm.py;
tools/attnbench/fa3_kernels.py takes its flags and timing too):
their shape and timing flags and how they are checked, finding the GPU and FlashInfer, the
paged-prefill wrapper SGLang builds for a verify or a draft extend, timing calls in a CUDA graph,
the run's header and writing the rows."""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time

import torch


def positive_int(text):
    """argparse type: an integer >= 1 (argparse then names the flag and exits with 2)."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not an integer")
    if v < 1:
        raise argparse.ArgumentTypeError(f"{v} is below 1")
    return v


def positive_ints(text):
    """argparse type: a comma-separated list of integers >= 1."""
    values = [positive_int(x) for x in text.split(",") if x]
    if not values:
        raise argparse.ArgumentTypeError("give at least one value, e.g. 1,4,8")
    return values


def head_pairs(text):
    """argparse type: qo:kv head pairs a rank holds, comma-separated (e.g. 32:8,8:1)."""
    pairs = []
    for item in (x for x in text.split(",") if x):
        parts = item.split(":")
        if len(parts) != 2:
            raise argparse.ArgumentTypeError(f"'{item}' is not qo:kv, e.g. 32:8")
        qo, kv = (positive_int(p) for p in parts)
        if qo % kv:
            raise argparse.ArgumentTypeError(f"{qo} query heads do not split over {kv} KV heads")
        pairs.append((qo, kv))
    if not pairs:
        raise argparse.ArgumentTypeError("give at least one pair, e.g. 32:8")
    return pairs


def json_path(text):
    """argparse type: a file path whose folder exists (checked before anything is measured)."""
    folder = os.path.dirname(os.path.abspath(text))
    if not os.path.isdir(folder):
        raise argparse.ArgumentTypeError(f"folder {folder} does not exist")
    return text


def add_head_args(ap):
    """The attention shape every script takes (Llama-3.1-8B's draft by default)."""
    ap.add_argument("--qo-heads", type=positive_int, default=32)
    ap.add_argument("--kv-heads", type=positive_int, default=8)
    ap.add_argument("--head-dim", type=positive_int, default=128)


def add_timing_args(ap, layers):
    """How a script times its calls in a CUDA graph: `--layers` calls a graph (default `layers`),
    `--reps` replays a timing, `--rounds` timings (the median kept); and `--json`."""
    ap.add_argument("--layers", type=positive_int, default=layers,
                    help="calls a graph, each over its own data (a KV cache, a buffer)")
    ap.add_argument("--reps", type=positive_int, default=20, help="graph replays a timing")
    ap.add_argument("--rounds", type=positive_int, default=5, help="timings, the median kept")
    ap.add_argument("--json", type=json_path, help="write the rows here as JSON")


def time_graph(fn, calls, reps, rounds):
    """us per call: fn (`calls` calls) captured in a CUDA graph after three warm-up runs on a side
    stream, replayed `reps` times between CUDA events; the median over `rounds` such timings."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    for _ in range(3):
        graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(rounds):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(reps):
            graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000.0 / (reps * calls))
    return statistics.median(times)


def load_flashinfer():
    """The flashinfer module, or a one-line error and exit 2 where there is no GPU or no FlashInfer."""
    if not torch.cuda.is_available():
        print("error: no CUDA device visible to PyTorch", file=sys.stderr)
        sys.exit(2)
    try:
        import flashinfer
    except ImportError as e:
        print(f"error: FlashInfer is not importable ({e}); put its source on PYTHONPATH", file=sys.stderr)
        sys.exit(2)
    return flashinfer


def run_meta(flashinfer, a, **extra):
    """The header of a run: GPU, versions, the head shape, the date; `extra` after them."""
    meta = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
            "flashinfer": getattr(flashinfer, "__version__", "unknown"), "qo_heads": a.qo_heads,
            "kv_heads": a.kv_heads, "head_dim": a.head_dim}
    meta.update(extra)
    meta["date_utc"] = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    return meta


def paged_prefill(flashinfer, batch, q_len, kv_len, masked, backend):
    """FlashInfer's paged prefill wrapper in CUDA-graph mode, as SGLang builds it for a verify
    (masked: with custom-mask buffers) or a draft extend: `batch` requests of `q_len` query tokens
    over `kv_len` cached tokens plus themselves, page size 1. Returns the wrapper and its index
    tensors (qo_indptr, kv_indptr, kv_indices, last_page_len) for `plan`."""
    dev = torch.device("cuda")
    total = kv_len + q_len
    index = (
        torch.arange(batch + 1, dtype=torch.int32, device=dev) * q_len,
        torch.arange(batch + 1, dtype=torch.int32, device=dev) * total,
        torch.arange(batch * total, dtype=torch.int32, device=dev),
        torch.ones(batch, dtype=torch.int32, device=dev),
    )
    mask_bufs = {}
    if masked:
        mask_bufs = dict(
            custom_mask_buf=torch.zeros((batch * q_len * total + 7) // 8, dtype=torch.uint8, device=dev),
            mask_indptr_buf=torch.zeros(batch + 1, dtype=torch.int32, device=dev),
        )
    wrapper = flashinfer.BatchPrefillWithPagedKVCacheWrapper(
        torch.empty(256 * 1024 * 1024, dtype=torch.uint8, device=dev),
        "NHD",
        use_cuda_graph=True,
        backend=backend,
        qo_indptr_buf=torch.zeros_like(index[0]),
        paged_kv_indptr_buf=torch.zeros_like(index[1]),
        paged_kv_indices_buf=torch.zeros_like(index[2]),
        paged_kv_last_page_len_buf=torch.zeros_like(index[3]),
        **mask_bufs,
    )
    return wrapper, index


KERNEL_ROW_HEADER = (f"{'kind':>6} {'qo':>3} {'kv':>3} {'reqs':>4} {'q':>3} {'kv_len':>6} {'kv_MB':>8} {'GFLOP':>7} "
                     f"{'us':>8}")


def kernel_row(kind, qo_heads, kv_heads, requests, q_len, kv_len, context, us, head_dim=128, latent_v_dim=None):
    """One timed attention call as the fit tools read it, printed as a line under KERNEL_ROW_HEADER,
    with the KV bytes and FLOPs the engine counts for such an op: K and V of each request's
    `context` tokens read once (bf16), QK and PV over the context for every query token. With
    `latent_v_dim` (MLA's absorbed form) there is one cache, `head_dim` wide (the latent and the
    rope part), whose first `latent_v_dim` columns are V: its bytes are read once, QK is `head_dim`
    wide and PV `latent_v_dim`."""
    if latent_v_dim is None:
        kv_bytes = requests * context * 2 * kv_heads * head_dim * 2
        flops = 2.0 * requests * q_len * qo_heads * context * 2 * head_dim
    else:
        kv_bytes = requests * context * kv_heads * head_dim * 2
        flops = 2.0 * requests * q_len * qo_heads * context * (head_dim + latent_v_dim)
    print(f"{kind:>6} {qo_heads:>3} {kv_heads:>3} {requests:>4} {q_len:>3} {kv_len:>6} {kv_bytes / 1e6:>8.2f} "
          f"{flops / 1e9:>7.2f} {us:>8.2f}", flush=True)
    return {"kind": kind, "qo_heads": qo_heads, "kv_heads": kv_heads, "requests": requests, "query_tokens": q_len,
            "kv_len": kv_len, "kv_bytes": kv_bytes, "flops": flops, "us": us}


def write_json(path, obj):
    """Writes obj to path whole or not at all (a temporary file renamed over it)."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(obj, f, indent=1)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
