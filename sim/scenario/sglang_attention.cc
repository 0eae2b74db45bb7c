#include "scenario/sglang_attention.h"

#include <set>

#include "scenario/model_constant.h"

namespace specsim {
namespace {

bool nvidia_hopper(const Hardware& hw) { return hw.gpu.arch == GpuArch::Hopper && !hw.gpu.amd; }

bool gpt_oss(const ModelSpec& m) { return m.architecture == "GptOssForCausalLM"; }

constexpr const char* kFa3MeasuredShapeFile = "kernels/fa3_attention.json";

}  // namespace

double fa3_measured_kv_bytes() {
  static const double bytes = model_constant(kFa3MeasuredShapeFile, "measured_kv_cache_bytes", 0.5, 4,
                                             "the KV-cache bytes an element FA3 was measured at");
  return bytes;
}

bool sglang_fa3_default_architecture(const std::string& architecture) {
  // SGLang's list (python/sglang/srt/utils.py, is_fa3_default_architecture; docs/sources.md#S-flashinfer-custom-mask).
  static const std::set<std::string> fa3 = {"Qwen2ForCausalLM",
                                            "Llama4ForConditionalGeneration",
                                            "LlamaForCausalLM",
                                            "Gemma2ForCausalLM",
                                            "Gemma3ForConditionalGeneration",
                                            "Qwen3ForCausalLM",
                                            "Qwen3MoeForCausalLM",
                                            "Glm4MoeForCausalLM",
                                            "Glm4vMoeForConditionalGeneration",
                                            "Step3VLForConditionalGeneration"};
  return fa3.count(architecture) > 0;
}

void decide_sglang_attention(RunSpec& run, const ModelSpec& target, const Hardware& hw) {
  const std::optional<std::string>& named = run.attention_backend;
  // A tree on FA3 (docs/sources.md#S-fa3-tree-cascade).
  run.fa3_tree_attention = named ? *named == "fa3" : nvidia_hopper(hw) && (target.has_mla || gpt_oss(target));
  // An MHA model on an NVIDIA GPU runs FlashInfer's or FA3's MHA backend; MLA models and gpt-oss
  // run other backends (SGLang refuses flashinfer for gpt-oss), AMD GPUs aiter or triton. The
  // verify on FlashInfer reads a custom mask; FA3 runs on Hopper only.
  const bool mha_nvidia = !target.has_mla && !gpt_oss(target) && !hw.gpu.amd;
  run.custom_mask_tree = mha_nvidia && (named ? *named == "flashinfer" : true);
  const bool fa3_default = nvidia_hopper(hw) && sglang_fa3_default_architecture(target.architecture);
  run.custom_mask_chain = mha_nvidia && (named ? *named == "flashinfer" : !fa3_default);
  // MLA models run FA3 on Hopper unless another backend is named (model_runner.py)
  const bool mla_fa3 = target.has_mla && (named ? *named == "fa3" : true);
  run.fa3_attention = nvidia_hopper(hw) && ((mha_nvidia && (named ? *named == "fa3" : fa3_default)) || mla_fa3);
}

std::string sglang_tree_backend(const RunSpec& run, const ModelSpec& target, const Hardware& hw) {
  if (run.fa3_tree_attention) return "fa3";
  const bool named = run.attention_backend && *run.attention_backend == "flashinfer";
  if (run.custom_mask_tree || (!hw.gpu.amd && target.has_mla && (named || hw.gpu.arch == GpuArch::Blackwell)))
    return "flashinfer";
  return "";
}

bool fa3_price_covers(double head_dim, double kv_cache_bytes) {
  static const double measured_head_dim =
      model_constant(kFa3MeasuredShapeFile, "measured_head_dim", 1, 1024, "the head dim FA3 was measured at");
  // a narrower (fp8) cache: the measured call with its bytes (an assumption the run's note states)
  return head_dim == measured_head_dim && kv_cache_bytes <= fa3_measured_kv_bytes();
}

bool fa3_mla_price_covers(double rope_dim, double latent_dim, double kv_cache_bytes) {
  static const double measured_rope = model_constant(kFa3MeasuredShapeFile, "measured_mla_rope_dim", 1, 1024,
                                                     "the rope width FA3's MLA call was measured at");
  static const double measured_latent = model_constant(kFa3MeasuredShapeFile, "measured_mla_latent_dim", 1, 4096,
                                                       "the latent width FA3's MLA call was measured at");
  return rope_dim == measured_rope && latent_dim == measured_latent && kv_cache_bytes <= fa3_measured_kv_bytes();
}

double flashinfer_custom_mask_factor() {
  static const double factor = model_constant("kernels/flashinfer_custom_mask.json", "attention_time_factor", 1, 10,
                                              "causal passes one custom-mask pass costs");
  return factor;
}

}  // namespace specsim
