// The acceptance model against published accept lengths at several settings of one model
// (traces/published-acceptance/): fitted to one setting, it must land on the others.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "accept/fit.h"
#include "accept/tree_model.h"
#include "test_util.h"

using namespace specsim::accept;
using nlohmann::json;
using specsim::test::slurp;
using specsim::test::traces_path;

namespace {

json published(const std::string& name) {
  const std::string text = slurp(traces_path("published-acceptance/" + name));
  REQUIRE_FALSE(text.empty());
  const json j = json::parse(text);
  REQUIRE(j.at("source").get<std::string>().rfind("https://github.com/", 0) == 0);
  REQUIRE_FALSE(j.at("quote").get<std::string>().empty());
  return j;
}

AcceptObservation observation(const json& s) {
  return {s.at("steps"), s.at("topk"), s.at("draft_tokens"), s.at("accept_len"), "published"};
}

}  // namespace

TEST_CASE("DeepSeek-V3 NextN in SGLang: the chain's 1.9 predicts the topk-4 tree's stated 2.5-3") {
  const json j = published("sglang-pr3582-deepseek-v3-nextn.json");
  const auto& chain = j["settings"][0];
  const auto& tree = j["settings"][1];
  const AcceptFit f = fit_acceptance({observation(chain)});
  const double predicted = tree_accept_len(f.model, tree["steps"], tree["topk"], tree["draft_tokens"]);
  INFO("predicted " << predicted);
  CHECK(predicted >= tree["accept_len_low"].get<double>());
  CHECK(predicted <= tree["accept_len_high"].get<double>());
}

TEST_CASE("Qwen3.6 MTP chains: one depth's accept len predicts the deeper chains within 3%") {
  const json j = published("ik-llama-pr2156-qwen3.6-mtp.json");
  const auto& s = j["settings"];
  const AcceptFit one = fit_acceptance({observation(s[0])});
  for (std::size_t i = 1; i < s.size(); ++i) {
    const double predicted = tree_accept_len(one.model, s[i]["steps"], 1, s[i]["draft_tokens"]);
    const double stated = s[i]["accept_len"];
    INFO("steps " << s[i]["steps"] << ": predicted " << predicted << ", stated " << stated);
    CHECK(std::abs(predicted - stated) / stated < 0.03);
  }
  // All three together: the per-depth decay is fitted and the fit closes to rounding.
  const AcceptFit all = fit_acceptance({observation(s[0]), observation(s[1]), observation(s[2])});
  CHECK(all.decay_fitted);
  CHECK(all.decay < 1.0);  // later tokens are accepted less often, as the stated rates fall
  CHECK(all.rms_error < 0.01);
}
