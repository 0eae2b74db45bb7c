// The draft shape SGLang picks when a speculative command gives none (scenario/sglang_auto_draft.h):
// by release and target architecture, from --sglang-release or a pasted command's later flags,
// with a note where another release would choose otherwise; the pasted command's label names the
// release it is priced as.
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
  std::string note;   ///< the draft-shape note ("" when none)
  std::string label;  ///< pasted_command.stack ("" without a pasted command)
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
    if (n.get<std::string>().find("S-sglang-auto-draft") != std::string::npos) c.note = n.get<std::string>();
  if (j.at("pasted_command").is_object()) c.label = j.at("pasted_command").at("stack").get<std::string>();
  return c;
}

const std::vector<std::string> kQwen = {"--model-path", "qwen3-30b-a3b", "--tp-size", "2"};

std::vector<std::string> qwen(std::vector<std::string> more) {
  std::vector<std::string> a = kQwen;
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

std::vector<std::string> pasted_qwen(std::vector<std::string> more) {
  std::vector<std::string> a = {"--",
                                "python",
                                "-m",
                                "sglang.launch_server",
                                "--model-path",
                                "Qwen/Qwen3-30B-A3B",
                                "--tp",
                                "2",
                                "--speculative-algorithm",
                                "EAGLE3",
                                "--speculative-draft-model-path",
                                "qwen3-30b-a3b/eagle3"};
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("SGLang's own draft shape by release and architecture, as its server_args.py reads at each tag") {
  // Llama and Grok keep the tree in every release; DeepSeek-V3 and gpt-oss the chain
  for (const char* r : {"", "v0.5.7", "v0.5.8", "v0.5.18"}) {
    INFO(r);
    CHECK(sglang_auto_draft_shape("LlamaForCausalLM", r) == kTreeShape);
    CHECK(sglang_auto_draft_shape("Grok1ForCausalLM", r) == kTreeShape);
    CHECK(sglang_auto_draft_shape("DeepseekV3ForCausalLM", r) == kChainShape);
    CHECK(sglang_auto_draft_shape("GptOssForCausalLM", r) == kChainShape);
  }
  // DeepSeek-V3.2 was named in v0.5.3
  CHECK(sglang_auto_draft_shape("DeepseekV32ForCausalLM", "") == kTreeShape);
  CHECK(sglang_auto_draft_shape("DeepseekV32ForCausalLM", "v0.5.3") == kChainShape);
  // Qwen3 fell to "every other architecture": the tree up to v0.5.7, the chain from v0.5.8
  CHECK(sglang_auto_draft_shape("Qwen3MoeForCausalLM", "") == kTreeShape);
  CHECK(sglang_auto_draft_shape("Qwen3MoeForCausalLM", "v0.5.7") == kTreeShape);
  CHECK(sglang_auto_draft_shape("Qwen3MoeForCausalLM", "v0.5.8") == kChainShape);
  CHECK(sglang_auto_draft_shape("Qwen3ForCausalLM", "v0.5.18") == kChainShape);
  // GLM-4 MoE was named in v0.5.7
  CHECK(sglang_auto_draft_shape("Glm4MoeForCausalLM", "v0.5.6") == kTreeShape);
  CHECK(sglang_auto_draft_shape("Glm4MoeForCausalLM", "v0.5.7") == kChainShape);
}

TEST_CASE("the draft-shape note: a stated release against v0.5.2's choice, an unstated one against later releases'") {
  // stated: said only where it differs from v0.5.2's choice
  CHECK(sglang_auto_draft_note("LlamaForCausalLM", "v0.5.18", true, true).empty());
  CHECK(has(sglang_auto_draft_note("Qwen3MoeForCausalLM", "v0.5.9", true, true), "v0.5.2 chose (5, 4, 8)"));
  // pinned or a lower bound: said where a later release chooses otherwise, naming the first
  CHECK(has(sglang_auto_draft_note("Qwen3MoeForCausalLM", "", false, true), "from v0.5.8 SGLang chooses (3, 1, 4)"));
  CHECK(has(sglang_auto_draft_note("Glm4MoeForCausalLM", "v0.5.5", false, true), "from v0.5.7 SGLang chooses"));
  CHECK(sglang_auto_draft_note("Qwen3MoeForCausalLM", "v0.5.8", false, true).empty());
  CHECK(sglang_auto_draft_note("DeepseekV3ForCausalLM", "", false, true).empty());
  // a shape given in part says which parts are the release's
  CHECK(has(sglang_auto_draft_note("Qwen3MoeForCausalLM", "v0.5.9", true, false), "the parts of"));
}

TEST_CASE("a run with no draft shape takes its SGLang release's choice, from --sglang-release or the command's flags") {
  // the pinned release: the tree, and a note that v0.5.8 on chooses the chain
  Chosen c = chosen(kQwen);
  CHECK(c.shape == kTreeShape);
  CHECK(has(c.note, "from v0.5.8 SGLang chooses (3, 1, 4)"));
  // stated v0.5.7: the tree, as v0.5.2 chose: nothing to say
  c = chosen(qwen({"--sglang-release", "v0.5.7"}));
  CHECK(c.shape == kTreeShape);
  CHECK(c.note.empty());
  // stated v0.5.8: the chain, said against v0.5.2's
  c = chosen(qwen({"--sglang-release", "v0.5.8"}));
  CHECK(c.shape == kChainShape);
  CHECK(has(c.note, "v0.5.2 chose (5, 4, 8)"));
  // a shape given in part: the rest from the release's choice, said
  c = chosen(qwen({"--sglang-release", "v0.5.9", "--speculative-eagle-topk", "4"}));
  CHECK(c.shape == AutoDraftShape{3, 4, 4});
  CHECK(has(c.note, "the parts of"));
  // the whole shape given: the user's, nothing said
  c = chosen(qwen({"--sglang-release", "v0.5.9", "--speculative-num-steps", "5", "--speculative-eagle-topk", "4",
                   "--speculative-num-draft-tokens", "8"}));
  CHECK(c.shape == kTreeShape);
  CHECK(c.note.empty());
  // a Llama target keeps the tree in every release
  c = chosen({"--model-path", "llama-3.1-8b", "--sglang-release", "v0.5.18"});
  CHECK(c.shape == kTreeShape);
  CHECK(c.note.empty());
}

TEST_CASE("a pasted command takes the release its later flags date it to, and its label says which") {
  // no later flag: v0.5.2's terms, the label as before
  Chosen c = chosen(pasted_qwen({}));
  CHECK(c.label == "SGLang v0.5.2");
  CHECK(c.shape == kTreeShape);
  // a flag of v0.5.14 dates it to v0.5.14 or later: the chain, the label says it is a lower bound
  c = chosen(pasted_qwen({"--cuda-graph-max-bs-decode", "16"}));
  CHECK(c.label == "SGLang v0.5.14 or later");
  CHECK(c.shape == kChainShape);
  // --sglang-release beside it is the release, stated
  std::vector<std::string> stated = {"--sglang-release", "v0.5.9"};
  const std::vector<std::string> rest = pasted_qwen({});
  stated.insert(stated.end(), rest.begin(), rest.end());
  c = chosen(stated);
  CHECK(c.label == "SGLang v0.5.9");
  CHECK(c.shape == kChainShape);
  CHECK(has(c.note, "v0.5.2 chose (5, 4, 8)"));
}
