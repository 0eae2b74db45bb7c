#!/usr/bin/env python3
"""Writes the synthetic SGLang server logs of traces/sglang-logs/ (deterministic).

The line formats are SGLang's (README.md in this folder names the public sources); the figures
are made up around published or plausible values and are not measurements.
"""
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))


def py(v):
    """A Python literal as repr() writes it."""
    if v is None or isinstance(v, bool):
        return repr(v)
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(v, list):
        return "[" + ", ".join(py(x) for x in v) + "]"
    raise TypeError(v)


def server_args(**over):
    # The keys in the order of the ServerArgs dataclass (a subset; SGLang logs about 200).
    args = dict(
        model_path=None, tokenizer_path=None, tokenizer_mode="auto", skip_tokenizer_init=False,
        load_format="auto", model_loader_extra_config="{}", trust_remote_code=False, context_length=None,
        is_embedding=False, revision=None, host="127.0.0.1", port=30000, skip_server_warmup=False,
        dtype="auto", quantization=None, kv_cache_dtype="auto", mem_fraction_static=0.8,
        max_running_requests=None, chunked_prefill_size=8192, max_prefill_tokens=16384,
        schedule_policy="fcfs", schedule_conservativeness=1.0, page_size=1, device="cuda", tp_size=1,
        pp_size=1, stream_interval=1, stream_output=False, random_seed=None, log_level="info",
        log_requests=False, served_model_name=None, dp_size=1, load_balance_method="round_robin",
        attention_backend="fa3", sampling_backend="flashinfer", grammar_backend="xgrammar",
        speculative_algorithm=None, speculative_draft_model_path=None, speculative_num_steps=None,
        speculative_eagle_topk=None, speculative_num_draft_tokens=None,
        speculative_accept_threshold_single=1.0, speculative_accept_threshold_acc=1.0,
        ep_size=1, disable_radix_cache=False, cuda_graph_max_bs=None, cuda_graph_bs=None,
        disable_cuda_graph=False, disable_cuda_graph_padding=False, enable_nccl_nvls=False,
        disable_custom_all_reduce=False, disable_overlap_schedule=False, enable_mixed_chunk=False,
        enable_dp_attention=False, enable_torch_compile=False, torch_compile_max_bs=32,
        decode_log_interval=40,
    )
    for k, v in over.items():
        assert k in args, k
        args[k] = v
    if args["tokenizer_path"] is None:
        args["tokenizer_path"] = args["model_path"]
    if args["served_model_name"] is None:
        args["served_model_name"] = args["model_path"]
    return "server_args=ServerArgs(" + ", ".join(f"{k}={py(v)}" for k, v in args.items()) + ")"


