#include "cli_common.h"

#include <algorithm>
#include <cmath>

#include "scenario/flag_ranges.h"
#include "scenario/flag_values.h"
#include "util/error.h"

namespace specsim::cli {

const CLI::Validator finite_number(
    [](std::string& s) {
      double v = 0;
      try {
        v = std::stod(s);
      } catch (...) {
        return std::string("not a number: ") + s;
      }
      return std::isfinite(v) ? std::string() : "must be a finite number, not " + s;
    },
    "FINITE");

const CLI::Validator whole_number(
    [](std::string& s) {
      if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos)
        return "must be a whole number >= 0, not " + s;
      // up to 2^64 - 1 (18446744073709551615), the largest seed; a larger one is not clamped
      const std::string digits = s.substr(std::min(s.find_first_not_of('0'), s.size()));
      if (digits.size() > 20 || (digits.size() == 20 && digits > "18446744073709551615"))
        return "must be at most 18446744073709551615, not " + s;
      return std::string();
    },
    "UINT");

void add_run_flags(CLI::App& app, RunArgs& a) {
  namespace fr = flag_ranges;  // the ranges shown here are the ones validate_run() enforces
  app.add_option("--model-path", a.model_path,
                 "target config.json, a folder holding one, or a zoo name (deepseek-v3, ...)");
  app.add_option("--speculative-draft-model-path", a.draft_model_path, "EAGLE-3 draft config (zoo models pick theirs)");
  app.add_option("--hardware", a.hardware, "GPU:TOPOLOGY (e.g. h200:nvswitch) or a profile JSON path");
  app.add_option("--num-gpus", a.num_gpus, "GPUs in the box (default: the tp size)");
  app.add_option("--nnodes", a.nnodes, "nodes the GPUs are spread over (a cluster topology, e.g. h200:nvswitch-ib)");
  app.add_option("--tp-size", a.tp_size, "tensor-parallel size" + fr::kTpSize.help_suffix());
  app.add_option("--speculative-algorithm", a.algorithm,
                 "NONE, EAGLE, EAGLE3 or NEXTN (EAGLE/NEXTN on DeepSeek: its NextN layer)");
  app.add_option("--speculative-num-steps", a.num_steps, "draft steps per cycle (S)" + fr::kNumSteps.help_suffix());
  app.add_option("--speculative-eagle-topk", a.topk, "draft branches per step (K)" + fr::kTopk.help_suffix());
  app.add_option("--speculative-num-draft-tokens", a.num_draft_tokens,
                 "tokens verified per cycle (N)" + fr::kDraftTokens.help_suffix());
  app.add_option("--cuda-graph-max-bs", a.cuda_graph_max_bs,
                 "largest batch replayed from CUDA graphs" + fr::kCudaGraphMaxBs.help_suffix());
  app.add_flag("--disable-cuda-graph", a.disable_cuda_graph, "run every phase eagerly");
  app.add_option("--eager-phases", a.eager_phases,
                 "phases forced eager (comma list of draft_decode,verify,draft_extend,baseline_decode, or none)");
  app.add_option("--batch-size", a.batch_size, "running requests" + fr::kBatchSize.help_suffix());
  app.add_option("--context-len", a.context_len, "KV-cache tokens per request" + fr::kContextLen.help_suffix());
  app.add_option("--dtype", a.dtype, "target weight dtype: bf16, fp16, fp8 (default: from the config)");
  app.add_option("--accept-len", a.accept_len, "SGLang's accept len: accepted draft tokens per verify + 1");
  app.add_option("--accept-rate", a.accept_rate,
                 "per-token acceptance rate (chain formula; SGLang's draft tree when topk > 1; a draft "
                 "with a depth decay: the first position's rate)");
  app.add_option("--mem-fraction-static", a.mem_fraction_static,
                 "share of GPU memory for weights + KV cache (default: SGLang's, from GPU memory and settings)");
  // one value an occurrence: a list's last value would otherwise swallow a following `--`, and
  // the pasted command after it would be read as specsim's flags
  app.add_option("--allreduce", a.allreduce, "nccl | custom[:VARIANT] | fixed:US (repeatable; default nccl and custom)")
      ->allow_extra_args(false);
  // One measurement each: a list or range, as sweep takes for settings, is refused naming the flag.
  auto measured = [&app](const std::string& name, std::optional<double>& target, const std::string& help) {
    app.add_option_function<std::string>(
           name, [&target, name](const std::string& v) { target = parse_measurement(v, name); }, help)
        ->type_name("FLOAT");
  };
  measured("--measured-baseline-tok-s", a.measured_baseline_tok_s, "measured plain-decode tok/s (anchor)");
  measured("--measured-allreduce-us", a.measured_allreduce_us, "measured NCCL all-reduce us in verify (anchor)");
  measured("--measured-spec-tok-s", a.measured_spec_tok_s, "measured speculative tok/s with NCCL (implies accept len)");
  app.add_option("--runtime", a.runtime,
                 "serving runtime whose own work is costed: sglang (default), vllm (0.11), vllm-0.10 (0.8.5-0.10.x), "
                 "none, or a profile .json");
  app.add_option("--attention-backend", a.attention_backend,
                 "SGLang's attention backend, fa3 or flashinfer (default: SGLang's for the model); a draft tree's "
                 "attention runs in two passes on fa3 (docs/model.md#tree-attention)");
  app.add_option("--nccl-p2p-level", a.nccl_p2p_level, "NCCL_P2P_LEVEL: LOC, NVL, PIX, PXB (default), PHB, SYS");
  app.add_option("--nccl-algo", a.nccl_algo, "NCCL_ALGO: ring, tree (comma list)");
  app.add_option("--nccl-proto", a.nccl_proto, "NCCL_PROTO: LL, LL128, Simple (comma list)");
  app.add_option("--quantization", a.quantization, "weight format as SGLang names it (e.g. fp8, w4a16, modelopt_fp4)");
  app.add_option("--kv-cache-dtype", a.kv_cache_dtype, "KV-cache format as SGLang names it (auto, fp8_e4m3, ...)");
  app.add_flag("--disable-custom-all-reduce", a.disable_custom_all_reduce,
               "the serving stack's own custom all-reduce off (NCCL)");
  app.add_flag("--enable-flashinfer-allreduce-fusion", a.enable_flashinfer_allreduce_fusion,
               "all-reduce + residual add + RMSNorm fused in one kernel (FlashInfer's, as SGLang runs it)");
  app.add_flag("--enforce-disable-flashinfer-allreduce-fusion", a.enforce_disable_flashinfer_allreduce_fusion,
               "that fusion off, also where SGLang turns it on by default for the model and GPU");
  app.add_option(
      "--sglang-release", a.sglang_release,
      "the SGLang release whose defaults apply (speculative worker, fusion, the draft shape chosen when none is "
      "given): v0.5.2 (default) to v0.5.18");
  auto& p = a.parallel;
  app.add_option("--pp-size,--pipeline-parallel-size", p.pp_size,
                 "pipeline stages: layers split this many ways, each stage a TP group of --tp-size GPUs");
  app.add_option("--ep-size,--ep", p.ep_size, "expert-parallel size: routed experts split this many ways (divides tp)");
  app.add_flag("--enable-dp-attention", p.enable_dp_attention,
               "attention data-parallel over --dp ranks, each on its own requests; MoE over all (SGLang's)");
  app.add_option("--dp-size,--dp", p.dp_size, "DP attention ranks (with --enable-dp-attention; divides tp)");
  app.add_option("--moe-a2a-backend", p.moe_a2a_backend,
                 "MoE dispatch/combine: none (all-reduce, SGLang's default), deepep, or nccl (all-to-all)");
  app.add_option("--deepep-mode", p.deepep_mode, "DeepEP kernels: auto (low latency in a cycle), normal, low_latency");
  app.add_option("--ep-imbalance", p.ep_imbalance, "busiest expert-parallel rank's routed tokens over the mean (1..ep)")
      ->check(finite_number);
}

}  // namespace specsim::cli
