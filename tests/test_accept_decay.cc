// A draft whose acceptance falls with depth (EAGLE-1): a_d = a_1 x decay^(d-1), from the draft's
// zoo profile (docs/acceptance.md#a-drafts-depth-decay). Values computed by hand.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "accept/accept_len.h"
#include "accept/fit.h"
#include "accept/tree_model.h"
#include "run_json.h"
#include "scenario/draft_acceptance.h"
#include "scenario/model_spec.h"
#include "test_util.h"
#include "util/error.h"

using namespace specsim;

TEST_CASE("a decayed chain: each depth's rate the one above times the decay, at most 1") {
  // a 0.8, decay 0.5, 3 steps: rates 0.8, 0.4, 0.2 -> 1 + 0.8 + 0.32 + 0.064
  CHECK(accept_len_at(0.8, 3, 1, 4, 0.5) == Approx(2.184));
  CHECK(accept_rate_at(2.184, 3, 1, 4, 0.5) == Approx(0.8).epsilon(1e-6));
  // decay 1 is the chain formula: (1 - 0.8^4) / 0.2
  CHECK(accept_len_at(0.8, 3, 1, 4, 1.0) == Approx(2.952));
  CHECK(accept_len_at(0.8, 3, 1, 4) == Approx(2.952));
  // a rate that would pass 1 is capped: a 0.9, decay 1.1: 0.9, 0.99, 1 -> 1 + 0.9 + 0.891 + 0.891
  CHECK(accept_len_at(0.9, 3, 1, 4, 1.1) == Approx(3.682));
  // the same accept len at 2 steps projects to less at 4 steps when the rate falls with depth
  const double a1 = accept_rate_at(2.27, 2, 1, 3, 0.878);
  CHECK(accept_len_at(a1, 2, 1, 3, 0.878) == Approx(2.27).epsilon(1e-6));
  CHECK(accept_len_at(a1, 4, 1, 5, 0.878) < accept_len_at(accept_rate_at(2.27, 2, 1, 3), 4, 1, 5) - 0.2);
  // trees take it through SGLang's draft tree model: a decay below 1 gives less
  CHECK(accept_len_at(0.7, 4, 4, 16, 0.8) < accept_len_at(0.7, 4, 4, 16));
}

TEST_CASE("the zoo's EAGLE-1 Llama-3.1-8B draft states its decay; drafts without a profile keep 1") {
  CHECK(draft_accept_decay(resolve_model_config("llama-3.1-8b/eagle1", "--speculative-draft-model-path")) ==
        Approx(0.878));
  CHECK(draft_accept_decay(resolve_model_config("llama-3.1-8b/eagle3", "--speculative-draft-model-path")) == 1.0);
}

TEST_CASE("a malformed draft acceptance profile is refused naming the file") {
  const std::string dir = test::fresh_dir();
  test::write_text(dir + "/config.json", "{}");
  test::write_text(dir + "/acceptance.json", R"({"depth_decay": {"value": 0.2, "source": "x"}})");
  CHECK_THROWS_AS(draft_accept_decay(dir + "/config.json"), InputError);
  test::write_text(dir + "/acceptance.json", R"({"depth_decay": 0.9})");
  CHECK_THROWS_AS(draft_accept_decay(dir + "/config.json"), InputError);
  test::write_text(dir + "/acceptance.json", "[1]");
  CHECK_THROWS_AS(draft_accept_decay(dir + "/config.json"), InputError);
}

TEST_CASE("run: --accept-rate with the EAGLE-1 draft is its depth-1 rate, falling by 0.878 a depth") {
  const nlohmann::json j = test::run_json(
      {"--model-path", "llama-3.1-8b", "--speculative-draft-model-path", "llama-3.1-8b/eagle1", "--hardware",
       "h100-sxm:nvswitch", "--tp-size", "1", "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "4",
       "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "5", "--accept-rate", "0.8"});
  // 1 + 0.8 + 0.8^2 x 0.878 + 0.8^3 x 0.878^3 + 0.8^4 x 0.878^6 = 1 + 0.8 + 0.56192 + 0.34654 + 0.18764
  CHECK(j["settings"]["accept_len"].get<double>() == Approx(2.8961).epsilon(1e-4));
}

TEST_CASE("tune's fit from one measured setting keeps the draft's own decay") {
  // One chain measured: 2 steps, accept len 2.184 - 0.064 = 2.12 at a 0.8, decay 0.5 (1 + 0.8 + 0.32).
  const accept::AcceptFit held = accept::fit_acceptance({{2, 1, 3, 2.12, "test"}}, 0.5);
  CHECK_FALSE(held.decay_fitted);
  CHECK(held.decay == 0.5);
  CHECK(held.rate == Approx(0.8).epsilon(1e-4));
  // carried to 3 steps with the decay: 2.184 (by hand above); without it one rate a at every depth,
  // 1 + a + a^2 = 2.12: a = (sqrt(5.48) - 1) / 2 = 0.67046, 3 steps 2.12 + a^3 = 2.4214
  CHECK(accept::tree_accept_len(held.model, 3, 1, 4) == Approx(2.184).epsilon(1e-3));
  const accept::AcceptFit flat = accept::fit_acceptance({{2, 1, 3, 2.12, "test"}});
  CHECK(accept::tree_accept_len(flat.model, 3, 1, 4) == Approx(2.4214).epsilon(1e-3));
  CHECK(held.note.find("the draft's own depth_decay") != std::string::npos);
  CHECK_THROWS_AS(accept::fit_acceptance({{2, 1, 3, 2.12, "test"}}, 0.2), InputError);
}
