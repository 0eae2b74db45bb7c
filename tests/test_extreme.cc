// Extreme but legal inputs give finite, sane results or a clear refusal: no overflow, no NaN.
#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>

#include "evaluate/evaluate_scenario.h"
#include "scenario/resolve.h"
#include "test_util.h"
#include "util/error.h"

using namespace specsim;

namespace {
void all_finite(const ScenarioResult& r) {
  for (const auto& c : r.results) {
    if (!c.refused.empty()) continue;
    CHECK(std::isfinite(c.cycle_us));
    CHECK(std::isfinite(c.spec_tok_s));
    CHECK(c.spec_tok_s > 0);
    CHECK(std::isfinite(c.baseline_tok_s));
    for (const auto& p : c.phases) {
      CHECK(std::isfinite(p.us));
      CHECK(p.us > 0);
    }
  }
}
}  // namespace

TEST_CASE("batch 4096: finite, and the custom kernel refuses payloads over its buffer") {
  RunArgs a;
  a.model_path = "llama-3.1-8b";  // small enough that 4096 requests' KV cache fits
  a.tp_size = 8;
  a.accept_len = 2;
  a.batch_size = 4096;
  a.context_len = 16;
  a.cuda_graph_max_bs = 8192;
  const ScenarioResult r = run_scenario(resolve_scenario(a));
  all_finite(r);
  bool custom_refused = false;
  for (const auto& c : r.results) custom_refused |= c.backend.kind_name() == "custom" && !c.refused.empty();
  CHECK(custom_refused);
}

TEST_CASE("tp 64 is refused clearly on an 8-GPU box") {
  RunArgs a;
  a.tp_size = 64;
  try {
    resolve_scenario(a);
    FAIL("accepted");
  } catch (const InputError& e) {
    CHECK(e.where() == "--tp-size");
  }
}

TEST_CASE("a 1000-layer model evaluates to finite numbers") {
  const std::string dir = test::fresh_dir();
  auto cfg = nlohmann::json::parse(test::slurp(test::models_path("llama-3.1-8b/config.json")));
  cfg["num_hidden_layers"] = 1000;
  test::write_text(dir + "/config.json", cfg.dump());
  RunArgs a;
  a.model_path = dir;
  a.draft_model_path = test::models_path("llama-3.1-8b/eagle3/config.json");
  a.tp_size = 8;
  a.accept_len = 2.5;
  const Scenario s = resolve_scenario(a);
  const ScenarioResult r = run_scenario(s);
  all_finite(r);
  CHECK(r.plan.find(PhaseKind::Verify)->count_of(OpKind::AllReduce) == 2001);
}
