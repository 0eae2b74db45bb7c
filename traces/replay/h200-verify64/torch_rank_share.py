"""One tp-8 rank's share of a Llama-3.3-70B forward through PyTorch (fp16, as the published run):
the four dense GEMMs per layer (F.linear, cuBLAS) and the attention (SDPA, 8 query heads on one
KV head) at M = 1..128 tokens, 80 layers with their own weights and KV, each row one CUDA graph
(median of 20 replays). Attention at M > 1 runs with a tree mask over prefix + draft tokens.
usage: python3 torch_rank_share.py [context_len]"""
import sys
import torch
import torch.nn.functional as F

torch.manual_seed(0)
dev, dt, layers = "cuda", torch.float16, 80
ctx = int(sys.argv[1]) if len(sys.argv) > 1 else 2048
shapes = {"qkv_proj": (1280, 8192), "o_proj": (8192, 1024), "gate_up_proj": (7168, 8192), "down_proj": (8192, 3584)}
w = {k: [torch.randn(n, kk, device=dev, dtype=dt) * 0.02 for _ in range(layers)] for k, (n, kk) in shapes.items()}
kv = [(torch.randn(1, 1, ctx + 128, 128, device=dev, dtype=dt), torch.randn(1, 1, ctx + 128, 128, device=dev, dtype=dt))
      for _ in range(layers)]


def tree_mask(m):
    """Prefix visible to all; each draft token sees itself and a random chain of ancestors."""
    mask = torch.zeros(m, ctx + m, dtype=torch.bool, device=dev)
    mask[:, :ctx] = True
    parent = [-1] + [int(torch.randint(0, i, (1,))) for i in range(1, m)]
    for i in range(m):
        j = i
        while j >= 0:
            mask[i, ctx + j] = True
            j = parent[j]
    return mask


def graph_us(fn):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    for _ in range(5):
        g.replay()
    ts = []
    for _ in range(20):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) * 1000)
    return sorted(ts)[len(ts) // 2]


print(f"device {torch.cuda.get_device_name()} torch {torch.__version__} context {ctx} fp16, 80 layers per graph")
print("M      " + " ".join(f"{k:>13}" for k in shapes) + "     gemm_sum   all4_graph  attn_nomask  attn_tree")
for m in (1, 8, 16, 32, 64, 128):
    xs = {k: torch.randn(m, kk, device=dev, dtype=dt) for k, (n, kk) in shapes.items()}
    per = {}
    for k in shapes:
        per[k] = graph_us(lambda k=k: [F.linear(xs[k], w[k][i]) for i in range(layers)])
    all4 = graph_us(lambda: [[F.linear(xs[k], w[k][i]) for k in shapes] for i in range(layers)])
    q = torch.randn(1, 8, m, 128, device=dev, dtype=dt)
    kvm = [(k_[:, :, : ctx + m], v_[:, :, : ctx + m]) for k_, v_ in kv]
    nomask = graph_us(lambda: [F.scaled_dot_product_attention(q, k_, v_, enable_gqa=True) for k_, v_ in kvm])
    tm = tree_mask(m)
    tree = graph_us(lambda: [F.scaled_dot_product_attention(q, k_, v_, attn_mask=tm, enable_gqa=True) for k_, v_ in kvm])
    print(f"{m:<6} " + " ".join(f"{per[k] / layers:13.2f}" for k in shapes) +
          f" {sum(per.values()) / layers:12.2f} {all4 / layers:12.2f} {nomask / layers:12.2f} {tree / layers:10.2f}")
print("(us per layer; each column one graph of 80 layers' calls, median of 20 replays)")
