// The draft shape SGLang picks when a speculative command gives none (scenario/sglang_auto_draft.h):
// by release and target architecture, from --sglang-release or a pasted command's later flags,
// with a note where the release's choice differs from v0.5.2's.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "scenario/sglang_auto_draft.h"
#include "test_util.h"

using namespace specsim;
using namespace specsim::test;
using nlohmann::json;

namespace {

const AutoDraftShape kTreeShape{5, 4, 8};
const AutoDraftShape kChainShape{3, 1, 4};

struct Chosen {
  AutoDraftShape shape;
  bool noted = false;
};

Chosen chosen(const std::vector<std::string>& args) {
  // --json before a pasted command (everything after -- is the command's)
  std::vector<std::string> a = {"run", "--hardware", "h100-sxm:nvswitch", "--accept-len", "2.5", "--json"};
  a.insert(a.end(), args.begin(), args.end());
  const CliResult r = run_specsim(a);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  const json& st = j.at("settings");
  Chosen c{{st.at("speculative_num_steps").get<int>(), st.at("speculative_eagle_topk").get<int>(),
            st.at("speculative_num_draft_tokens").get<int>()}};
  for (const auto& n : j.at("notes"))
    c.noted |= n.get<std::string>().find("chooses") != std::string::npos &&
               n.get<std::string>().find("by itself") != std::string::npos;
  return c;
}

}  // namespace

TEST_CASE("SGLang's own draft shape by release and architecture, as its server_args.py reads at each tag") {
  // Llama keeps the tree in every release; DeepSeek-V3 and gpt-oss the chain
  for (const char* r : {"", "v0.5.7", "v0.5.8", "v0.5.18"}) {
    INFO(r);
    CHECK(sglang_auto_draft_shape("LlamaForCausalLM", r) == kTreeShape);
    CHECK(sglang_auto_draft_shape("DeepseekV3ForCausalLM", r) == kChainShape);
    CHECK(sglang_auto_draft_shape("GptOssForCausalLM", r) == kChainShape);
  }
  // Qwen3 fell to "every other architecture": the tree up to v0.5.7, the chain from v0.5.8
  CHECK(sglang_auto_draft_shape("Qwen3MoeForCausalLM", "") == kTreeShape);
  CHECK(sglang_auto_draft_shape("Qwen3MoeForCausalLM", "v0.5.7") == kTreeShape);
  CHECK(sglang_auto_draft_shape("Qwen3MoeForCausalLM", "v0.5.8") == kChainShape);
  CHECK(sglang_auto_draft_shape("Qwen3ForCausalLM", "v0.5.18") == kChainShape);
  // GLM-4 MoE was named in v0.5.7
  CHECK(sglang_auto_draft_shape("Glm4MoeForCausalLM", "v0.5.6") == kTreeShape);
  CHECK(sglang_auto_draft_shape("Glm4MoeForCausalLM", "v0.5.7") == kChainShape);
  // a note only where the release's choice differs from v0.5.2's
  CHECK(sglang_auto_draft_note("Qwen3MoeForCausalLM", "").empty());
  CHECK(sglang_auto_draft_note("LlamaForCausalLM", "v0.5.18").empty());
  CHECK(sglang_auto_draft_note("Qwen3MoeForCausalLM", "v0.5.9").find("(3, 1, 4)") != std::string::npos);
}

TEST_CASE("a run with no draft shape takes its SGLang release's choice, from --sglang-release or the command's flags") {
  const std::vector<std::string> qwen = {"--model-path", "qwen3-30b-a3b", "--tp-size", "2"};
  auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> a = qwen;
    a.insert(a.end(), more.begin(), more.end());
    return a;
  };
  // the pinned release and v0.5.7: the tree, no note
  Chosen c = chosen(qwen);
  CHECK(c.shape == kTreeShape);
  CHECK_FALSE(c.noted);
  c = chosen(with({"--sglang-release", "v0.5.7"}));
  CHECK(c.shape == kTreeShape);
  CHECK_FALSE(c.noted);
  // v0.5.8 on: the chain, said
  c = chosen(with({"--sglang-release", "v0.5.8"}));
  CHECK(c.shape == kChainShape);
  CHECK(c.noted);
  // a flag given is the user's: no auto choice, no note
  c = chosen(with({"--sglang-release", "v0.5.9", "--speculative-eagle-topk", "4"}));
  CHECK(c.shape.topk == 4);
  CHECK_FALSE(c.noted);
  // a pasted command dated by a later flag (v0.5.14) takes that release's choice
  c = chosen({"--", "python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-30B-A3B", "--tp", "2",
              "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "qwen3-30b-a3b/eagle3",
              "--cuda-graph-max-bs-decode", "16"});
  CHECK(c.shape == kChainShape);
  CHECK(c.noted);
  // a Llama target keeps the tree in every release
  c = chosen({"--model-path", "llama-3.1-8b", "--sglang-release", "v0.5.18"});
  CHECK(c.shape == kTreeShape);
  CHECK_FALSE(c.noted);
}
