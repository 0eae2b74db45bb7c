// A draft tree's candidates for one position route partly alike: the verify's MoE layers read the
// experts of fewer independent tokens (docs/model.md#moe-tree-routing). Values computed by hand.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "plan/cycle_plan.h"
#include "plan/tree_routing.h"
#include "spec_run.h"
#include "test_util.h"

using namespace specsim;
using specsim::test::spec_run;

namespace {

// The routed experts one MoE layer of phase `kind` reads (its moe_w13).
double moe_experts(const RunSpec& run, PhaseKind kind = PhaseKind::Verify) {
  const std::string cfg = resolve_model_config("qwen3-30b-a3b", "--model-path");
  const ModelSpec target = model_from_config(cfg, "--model-path");
  const ModelSpec draft = model_from_config(zoo_draft_config(cfg), "draft");
  const CyclePlan plan = build_plan(target, &draft, run);
  for (const auto& b : plan.find(kind)->blocks)
    for (const auto& o : b.ops)
      if (std::string(o.name) == "moe_w13") return o.experts;
  return -1;
}

}  // namespace

TEST_CASE("tree routed tokens: one token a position on its own, further candidates share the overlap") {
  // (steps 3, 8 draft tokens): 4 positions (root + 3 steps), 4 further candidates.
  CHECK(tree_routed_tokens(8, 3, 0.5) == Approx(4 + 4 * 0.5));  // 6
  CHECK(tree_routed_tokens(8, 3, 0.0) == Approx(8.0));          // independent: the model before
  CHECK(tree_routed_tokens(8, 3, 1.0) == Approx(4.0));          // as one token a position
  // (7, 10, 64): 8 positions, 56 further candidates: 8 + 56 x 0.75 = 50.
  CHECK(tree_routed_tokens(64, 7, 0.25) == Approx(50.0));
  // Chains (draft tokens = steps + 1) and plain decode are unchanged whatever the overlap.
  CHECK(tree_routed_tokens(4, 3, 1.0) == Approx(4.0));
  CHECK(tree_routed_tokens(1, 0, 1.0) == Approx(1.0));
  // Fewer draft tokens than the depth: each its own position.
  CHECK(tree_routed_tokens(4, 7, 0.9) == Approx(4.0));
  CHECK(tree_routed_tokens(0, 3, 0.5) == 0.0);
}

TEST_CASE("the shipped overlap is the labelled guess in models/kernels/moe_tree_routing.json") {
  // the hand-computed plan values below assume it
  CHECK(tree_alternative_overlap() == Approx(0.5));
}

TEST_CASE("verify of a Qwen3-30B-A3B draft tree reads the experts of its independent tokens") {
  // 128 experts, top-8: a token misses a given expert with probability 120/128 = 0.9375.
  // (3, 2, 8) at bs 1: 6 independent tokens: 128 x (1 - 0.9375^6) = 128 x (1 - 0.678934) = 41.097
  // (uniformly routed independent tokens, the model before: 8 -> 128 x (1 - 0.596727) = 51.62).
  CHECK(moe_experts(spec_run(4, 1, 3, 2, 8)) == Approx(41.097).epsilon(1e-4));
  // bs 2: the requests route apart, 12 independent tokens: 128 x (1 - 0.460951) = 69.00.
  CHECK(moe_experts(spec_run(4, 2, 3, 2, 8)) == Approx(68.998).epsilon(1e-4));
  // A chain (3, 1, 4) keeps its 4 tokens: 128 x (1 - 0.772476) = 29.12.
  CHECK(moe_experts(spec_run(4, 1, 3, 1, 4)) == Approx(29.123).epsilon(1e-4));
  // Plain decode at bs 1 (the same plan's baseline step): one token's 8 experts.
  CHECK(moe_experts(spec_run(4, 1, 3, 2, 8), PhaseKind::BaselineDecode) == Approx(8.0));
  // ... and at bs 2 two independent tokens: 128 x (1 - 0.9375^2) = 15.5.
  CHECK(moe_experts(spec_run(4, 2, 3, 2, 8), PhaseKind::BaselineDecode) == Approx(15.5));
}
