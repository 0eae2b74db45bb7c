#!/usr/bin/env python3
"""All-reduce through PyTorch beside specsim-arbench, on the same machine in the same run.

Times PyTorch's symmetric-memory one-shot (torch.ops.symm_mem.one_shot_all_reduce) and two-shot
(two_shot_all_reduce_) and NCCL (torch.distributed.all_reduce), one process per GPU, bf16, the way
specsim-arbench -g N times its rows: `--iters` calls captured in one CUDA graph (and eagerly),
host clock after a synchronize, median of 5 launches. Each op's result is checked once against an
fp64 sum of every rank's input (bf16 rounding tolerance). With --arbench LOG (specsim-arbench's
output from the same run) it prints one table with both and the ratios.

NVLink multicast stays off (NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1).

Usage: python3 tools/arbench/torch_allreduce.py --gpus 2 --sizes 14336,43008 --iters 200 [--arbench LOG]
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time

for k, v in (("NCCL_NVLS_ENABLE", "0"), ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"), ("NVSHMEM_DISABLE_NVLS", "1")):
    os.environ[k] = v  # never NVLink multicast, whatever the caller's environment says

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

OPS = ("torch-one-shot", "torch-two-shot", "torch-nccl")


def inputs(rank, numel, seed):
    g = torch.Generator().manual_seed(seed * 1000 + rank)
    return (torch.rand(numel, generator=g, dtype=torch.float32) * 2 - 1).to(torch.bfloat16)


def time_op(fn, iters, graph):
    """us per call: `iters` calls eagerly or as one CUDA graph, median of 5 timed launches."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    g = None
    if graph:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(iters):
                fn()
        torch.cuda.synchronize()
    samples = []
    for _ in range(6):
        dist.barrier()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        if g is not None:
            g.replay()
        else:
            for _ in range(iters):
                fn()
        torch.cuda.synchronize()
        samples.append((time.perf_counter() - t0) * 1e6 / iters)
    return statistics.median(samples[1:])


def worker(rank, world, sizes, iters, port, result_path):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.cuda.set_device(rank)
    dev = torch.device("cuda", rank)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=dev)
    import torch.distributed._symmetric_memory as symm_mem

    group = dist.group.WORLD
    name = group.group_name
    if hasattr(symm_mem, "enable_symm_mem_for_group"):
        try:
            symm_mem.enable_symm_mem_for_group(name)
        except Exception:  # newer releases need no enabling
            pass
    max_numel = max(sizes) // 2
    buf = symm_mem.empty(max_numel, dtype=torch.bfloat16, device=dev)
    symm_mem.rendezvous(buf, group)
    plain = torch.empty(max_numel, dtype=torch.bfloat16, device=dev)
    rows = []
    for k, size in enumerate(sizes):
        numel = size // 2
        x = buf.narrow(0, 0, numel)
        y = plain.narrow(0, 0, numel)
        ops = {
            "torch-one-shot": lambda: torch.ops.symm_mem.one_shot_all_reduce(x, "sum", name),
            "torch-two-shot": lambda: torch.ops.symm_mem.two_shot_all_reduce_(x, "sum", name),
            "torch-nccl": lambda: dist.all_reduce(y),
        }
        want = sum(inputs(r, numel, k).double() for r in range(world))
        tol = world * 2.0**-8 * sum(inputs(r, numel, k).double().abs() for r in range(world)) + 1e-6
        row = {"bytes": size}
        for op in OPS:
            mine = inputs(rank, numel, k).to(dev)
            x.copy_(mine)
            y.copy_(mine)
            torch.cuda.synchronize()
            dist.barrier()
            out = ops[op]()
            out = x if op == "torch-two-shot" else (y if op == "torch-nccl" else out)
            torch.cuda.synchronize()
            bad = int(((out.double().cpu() - want).abs() > tol).sum())
            row[op] = {"wrong": bad, "graph_us": time_op(ops[op], iters, True), "eager_us": time_op(ops[op], iters, False)}
        rows.append(row)
    if rank == 0:
        with open(result_path, "w") as f:
            json.dump({"torch": torch.__version__, "nccl": ".".join(map(str, torch.cuda.nccl.version())),
                       "device": torch.cuda.get_device_name(0), "world": world, "rows": rows}, f)
    dist.barrier()
    dist.destroy_process_group()


def arbench_summary(path):
    """{(variant, mode): [us per size]} from specsim-arbench's summary block."""
    out, on = {}, False
    for line in open(path):
        if line.startswith("# summary"):
            on = True
        elif on and ("speed-up" in line or "Out of bounds" in line):
            break
        elif on and line.startswith("# "):
            t = line[2:].split()
            if len(t) > 2 and t[0] != "variant":
                out[(t[0], t[1])] = [float(v) if v != "-" else None for v in t[2:]]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpus", type=int, default=torch.cuda.device_count())
    ap.add_argument("--sizes", default="14336,43008,57344,114688", help="bytes per rank, comma list (bf16)")
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--arbench", help="specsim-arbench output of the same sizes, for one combined table")
    a = ap.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    if a.gpus < 2:
        print(f"error: needs 2 or more GPUs, found {a.gpus} (--gpus)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "torch.json")
        port = 29500 + os.getpid() % 1000
        mp.spawn(worker, args=(a.gpus, sizes, a.iters, port, path), nprocs=a.gpus, join=True)
        res = json.load(open(path))
    print(f"# torch {res['torch']}, NCCL {res['nccl']}, {res['world']} x {res['device']}, bf16, "
          f"{a.iters} calls per graph, median of 5 launches, host clock")
    print(f"# {'op':<16} {'mode':>6} " + " ".join(f"{s:>10}" for s in sizes))
    wrong = 0
    for op in OPS:
        for mode in ("graph", "eager"):
            print(f"# {op:<16} {mode:>6} " + " ".join(f"{r[op][mode + '_us']:>10.2f}" for r in res["rows"]))
        wrong += sum(r[op]["wrong"] for r in res["rows"])
    print(f"# torch results outside bf16 rounding of the fp64 sum: {wrong}")
    if a.arbench:
        ours = arbench_summary(a.arbench)
        print("#\n# side by side, us per call (graph of {} calls), same machine, same run".format(a.iters))
        print(f"# {'what':<28} " + " ".join(f"{s:>10}" for s in sizes))
        table = {}
        for (v, mode), us in sorted(ours.items()):
            if mode == "graph":
                table[f"specsim {v}"] = us
        for op in OPS:
            table[op] = [r[op]["graph_us"] for r in res["rows"]]
        for k, us in table.items():
            print(f"# {k:<28} " + " ".join(f"{u:>10.2f}" if u else f"{'-':>10}" for u in us))
        best = table.get("specsim one-shot-ll")
        if best:
            for ref in ("torch-one-shot", "torch-two-shot", "specsim nccl", "torch-nccl"):
                if ref in table:
                    print(f"# {ref + ' / one-shot-ll':<28} " +
                          " ".join(f"{r / b:>9.2f}x" if r and b else f"{'-':>10}" for r, b in zip(table[ref], best)))
    return 0 if wrong == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
