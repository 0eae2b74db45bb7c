#include "scenario/sglang_attention.h"

#include <set>

#include "scenario/paths.h"
#include "util/error.h"
#include "util/json_io.h"

namespace specsim {

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

double flashinfer_custom_mask_factor() {
  // Read once: a kernel constant, not a setting.
  static const double factor = [] {
    const std::string path = models_dir() + "/kernels/flashinfer_custom_mask.json";
    const char* field = "models/kernels/flashinfer_custom_mask.json";
    const nlohmann::json j = read_json_file(path);
    if (!j.is_object()) throw InputError(path + ": needs a JSON object", field);
    const double v = sourced_number(j, "attention_time_factor", path);
    if (v < 1 || v > 10)
      throw InputError(path +
                           ": attention_time_factor must lie in [1, 10] (causal passes one custom-mask pass "
                           "costs), got " +
                           std::to_string(v),
                       field);
    return v;
  }();
  return factor;
}

}  // namespace specsim
