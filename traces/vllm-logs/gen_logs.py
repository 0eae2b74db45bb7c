#!/usr/bin/env python3
"""Writes the synthetic vLLM server logs of traces/vllm-logs/ (deterministic).

The line formats are vLLM's V1 engine's (README.md in this folder names the public sources and
the real excerpts that show them); the figures are made up around published values and are not
measurements.
"""
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = "Qwen/Qwen3-8B"
DRAFT = "AngelSlim/Qwen3-8B_eagle3"


def stamp(t):
    """vLLM's logger prefix time: month-day and time of day, no year."""
    h, rest = divmod(int(t), 3600)
    m, s = divmod(rest, 60)
    return f"12-01 {9 + h:02d}:{m:02d}:{s:02d}"


def api(t, where, text):
    return f"(APIServer pid=2817) INFO {stamp(t)} [{where}] {text}"


def stats(t, prompt, gen, running, usage):
    return api(t, "loggers.py:123", f"Engine 000: Avg prompt throughput: {prompt:.1f} tokens/s, Avg generation "
               f"throughput: {gen:.1f} tokens/s, Running: {running} reqs, Waiting: 0 reqs, GPU KV cache usage: "
               f"{usage:.1f}%, Prefix cache hit rate: 0.0%")


def spec(t, tokens, accept_len, k, interval):
    drafts = round(tokens / accept_len)
    accepted = tokens - drafts
    first = min(0.95, (accept_len - 1) * 0.64)
    rates = [first] + [(accept_len - 1 - first) / (k - 1)] * (k - 1)
    return api(t, "metrics.py:96", "SpecDecoding metrics: Mean acceptance length: "
               f"{1 + accepted / drafts:.2f}, Accepted throughput: {accepted / interval:.2f} tokens/s, Drafted "
               f"throughput: {drafts * k / interval:.2f} tokens/s, Accepted: {accepted} tokens, Drafted: "
               f"{drafts * k} tokens, Per-position acceptance rate: {', '.join(f'{r:.3f}' for r in rates)}, "
               f"Avg Draft acceptance rate: {100 * accepted / (drafts * k):.1f}%")


def write(name, title, speculative, tok_s, accept_len, seed):
    rnd = random.Random(seed)
    args = f"{{'model_tag': '{MODEL}', 'host': '0.0.0.0', 'model': '{MODEL}', 'max_model_len': 8192"
    config = f"model='{MODEL}', speculative_config="
    if speculative:
        args += f", 'speculative_config': {{'method': 'eagle3', 'model': '{DRAFT}', 'num_speculative_tokens': 2}}"
        config += f"SpeculativeConfig(method='eagle3', model='{DRAFT}', num_spec_tokens=2)"
    else:
        config += "None"
    args += "}"
    lines = [f"# {title}",
             api(0, "api_server.py:1839", "vLLM API server version 0.11.2"),
             api(0, "utils.py:233", f"non-default args: {args}"),
             f"(EngineCore_DP0 pid=2950) INFO {stamp(9)} [core.py:77] Initializing a V1 LLM engine (v0.11.2) with "
             f"config: {config}, tokenizer='{MODEL}', skip_tokenizer_init=False, tokenizer_mode=auto, "
             "trust_remote_code=False, dtype=torch.bfloat16, max_seq_len=8192, tensor_parallel_size=1, "
             "pipeline_parallel_size=1, data_parallel_size=1, disable_custom_all_reduce=False, quantization=None, "
             "enforce_eager=False, kv_cache_dtype=auto",
             # Qwen3-8B's 144 KiB of bf16 KV a token in what 0.9 of an H20's 96 GB leaves after the weights
             f"(EngineCore_DP0 pid=2950) INFO {stamp(31)} [kv_cache_utils.py:1087] GPU KV cache size: 455,024 tokens",
             api(40, "api_server.py:1971", "Starting vLLM API server 0 on http://0.0.0.0:8000"),
             "(APIServer pid=2817) INFO:     Application startup complete.",
             '(APIServer pid=2817) INFO:     127.0.0.1:40112 - "POST /v1/chat/completions HTTP/1.1" 200 OK']
    t = 60
    # the request arrives inside the first interval: its prefill, and decoding for part of it
    ramp = tok_s * 0.7
    lines.append(stats(t, 14.6, ramp, 1, 0.1))
    if speculative:
        lines.append(spec(t, round(ramp * 10), accept_len, 2, 10))
    for _ in range(18):
        t += 10
        gen = tok_s * rnd.uniform(0.97, 1.03)
        lines.append(stats(t, 0.0, gen, 1, rnd.choice([0.2, 0.3, 0.3, 0.4])))
        if speculative:
            lines.append(spec(t, round(gen * 10), accept_len * rnd.uniform(0.98, 1.02), 2, 10))
    t += 10
    tail = tok_s * 0.4  # the request ends inside the interval
    lines.append(stats(t, 0.0, tail, 0, 0.0))
    if speculative:
        lines.append(spec(t, round(tail * 10), accept_len, 2, 10))
    t += 10
    lines.append(stats(t, 0.0, 0.0, 0, 0.0))
    with open(os.path.join(HERE, name), "w") as f:
        f.write("\n".join(lines) + "\n")


write("vllm-eagle3-qwen3-8b-h20-synthetic-from-real-format.log",
      "SYNTHETIC: made-up figures in vLLM V1's real line formats, not a measurement (traces/vllm-logs/README.md): "
      "Qwen3-8B + AngelSlim EAGLE-3 draft, 2 speculative tokens, vLLM 0.11.2, one request, around the "
      "258.2 tok/s and accept length 1.97 AngelSlim's README reports on one H20 (MT-Bench)",
      True, 258.2, 1.97, 11)
write("vllm-baseline-qwen3-8b-h20-synthetic-from-real-format.log",
      "SYNTHETIC: made-up figures in vLLM V1's real line formats, not a measurement (traces/vllm-logs/README.md): "
      "the same server without speculation, around the 153.81 tok/s AngelSlim's README reports on one H20 (MT-Bench)",
      False, 153.81, 1.0, 12)