def log(name, title, sa, phases, seed):
    rnd = random.Random(seed)
    hh, mm, ss = 9, 30, 0

    def stamp():
        nonlocal hh, mm, ss
        ss += 1
        if ss == 60:
            ss, mm = 0, mm + 1
        return f"[2025-07-14 {hh:02d}:{mm:02d}:{ss:02d}"

    out = [f"SYNTHETIC SGLang server log in SGLang's real line formats, not a measurement: {title} "
           "(traces/sglang-logs/gen_logs.py)"]
    out.append(f"{stamp()}] {sa}")
    out.append(f"{stamp()} TP0] Init torch distributed begin.")
    out.append(f"{stamp()} TP0] Load weight end.")
    out.append(f"{stamp()} TP0] Capture cuda graph end. Time elapsed: 21.40 s")
    out.append(f"{stamp()}] INFO:     Uvicorn running on http://127.0.0.1:30000 (Press CTRL+C to quit)")
    for ph in phases:
        running, tokens = ph["running"], ph["prompt"] * ph["running"]
        out.append(f"{stamp()}] INFO:     127.0.0.1:52114 - \"POST /generate HTTP/1.1\" 200 OK")
        out.append(f"{stamp()} TP0] Prefill batch, #new-seq: {running}, #new-token: {tokens}, #cached-token: 0, "
                   f"token usage: 0.00, #running-req: 0, #queue-req: 0")
        for _ in range(ph["lines"]):
            tput = ph["tok_s"] * (1 + rnd.gauss(0, ph.get("noise", 0.015)))
            fields = [f"#running-req: {running}", f"#token: {tokens}", "token usage: 0.01"]
            if "accept" in ph:
                acc = min(ph["accept"] * (1 + rnd.gauss(0, 0.03)), ph["steps"] + 1)
                fields += [f"accept len: {acc:.2f}", f"accept rate: {(acc - 1) / ph['steps']:.2f}"]
            fields += [f"cuda graph: {ph.get('graph', True)}", f"gen throughput (token/s): {tput:.2f}",
                       "#queue-req: 0"]
            out.append(f"{stamp()} TP0] Decode batch, " + ", ".join(fields))
            tokens += int(round(tput * 1.0))  # one line per second of decoding
    with open(os.path.join(HERE, name), "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    llama = "meta-llama/Llama-3.1-8B-Instruct"
    # SGLang's documented EAGLE-3 example settings for Llama-3.1-8B; throughput around the 373 tok/s
    # SGLang's speculative decoding page reports on 1x H100 (MT-Bench), accept len made up.
    log("sglang-eagle3-llama3.1-8b-h100-synthetic-from-real-format.log",
        "EAGLE-3 Llama-3.1-8B-Instruct, 1x H100, steps 5, topk 8, 32 draft tokens, one request",
        server_args(model_path=llama, mem_fraction_static=0.7, attention_backend="fa3",
                    speculative_algorithm="EAGLE3",
                    speculative_draft_model_path="jamesliu1/sglang-EAGLE3-Llama-3.1-Instruct-8B",
                    speculative_num_steps=5, speculative_eagle_topk=8, speculative_num_draft_tokens=32,
                    cuda_graph_max_bs=8, disable_overlap_schedule=True),
        [dict(running=1, prompt=180, lines=40, tok_s=373.0, accept=4.1, steps=5),
         dict(running=1, prompt=240, lines=30, tok_s=371.0, accept=4.05, steps=5)], seed=11)
    # The same server with a chain draft (steps 3, topk 1, 4 draft tokens): a second setting for
    # `specsim diagnose LOG LOG` to fit the cycle over; throughput and accept len made up.
    log("sglang-eagle3-s3k1-llama3.1-8b-h100-synthetic-from-real-format.log",
        "EAGLE-3 Llama-3.1-8B-Instruct, 1x H100, steps 3, topk 1, 4 draft tokens, one request",
        server_args(model_path=llama, mem_fraction_static=0.7, attention_backend="fa3",
                    speculative_algorithm="EAGLE3",
                    speculative_draft_model_path="jamesliu1/sglang-EAGLE3-Llama-3.1-Instruct-8B",
                    speculative_num_steps=3, speculative_eagle_topk=1, speculative_num_draft_tokens=4,
                    cuda_graph_max_bs=8, disable_overlap_schedule=True),
        [dict(running=1, prompt=180, lines=40, tok_s=318.0, accept=3.05, steps=3),
         dict(running=1, prompt=240, lines=30, tok_s=316.0, accept=3.0, steps=3)], seed=14)
    # Plain decoding, same server without speculation: around the 158 tok/s of the same page.
    log("sglang-baseline-llama3.1-8b-h100-synthetic-from-real-format.log",
        "Llama-3.1-8B-Instruct without speculation, 1x H100, one request",
        server_args(model_path=llama, mem_fraction_static=0.8, attention_backend="fa3"),
        [dict(running=1, prompt=180, lines=40, tok_s=158.3),
         dict(running=1, prompt=240, lines=30, tok_s=157.9)], seed=12)
    # DeepSeek-V3 with its NextN (MTP) layer, TP 8: SGLang logs NEXTN as EAGLE with the target as
    # the draft; steps 3, topk 1, 4 draft tokens as SGLang's DeepSeek docs run it. Mostly one
    # request, some lines at 4: the tok/s and accept len are made up.
    log("sglang-nextn-deepseek-v3-tp8-h200-synthetic-from-real-format.log",
        "DeepSeek-V3 NextN (MTP), 8x H200 TP 8, steps 3, topk 1, 4 draft tokens, 1 then 4 requests",
        server_args(model_path="deepseek-ai/DeepSeek-V3", trust_remote_code=True, tp_size=8,
                    mem_fraction_static=0.8, attention_backend="flashinfer", speculative_algorithm="EAGLE",
                    speculative_draft_model_path="deepseek-ai/DeepSeek-V3", speculative_num_steps=3,
                    speculative_eagle_topk=1, speculative_num_draft_tokens=4, cuda_graph_max_bs=64,
                    disable_overlap_schedule=True),
        [dict(running=1, prompt=300, lines=45, tok_s=96.0, accept=2.65, steps=3),
         dict(running=4, prompt=300, lines=15, tok_s=290.0, accept=2.6, steps=3)], seed=13)


if __name__ == "__main__":
    main()
