#include "scenario/sglang_fusion_default.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "scenario/stack_flag_table.h"

namespace specsim {

namespace {

enum class GpuRule {
  Sm100,            ///< compute capability 10.x
  Blackwell,        ///< 10.x or 12.x
  Sm90OrBlackwell,  ///< 9.0, 10.x or 12.x
  Sm90OrSm100,      ///< 9.0 or 10.x
};

// One release's rule: from `since` until the next row's (the rows in release order).
struct FusionRule {
  const char* since;
  std::vector<std::string> archs;
  GpuRule gpu;
  bool h20_excluded = false;              ///< "H20" in the device name and not "H200" (v0.5.7-v0.5.12)
  bool one_node = false;                  ///< nnodes == 1
  bool multi_node_on_sm100 = false;       ///< nnodes == 1 or SM100 (v0.5.14 on)
  bool no_a2a = false;                    ///< moe_a2a_backend == "none"
  GpuRule deepseek_gpu = GpuRule::Sm100;  ///< v0.5.4-v0.5.6 ruled DeepSeek apart from GPT-OSS
};

const std::vector<FusionRule>& rules() {
  const std::vector<std::string> v057 = {"DeepseekV3ForCausalLM", "GptOssForCausalLM", "Glm4MoeForCausalLM",
                                         "Qwen3MoeForCausalLM"};
  auto plus = [](std::vector<std::string> a, const std::vector<std::string>& more) {
    a.insert(a.end(), more.begin(), more.end());
    return a;
  };
  const auto v058 = plus(v057, {"Glm4MoeLiteForCausalLM"});
  const auto v059 = plus(v058, {"KimiK25ForConditionalGeneration"});
  const auto v0510 = plus(v059, {"Qwen3_5MoeForConditionalGeneration", "Qwen3_5ForConditionalGeneration"});
  const auto v0511 = plus(v0510, {"DeepseekV32ForCausalLM", "GlmMoeDsaForCausalLM", "Qwen3NextForCausalLM"});
  const auto v0512 = plus(v0511, {"InternS2PreviewForConditionalGeneration"});
  const auto v0513 = plus(v0512, {"MistralLarge3ForCausalLM"});
  const auto v0514 =
      plus(v0513, {"Qwen3VLMoeForConditionalGeneration", "NemotronHForCausalLM", "NemotronHPuzzleForCausalLM"});
  const auto v0518 = plus(v0514, {"DeepseekV4ForCausalLM"});
  static const std::vector<FusionRule> kRules = {
      {"v0.5.2", {"GptOssForCausalLM"}, GpuRule::Sm100},
      {"v0.5.4", {"GptOssForCausalLM", "DeepseekV3ForCausalLM"}, GpuRule::Sm100},
      {"v0.5.5", {"GptOssForCausalLM", "DeepseekV3ForCausalLM"}, GpuRule::Blackwell},
      {"v0.5.6", {"GptOssForCausalLM", "DeepseekV3ForCausalLM"}, GpuRule::Blackwell, false, true},
      {"v0.5.7", v057, GpuRule::Sm90OrBlackwell, true, true, false, true, GpuRule::Sm90OrBlackwell},
      {"v0.5.8", v058, GpuRule::Sm90OrSm100, true, true, false, true, GpuRule::Sm90OrSm100},
      {"v0.5.9", v059, GpuRule::Sm90OrSm100, true, true, false, true, GpuRule::Sm90OrSm100},
      {"v0.5.10", v0510, GpuRule::Sm90OrSm100, true, true, false, true, GpuRule::Sm90OrSm100},
      {"v0.5.11", v0511, GpuRule::Sm90OrSm100, true, true, false, true, GpuRule::Sm90OrSm100},
      {"v0.5.12", v0512, GpuRule::Sm90OrSm100, true, true, false, true, GpuRule::Sm90OrSm100},
      {"v0.5.13", v0513, GpuRule::Sm90OrSm100, false, true, false, true, GpuRule::Sm90OrSm100},
      {"v0.5.14", v0514, GpuRule::Sm90OrSm100, false, false, true, true, GpuRule::Sm90OrSm100},
      {"v0.5.18", v0518, GpuRule::Sm90OrSm100, false, false, true, true, GpuRule::Sm90OrSm100},
  };
  return kRules;
}

bool gpu_matches(GpuRule r, double cc) {
  const int major = static_cast<int>(cc);
  const bool sm90 = major == 9, sm100 = major == 10, sm120 = major == 12;
  switch (r) {
    case GpuRule::Sm100: return sm100;
    case GpuRule::Blackwell: return sm100 || sm120;
    case GpuRule::Sm90OrBlackwell: return sm90 || sm100 || sm120;
    case GpuRule::Sm90OrSm100: return sm90 || sm100;
  }
  return false;
}

}  // namespace

std::string sglang_fusion_default(const std::string& release, const ModelSpec& target, const Hardware& hw,
                                  const RunSpec& run) {
  const std::string rel = release.empty() ? "v0.5.2" : release;
  const FusionRule* rule = nullptr;
  for (const auto& r : rules())
    if (release_at_least(rel, r.since)) rule = &r;
  if (!rule || run.layout.dp_attention) return "";
  const std::string& arch = target.architecture;
  if (std::find(rule->archs.begin(), rule->archs.end(), arch) == rule->archs.end()) return "";
  const GpuRule gpu = arch == "DeepseekV3ForCausalLM" ? rule->deepseek_gpu : rule->gpu;
  const double cc = hw.gpu.compute_capability;
  if (!gpu_matches(gpu, cc)) return "";
  if (rule->h20_excluded && hw.gpu.name == "h20") return "";
  const bool sm100 = static_cast<int>(cc) == 10;
  if (rule->one_node && run.nnodes != 1) return "";
  if (rule->multi_node_on_sm100 && run.nnodes != 1 && !sm100) return "";
  if (rule->no_a2a && run.layout.a2a != A2aBackend::None) return "";
  if (run.tp_size <= 1) return "";  // no all-reduce to fuse (v0.5.10 on check tp > 1 themselves)
  return fmt::format(
      "SGLang {} turns FlashInfer's all-reduce fusion on by default for {} on compute capability {:g} "
      "at tp {}",
      rel, arch, cc, run.tp_size);
}

}  // namespace specsim
