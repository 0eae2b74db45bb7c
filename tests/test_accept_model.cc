// The tree acceptance model against trees worked out by hand, SGLang's settings rule, the fit's
// round trips, and the engine's use of both (a chain stays the chain formula).
#include <catch2/catch.hpp>
#include <cmath>

#include "accept/accept_len.h"
#include "accept/fit.h"
#include "accept/tree_model.h"
#include "scenario/sglang_draft_rule.h"
#include "util/error.h"

using namespace specsim;
using namespace specsim::accept;

namespace {

// The same coverage row at every depth.
TreeAcceptance constant(std::vector<double> row, int depths = 8) {
  TreeAcceptance t;
  for (int d = 0; d < depths; ++d) t.coverage.push_back(row);
  return t;
}

}  // namespace

TEST_CASE("a chain of depth 3 with rate 0.5 accepts 1 + 0.5 + 0.25 + 0.125 = 1.875") {
  CHECK(tree_accept_len(constant({0.5}), 3, 1, 4) == Approx(1.875));
  CHECK(tree_accept_len(shaped_acceptance(0.5, 0.7), 3, 1, 4) == Approx(1.875));  // k > 1 unused by a chain
  // Per-depth rates multiply along the chain: 1 + 0.9 + 0.9*0.5 = 2.35.
  TreeAcceptance t;
  t.coverage = {{0.9}, {0.5}};
  CHECK(tree_accept_len(t, 2, 1, 3) == Approx(2.35));
}

TEST_CASE("a topk-2 tree by hand: coverage 0.6 at k 1, 0.8 at k 2 at every depth") {
  // Rank shares p(1) = 0.6, p(2) = 0.2. Depth 1: 0.6, 0.2. Depth 2 (children of both): 0.36,
  // 0.12 | 0.12, 0.04. Depth 3 expands the two best of depth 2 (0.36 and the first 0.12):
  // 0.216, 0.072 | 0.072, 0.024.
  const TreeAcceptance t = constant({0.6, 0.8});
  CHECK(tree_accept_len(t, 2, 2, 2) == Approx(1.6));                           // root + 0.6
  CHECK(tree_accept_len(t, 2, 2, 3) == Approx(1.96));                          // + 0.36: the chain
  CHECK(tree_accept_len(t, 2, 2, 4) == Approx(2.16));                          // + 0.2
  CHECK(tree_accept_len(t, 2, 2, 5) == Approx(2.28));                          // + 0.12
  CHECK(tree_accept_len(t, 2, 2, 5) > tree_accept_len(t, 2, 1, 3));            // a tree beats the chain
  CHECK(tree_accept_len(t, 3, 2, 5) == Approx(1 + 0.6 + 0.36 + 0.216 + 0.2));  // 2.376: the depth-3 node first
  CHECK(tree_accept_len(t, 3, 2, 7) == Approx(2.376 + 0.12 + 0.12));
  // All ten candidates: 1 + 0.8 (depth 1) + 0.64 (depth 2) + 0.384 (depth 3).
  CHECK(tree_accept_len(t, 3, 2, 11) ==
        Approx(1 + 0.6 + 0.2 + 0.36 + 0.12 + 0.12 + 0.04 + 0.216 + 0.072 + 0.072 + 0.024));
  // Every count at once agrees with one at a time.
  const auto lens = tree_accept_lens(t, 3, 2, 64);
  REQUIRE(lens.size() == 10);  // the pool: 2 + 2 * 4
  for (int n = 2; n <= 11; ++n) CHECK(lens[n - 2] == Approx(tree_accept_len(t, 3, 2, n)));
}

TEST_CASE("accept len never falls with more draft tokens, a wider topk or a higher rate") {
  for (int steps = 1; steps <= 6; ++steps)
    for (int topk = 2; topk <= 6; ++topk) {
      const auto lens = tree_accept_lens(shaped_acceptance(0.7, 0.5), steps, topk, 64);
      for (std::size_t i = 1; i < lens.size(); ++i) CHECK(lens[i] >= lens[i - 1]);
      CHECK(lens.back() <= steps + 1 + 1e-12);
    }
  double prev = 0;
  for (double a = 0.05; a < 1; a += 0.05) {
    const double l = tree_accept_len(shaped_acceptance(a, 0.5), 5, 4, 16);
    CHECK(l > prev);
    prev = l;
  }
}

