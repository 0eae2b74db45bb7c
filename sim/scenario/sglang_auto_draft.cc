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

std::string sglang_auto_draft_note(const std::string& architecture, const std::string& release, bool stated,
                                   bool none_given) {
  const std::string rel = release.empty() ? "v0.5.2" : release;
  const AutoDraftShape now = sglang_auto_draft_shape(architecture, release);
  const std::string what =
      none_given ? fmt::format(
                       "no --speculative-num-steps, --speculative-eagle-topk or "
                       "--speculative-num-draft-tokens: (steps, topk, draft tokens) = {}, SGLang {}'s own "
                       "choice for {}",
                       shown(now), rel, architecture)
                 : fmt::format(
                       "the parts of (steps, topk, draft tokens) not given are taken from {}, SGLang {}'s "
                       "own choice for {} (SGLang itself takes all three or none)",
                       shown(now), rel, architecture);
  constexpr const char* kSource = " (docs/sources.md#S-sglang-auto-draft)";
  if (stated) {  // --sglang-release: said where it differs from the pinned release's choice
    const AutoDraftShape pinned = sglang_auto_draft_shape(architecture, "");
    return now == pinned ? "" : what + fmt::format("; v0.5.2 chose {}", shown(pinned)) + kSource;
  }
  // the pinned release, or a lower bound from the command's later flags: a later release may choose otherwise
  const std::string newest = stack_flag_table("sglang").newer_release;
  for (int minor = 3; minor < 100; ++minor) {
    const std::string later = fmt::format("v0.5.{}", minor);
    if (!release_at_least(newest, later)) break;
    if (!release_at_least(later, rel)) continue;
    const AutoDraftShape then = sglang_auto_draft_shape(architecture, later);
    if (then != now)
      return what +
             fmt::format("; from {} SGLang chooses {} (--sglang-release {} or later prices that)", later, shown(then),
                         later) +
             kSource;
  }
  return "";
}

}  // namespace specsim
