#include "validate/case_run.h"

#include <fmt/ranges.h>

#include <cctype>

#include "util/shell_quote.h"

namespace specsim {

namespace {

std::string upper(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

}  // namespace

std::string case_algorithm(const PublishedCase& c) {
  const std::string a = upper(c.algorithm);
  if (a.rfind("NONE", 0) == 0) return "NONE";
  if (a.find("EAGLE3") != std::string::npos) return "EAGLE3";
  if (a.find("MTP") != std::string::npos || a.find("NEXTN") != std::string::npos) return "NEXTN";
  return "EAGLE";
}

std::string case_topology(const PublishedCase& c) {
  return c.zoo_topology.value_or(c.nnodes.value_or(1) > 1 ? "nvswitch-ib" : "nvswitch");
}

std::optional<CaseRun> case_run(const PublishedCase& c, std::string& why_not, CaseAcceptance acceptance) {
  if (!c.zoo_model) return why_not = "model not in the zoo (zoo_model null)", std::nullopt;
  if (!c.zoo_gpu) return why_not = "GPU not stated or not in the zoo (zoo_gpu null)", std::nullopt;
  if (!c.tp) return why_not = "tp not stated", std::nullopt;
  if (!c.batch_size) return why_not = "batch size not stated", std::nullopt;
  CaseRun r;
  RunArgs& a = r.args;
  r.put("--model-path", a.model_path, *c.zoo_model);
  if (c.zoo_draft) r.put("--speculative-draft-model-path", a.draft_model_path, *c.zoo_draft);
  r.put("--hardware", a.hardware, *c.zoo_gpu + ":" + case_topology(c));
  if (c.nnodes.value_or(1) > 1) r.put("--nnodes", a.nnodes, *c.nnodes);
  r.put("--tp-size", a.tp_size, *c.tp);
  if (c.pp_size) r.put("--pp-size", a.parallel.pp_size, *c.pp_size);
  if (c.enable_dp_attention) {
    a.parallel.enable_dp_attention = true;
    r.flags.push_back("--enable-dp-attention");
  }
  if (c.dp_size) r.put("--dp-size", a.parallel.dp_size, *c.dp_size);
  if (c.ep_size) r.put("--ep-size", a.parallel.ep_size, *c.ep_size);
  if (c.moe_a2a_backend) r.put("--moe-a2a-backend", a.parallel.moe_a2a_backend, *c.moe_a2a_backend);
  if (c.deepep_mode) r.put("--deepep-mode", a.parallel.deepep_mode, *c.deepep_mode);
  if (c.dtype) r.put("--dtype", a.dtype, *c.dtype);
  if (c.quantization) r.put("--quantization", a.quantization, *c.quantization);
  if (c.kv_cache_dtype) r.put("--kv-cache-dtype", a.kv_cache_dtype, *c.kv_cache_dtype);
  r.put("--batch-size", a.batch_size, *c.batch_size);
  if (c.context_len) r.put("--context-len", a.context_len, static_cast<long long>(*c.context_len));
  r.put("--runtime", a.runtime, c.runtime_profile.value_or(c.serving == "vLLM" ? "vllm" : "sglang"));
  // The all-reduce the case's stack ran: at TP > 1 its own (cost/stack_allreduce.h: the custom
  // kernel where the stack's gates allow it, else NCCL, as the stack picks), with the custom kernel
  // off where the command turns it off; at TP 1 there is none (nccl names the empty choice).
  std::string ar = "nccl";
  if (*c.tp > 1)
    ar = std::string(c.serving == "vLLM" ? "vllm" : "sglang") + (c.custom_all_reduce ? "" : ":disable-custom");
  a.allreduce = {ar};
  r.flags.insert(r.flags.end(), {"--allreduce", ar});
  // The accept length as the source gives it; without one the measured spec tok/s implies it
  // (run's --measured-spec-tok-s anchor); with neither, plain decoding alone.
  if (acceptance == CaseAcceptance::PlainOnly || (!c.accept_length && !c.spec_tok_s)) {
    r.put("--speculative-algorithm", a.algorithm, std::string("NONE"));
    return r;
  }
  r.put("--speculative-algorithm", a.algorithm, case_algorithm(c));
  if (c.num_steps) r.put("--speculative-num-steps", a.num_steps, *c.num_steps);
  if (c.topk) r.put("--speculative-eagle-topk", a.topk, *c.topk);
  if (c.num_draft_tokens) r.put("--speculative-num-draft-tokens", a.num_draft_tokens, *c.num_draft_tokens);
  const bool measured = c.spec_tok_s && (acceptance == CaseAcceptance::Measured ||
                                         (acceptance == CaseAcceptance::Stated && !c.accept_length));
  if (measured)
    r.put("--measured-spec-tok-s", a.measured_spec_tok_s, *c.spec_tok_s * *c.batch_size);
  else if (c.accept_length)
    r.put("--accept-len", a.accept_len, *c.accept_length);
  return r;
}

std::string case_run_command(const CaseRun& r) { return "specsim run " + shell_join(r.flags); }

}  // namespace specsim
