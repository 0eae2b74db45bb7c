#include "scenario/sglang_auto_draft.h"

#include <fmt/format.h>

#include <array>

#include "scenario/stack_flag_table.h"

namespace specsim {

namespace {

constexpr AutoDraftShape kAutoChain{3, 1, 4};
constexpr AutoDraftShape kAutoTree{5, 4, 8};

// Every release gives Llama and Grok the tree; these architectures the chain, from the release
// that named them (the zoo's among them; the rest of SGLang's list are models specsim has no
// builder for). From v0.5.8 every architecture but Llama and Grok takes the chain.
struct ChainFrom {
  const char* architecture;
  const char* since;
};
constexpr std::array kChainFrom = {
    ChainFrom{"DeepseekV3ForCausalLM", "v0.5.2"}, ChainFrom{"DeepseekV2ForCausalLM", "v0.5.2"},
    ChainFrom{"GptOssForCausalLM", "v0.5.2"},     ChainFrom{"DeepseekV32ForCausalLM", "v0.5.3"},
    ChainFrom{"Glm4MoeForCausalLM", "v0.5.7"},
};
constexpr const char* kChainForAll = "v0.5.8";

std::string shown(const AutoDraftShape& d) { return fmt::format("({}, {}, {})", d.steps, d.topk, d.draft_tokens); }

}  // namespace

AutoDraftShape sglang_auto_draft_shape(const std::string& architecture, const std::string& release) {
  const std::string r = release.empty() ? "v0.5.2" : release;
  if (architecture == "LlamaForCausalLM" || architecture == "Grok1ForCausalLM" || architecture == "Grok1VForCausalLM")
    return kAutoTree;
  if (release_at_least(r, kChainForAll)) return kAutoChain;
  for (const ChainFrom& c : kChainFrom)
    if (architecture == c.architecture && release_at_least(r, c.since)) return kAutoChain;
  return kAutoTree;
}

std::string sglang_auto_draft_note(const std::string& architecture, const std::string& release) {
  if (release.empty()) return "";
  const AutoDraftShape now = sglang_auto_draft_shape(architecture, release);
  const AutoDraftShape pinned = sglang_auto_draft_shape(architecture, "");
  if (now == pinned) return "";
  return fmt::format(
      "no --speculative-num-steps, --speculative-eagle-topk or --speculative-num-draft-tokens: SGLang {} chooses "
      "{} for {} by itself (v0.5.2 chose {}; docs/sources.md#S-sglang-auto-draft)",
      release, shown(now), architecture, shown(pinned));
}

}  // namespace specsim