TEST_CASE("SGLang's rule: topk 1 forces steps + 1 draft tokens; a tree draws from its candidate pool") {
  CHECK(sglang_accepts(3, 1, 4));
  CHECK_FALSE(sglang_accepts(3, 1, 5));
  CHECK(draft_shape_problem(3, 1, 5).find("forces num-draft-tokens = num-steps + 1 (4)") != std::string::npos);
  // Served beyond the search script's topk*steps+1: (3, 2, 8) and (5, 8, 64) ran on real servers.
  CHECK(sglang_accepts(3, 2, 8));
  CHECK(sglang_accepts(5, 8, 64));
  CHECK(sglang_accepts(3, 2, 11));  // pool 2 + 2 * 4 = 10
  CHECK_FALSE(sglang_accepts(3, 2, 12));
  CHECK(draft_shape_problem(3, 2, 12).find("at most that + 1 (11)") != std::string::npos);
  CHECK(sglang_accepts(1, 4, 5));  // one step: the pool is the topk first-level nodes
  CHECK_FALSE(sglang_accepts(1, 4, 6));
  CHECK(sglang_accepts(2, 4, 2));
  CHECK_FALSE(sglang_accepts(2, 4, 1));
  CHECK(max_draft_tokens(5, 8) == 41);
  CHECK(tree_pool_size(5, 8) == 8 + 4 * 64);
  // The rule's bound never exceeds what the drafting scores (torch.topk over the pool would fail).
  for (int s = 1; s <= 8; ++s)
    for (int k = 1; k <= 8; ++k) CHECK(max_draft_tokens(s, k) - 1 <= tree_pool_size(s, k));
}

TEST_CASE("one setting: the fitted rate reproduces its accept len") {
  for (const auto& [steps, topk, n, len] : std::vector<std::tuple<int, int, int, double>>{
           {3, 1, 4, 2.9}, {5, 4, 8, 3.6}, {5, 8, 32, 4.68}, {2, 2, 3, 1.5}}) {
    const AcceptFit f = fit_acceptance({{steps, topk, n, len, "test"}});
    CHECK_FALSE(f.beta_fitted);
    CHECK_FALSE(f.decay_fitted);
    CHECK(f.beta == kDefaultCoverageBeta);
    CHECK(f.points.at(0).fitted == Approx(len).margin(1e-6));
    CHECK(tree_accept_len(f.model, steps, topk, n) == Approx(len).margin(1e-6));
  }
  // A chain measurement inverts to the chain formula's rate.
  const AcceptFit c = fit_acceptance({{3, 1, 4, 2.5, "x"}});
  CHECK(c.rate == Approx(chain_accept_rate(2.5, 3)).epsilon(1e-6));
}

TEST_CASE("several settings: the fit recovers the rate, coverage exponent and decay it was made from") {
  const double a = 0.74, beta = 0.8, decay = 0.95;
  const TreeAcceptance truth = shaped_acceptance(a, beta, decay, kMaxDepth, 64);
  std::vector<AcceptObservation> obs;
  for (const auto& [s, k, n] :
       std::vector<std::tuple<int, int, int>>{{3, 1, 4}, {6, 1, 7}, {5, 4, 16}, {4, 8, 24}, {2, 4, 8}})
    obs.push_back({s, k, n, tree_accept_len(truth, s, k, n), "synthetic"});
  const AcceptFit f = fit_acceptance(obs);
  CHECK(f.beta_fitted);
  CHECK(f.decay_fitted);
  CHECK(f.rate == Approx(a).margin(0.005));
  CHECK(f.beta == Approx(beta).margin(0.03));
  CHECK(f.decay == Approx(decay).margin(0.005));
  CHECK(f.rms_error < 1e-3);
  // And predicts a setting it was not fitted to.
  CHECK(tree_accept_len(f.model, 8, 8, 64) == Approx(tree_accept_len(truth, 8, 8, 64)).margin(0.01));
}

TEST_CASE("the fit refuses settings SGLang does not run and impossible accept lens") {
  CHECK_THROWS_AS(fit_acceptance({{3, 1, 5, 2.0, "log:7"}}), InputError);
  CHECK_THROWS_AS(fit_acceptance({{3, 1, 4, 4.5, "log:7"}}), InputError);
  CHECK_THROWS_AS(fit_acceptance({{3, 1, 4, 0.9, "log:7"}}), InputError);
  CHECK_THROWS_AS(fit_acceptance({}), InputError);
  try {
    fit_acceptance({{3, 2, 12, 2.0, "bench.jsonl:3"}});  // pool 2 + 2 * 4 = 10: at most 11
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.where() == "bench.jsonl:3");
  }
}

TEST_CASE("engine: a chain keeps the chain formula, a tree of the same rate accepts more") {
  for (double a : {0.3, 0.6, 0.85})
    for (int s = 1; s <= 6; ++s) {
      CHECK(accept_len_at(a, s, 1, s + 1) == chain_accept_len(a, s));
      CHECK(accept_rate_at(chain_accept_len(a, s), s, 1, s + 1) == chain_accept_rate(chain_accept_len(a, s), s));
      CHECK(accept_len_at(a, s, 4, 4 * s + 1) > chain_accept_len(a, s));
      const double l = accept_len_at(a, s, 4, 2 * s + 1);
      CHECK(accept_rate_at(l, s, 4, 2 * s + 1) == Approx(a).margin(1e-6));
    }
}
