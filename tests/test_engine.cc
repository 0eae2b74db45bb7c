// The scenario engine: the built-in scenario's anchoring, tok/s and break-even algebra.
#include <catch2/catch.hpp>

#include "cost/allreduce_fusion.h"
#include "engine/op_cost.h"
#include "evaluate/evaluate_scenario.h"
#include "report/report.h"
#include "scenario/resolve.h"
#include "util/error.h"

using namespace specsim;

namespace {
const CycleResult& backend(const ScenarioResult& r, const std::string& kind) {
  for (const auto& c : r.results)
    if (c.backend.kind_name() == kind) return c;
  throw std::runtime_error("no backend " + kind);
}
}  // namespace

TEST_CASE("the built-in scenario reproduces its three measurements with NCCL") {
  const Scenario s = resolve_scenario(RunArgs{});
  const ScenarioResult r = run_scenario(s);
  const CycleResult& nccl = backend(r, "nccl");
  CHECK(nccl.baseline_tok_s == Approx(89.5).epsilon(1e-9));
  CHECK(nccl.spec_tok_s == Approx(54.1).epsilon(1e-9));
  const PhaseTiming* verify = nccl.phase(PhaseKind::Verify);
  REQUIRE(verify);
  CHECK_FALSE(verify->graph);  // verify ran eagerly in the measured deployment
  CHECK(verify->allreduce_count == 123);
  CHECK(verify->allreduce_us / verify->allreduce_count == Approx(200.0).epsilon(1e-9));
  // The implied accept len lies in [1, N] and the cycle is slower than break-even.
  CHECK(r.accept_len > 1.0);
  CHECK(r.accept_len < 3.0);
  CHECK(nccl.breakeven_accept_len > r.accept_len);
  // The custom kernel is evaluated beside it and is faster.
  const CycleResult& custom = backend(r, "custom");
  CHECK(custom.refused.empty());
  CHECK(custom.cycle_us < nccl.cycle_us);
}

TEST_CASE("tok/s and break-even algebra") {
  const ScenarioResult r = run_scenario(resolve_scenario(RunArgs{}));
  for (const auto& c : r.results) {
    CHECK(c.spec_tok_s == Approx(1.0 * c.accept_len * 1e6 / c.cycle_us));
    CHECK(c.baseline_tok_s == Approx(1e6 / c.baseline_step_us));
    CHECK(c.breakeven_accept_len * c.baseline_step_us == Approx(c.cycle_us));
    CHECK(c.speedup == Approx(c.spec_tok_s / c.baseline_tok_s));
    double cycle = 0;
    for (const auto& p : c.phases) {
      CHECK(p.us == Approx(p.gemm_us + p.attention_us + p.allreduce_us + p.allgather_us + p.other_us + p.launch_us +
                           p.overhead_us + p.spec_overhead_us));
      if (p.kind != PhaseKind::BaselineDecode) cycle += p.count * p.us;
    }
    CHECK(cycle == Approx(c.cycle_us));
  }
}

TEST_CASE("what-ifs project from the anchors") {
  RunArgs graphs;
  graphs.eager_phases = "none";  // CUDA graphs on verify
  const ScenarioResult g = run_scenario(resolve_scenario(graphs));
  const ScenarioResult base = run_scenario(resolve_scenario(RunArgs{}));
  CHECK(backend(g, "nccl").cycle_us < backend(base, "nccl").cycle_us);
  CHECK(g.accept_len == Approx(base.accept_len));

  RunArgs fixed;
  fixed.allreduce = {"fixed:40"};
  const ScenarioResult f = run_scenario(resolve_scenario(fixed));
  CHECK(f.results.size() == 1);
  CHECK(f.results[0].phase(PhaseKind::Verify)->allreduce_us == Approx(123 * 40.0));

  RunArgs four;
  four.num_draft_tokens = 4;  // topk 1: steps follow (3)
  const Scenario s4 = resolve_scenario(four);
  CHECK(s4.run.num_steps == 3);
  const ScenarioResult r4 = run_scenario(s4);
  CHECK(r4.accept_len > base.accept_len);  // one more draft token, same per-token acceptance
  CHECK(r4.accept_source.find("projected") != std::string::npos);
}

TEST_CASE("GeForce cards cannot run the custom kernel: refused visibly, or an error when asked for") {
  RunArgs a;
  a.model_path = "llama-3.1-8b";  // DeepSeek-V3 does not fit eight 24 GB cards
  a.tp_size = 2;
  a.accept_len = 2;
  a.hardware = "rtx-4090:pcie-switch";
  const ScenarioResult r = run_scenario(resolve_scenario(a));
  CHECK_FALSE(backend(r, "custom").refused.empty());
  a.allreduce = {"custom"};
  CHECK_THROWS_AS(run_scenario(resolve_scenario(a)), InputError);
}

TEST_CASE("a user's own model needs an acceptance figure") {
  RunArgs a;
  a.model_path = "llama-3.1-8b";
  a.tp_size = 2;
  CHECK_THROWS_AS(run_scenario(resolve_scenario(a)), InputError);
  a.accept_len = 3.0;
  const ScenarioResult r = run_scenario(resolve_scenario(a));
  CHECK(r.accept_len == 3.0);
  CHECK(r.results[0].spec_tok_s > 0);
}

TEST_CASE("JSON report keeps the contract") {
  const Scenario s = resolve_scenario(RunArgs{});
  const auto j = report_json(s, run_scenario(s));
  for (const char* k : {"model", "hardware", "settings", "scenarios"}) CHECK(j.contains(k));
  REQUIRE(j["scenarios"].size() == 2);
  for (const auto& sc : j["scenarios"]) {
    CHECK((sc["allreduce"] == "nccl" || sc["allreduce"] == "custom"));
    for (const char* k : {"step_us", "tok_per_s"}) CHECK(sc["baseline"].contains(k));
    for (const char* k : {"cycle_us", "tok_per_s", "accept_len", "speedup", "breakeven_accept_len"})
      CHECK(sc["spec"].contains(k));
    std::vector<std::string> names;
    for (const auto& p : sc["phases"]) {
      names.push_back(p["name"]);
      for (const char* k :
           {"name", "count", "tokens", "us", "gemm_us", "attention_us", "allreduce_us", "allreduce_count",
            "allreduce_bytes", "allgather_count", "other_us", "launch_us", "switch_us"})
        CHECK(p.contains(k));
      // graph phases: the switch gaps are inside launch_us, on top of the one graph launch
      if (p["mode"] == "graph") CHECK(p["launch_us"].get<double>() >= p["switch_us"].get<double>());
      if (p["mode"] == "graph") CHECK(p["switch_us"].get<double>() > 0);
    }
    CHECK(names == std::vector<std::string>{"draft_decode", "verify", "draft_extend", "baseline_decode"});
  }
  const auto& verify = j["scenarios"][0]["phases"][1];
  CHECK(verify["allreduce_count"] == 123);
  CHECK(verify["allreduce_bytes"].get<double>() == Approx(123.0 * 43008));
  CHECK(verify["allgather_count"] == 1);
}

TEST_CASE("custom:fused fuses only the boundaries its kernel runs: 1 MiB, hidden a multiple of 8 up to its cap") {
  RunArgs a;
  a.allreduce = {"custom:fused"};
  const Scenario s = resolve_scenario(a);
  const CostContext ctx{&s.hw, &s.run, parse_allreduce("custom:fused"), Anchors{}, 8};
  const AllReduceFusionModel& m = allreduce_fusion_model();
  auto boundary = [](OpKind kind, double tokens, double hidden) {
    Op op;
    op.kind = kind;
    op.fusable_boundary = true;
    op.rows = static_cast<std::uint16_t>(tokens);
    op.comm_bytes = kind == OpKind::AllReduce ? tokens * hidden * 2 : 0;
    op.bytes = kind == OpKind::Norm ? 4 * tokens * hidden * 2 : 0;
    return op;
  };
  auto fused = [&](double tokens, double hidden) {
    const bool norm_gone = fused_away(boundary(OpKind::Norm, tokens, hidden), ctx);
    Op plain = boundary(OpKind::AllReduce, tokens, hidden);
    plain.fusable_boundary = false;
    const double extra =
        op_cost(boundary(OpKind::AllReduce, tokens, hidden), ctx, true).gpu_us - op_cost(plain, ctx, true).gpu_us;
    CHECK(norm_gone == (extra > 0));  // the norm goes exactly where the all-reduce takes the fused price
    return norm_gone;
  };
  CHECK(fused(3, 7168));
  CHECK(fused(4, m.custom_max_hidden));
  CHECK_FALSE(fused(4, m.custom_max_hidden + 8));  // over the kernel's widest row
  CHECK_FALSE(fused(4, 7172));                     // not whole 16-byte vectors
  CHECK_FALSE(fused(64, 16384));                   // 2 MiB: over the flag-free slots
  CHECK(m.custom_max_bytes == 64 * 8192 * 2);
}

TEST_CASE("custom:fused prices split's extra below two_shot_min_rows rows and two-shot's from there") {
  const AllReduceFusionModel& m = allreduce_fusion_model();
  REQUIRE(m.custom_two_shot_min_rows == 8);
  REQUIRE(m.custom_two_shot_extra_us != m.custom_extra_us);
  // the fused kernel's extra over the plain custom all-reduce, summed over a phase's all-reduces
  auto extra = [](int batch, PhaseKind kind) {
    RunArgs a;
    a.batch_size = batch;
    a.allreduce = {"custom", "custom:fused"};
    const ScenarioResult r = run_scenario(resolve_scenario(a));
    const PhaseTiming* fused = nullptr;
    const PhaseTiming* plain = nullptr;
    for (const auto& c : r.results) {
      REQUIRE(c.refused.empty());
      (c.backend.fused_norm ? fused : plain) = c.phase(kind);
    }
    REQUIRE(fused);
    REQUIRE(plain);
    return fused->allreduce_us - plain->allreduce_us;
  };
  // the built-in scenario verifies 3 tokens a request: 3 rows at bs 1 (split), 12 at bs 4 (two-shot);
  // its plain decode step at bs 4 has 4 rows (split): the same boundaries in every phase
  const double verify_bs1 = extra(1, PhaseKind::Verify), verify_bs4 = extra(4, PhaseKind::Verify);
  const double decode_bs4 = extra(4, PhaseKind::BaselineDecode);
  CHECK(verify_bs1 > 0);
  CHECK(verify_bs4 / verify_bs1 == Approx(m.custom_two_shot_extra_us / m.custom_extra_us));
  CHECK(decode_bs4 == Approx(verify_bs1));
}
