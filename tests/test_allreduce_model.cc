// The all-reduce backend interface: the built-ins answer through it, and a backend added by a
// test alone (no engine file touched) is costed, described, refused and swept like the others.
#include <catch2/catch.hpp>

#include "cost/allreduce_backends.h"
#include "cost/custom_ar_model.h"
#include "cost/nccl_model.h"
#include "engine/op_cost.h"
#include "evaluate/evaluate_scenario.h"
#include "scenario/resolve.h"
#include "sweep/sweep.h"
#include "util/error.h"

using namespace specsim;

namespace {

// A made-up backend: latency + bytes at a flat bandwidth; refuses worlds above 4.
class LinearAllReduce final : public AllReduceModel {
 public:
  double time_us(const AllReduceQuery& q) const override { return 3.0 + q.bytes / 1e4; }
  double host_us(const AllReduceQuery&) const override { return 1.5; }
  std::string describe(const AllReduceQuery& q) const override { return "linear at " + std::to_string(int(q.bytes)); }
  std::string refusal(const AllReduceQuery& q) const override { return q.world > 4 ? "at most 4 ranks" : ""; }
};

void register_linear_once() {
  static const bool done = [] {
    register_allreduce_backend("linear", [] { return std::make_unique<LinearAllReduce>(); });
    return true;
  }();
  (void)done;
}

RunArgs llama8b(int tp) {
  RunArgs a;
  a.model_path = "llama-3.1-8b";
  a.hardware = "h200:nvswitch";
  a.tp_size = tp;
  a.accept_len = 3.0;
  return a;
}

}  // namespace

TEST_CASE("built-in backends answer through the interface with their own models") {
  const Hardware hw = load_hardware("rtx-pro-6000:pcie-numa", 8);
  NcclSettings n;
  const AllReduceChoice nccl = parse_allreduce("nccl"), custom = parse_allreduce("custom"),
                        fixed = parse_allreduce("fixed:40");
  const AllReduceQuery q{43008, 8, true, &hw, &n, &nccl};
  CHECK(allreduce_model(nccl).time_us(q) == nccl_allreduce(43008, 8, hw, n).us);
  CHECK(allreduce_model(nccl).takes_nccl_anchors());
  AllReduceQuery qc = q;
  qc.choice = &custom;
  CHECK(allreduce_model(custom).time_us(qc) == custom_allreduce(43008, 8, hw, "auto").us);
  CHECK_FALSE(allreduce_model(custom).takes_nccl_anchors());
  AllReduceQuery qf = q;
  qf.choice = &fixed;
  CHECK(allreduce_model(fixed).time_us(qf) == 40.0);
  // The custom kernel's limits come from one place: 9 ranks and 8 MiB + 1 are refused.
  qc.world = 9;
  CHECK(allreduce_model(custom).refusal(qc).find("2..8") != std::string::npos);
  qc.world = 8;
  qc.bytes = 8.0 * 1024 * 1024 + 1;
  CHECK(allreduce_model(custom).refusal(qc).find("8 MiB") != std::string::npos);
}

TEST_CASE("each backend's properties come from its model, not from its kind") {
  const auto& nccl = allreduce_model(parse_allreduce("nccl"));
  const auto& custom = allreduce_model(parse_allreduce("custom:two-shot"));
  const auto& fixed = allreduce_model(parse_allreduce("fixed:40@verify"));
  CHECK(nccl.floored());
  CHECK(custom.floored());
  CHECK_FALSE(fixed.floored());  // a stated latency is taken as given
  CHECK(nccl.gpu_runner() == GpuRunner::Nccl);
  CHECK(custom.gpu_runner() == GpuRunner::Custom);
  CHECK(fixed.gpu_runner() == GpuRunner::None);
  CHECK(nccl.replayable());
  CHECK_FALSE(fixed.replayable());
  CHECK(nccl.fittable());
  CHECK(custom.fittable());
  CHECK_FALSE(fixed.fittable());
  CHECK(fixed.no_kernel_note() == "nothing to verify: a fixed latency, no kernel");
  // A backend that states nothing is a floored cost model with no GPU kernel, never fitted.
  register_linear_once();
  const auto& linear = allreduce_model(parse_allreduce("linear"));
  CHECK(linear.floored());
  CHECK(linear.gpu_runner() == GpuRunner::None);
  CHECK_FALSE(linear.fittable());
  CHECK(linear.no_kernel_note() == "not verified: a cost model with no GPU kernel here");
}

TEST_CASE("the floor applies as the backend says: a fixed latency below the kernel minimum stays") {
  const Hardware hw = load_hardware("h200:nvswitch", 8);
  RunSpec run;
  CostContext ctx{&hw, &run, parse_allreduce("fixed:0.1"), Anchors{}, 8};
  CHECK(allreduce_us(1024, ctx, true) == 0.1);
  ctx.backend = parse_allreduce("nccl");
  CHECK(allreduce_us(1024, ctx, true) >= hw.gpu.kernel_min_us);
}

TEST_CASE("a backend added through the interface alone runs in a scenario and a sweep") {
  register_linear_once();
  RunArgs a = llama8b(4);
  a.allreduce = {"linear"};
  const ScenarioResult r = run_scenario(resolve_scenario(a));
  REQUIRE(r.results.size() == 1);
  const CycleResult& c = r.results[0];
  CHECK(c.backend.label() == "linear");
  CHECK(c.refused.empty());
  const PhaseTiming* v = c.phase(PhaseKind::Verify);
  REQUIRE(v);
  // Every all-reduce of the verify costs 3 us + bytes / 1e4 (the same payload each time).
  const double each = v->allreduce_bytes / v->allreduce_count;
  CHECK(v->allreduce_us == Approx(v->allreduce_count * (3.0 + each / 1e4)));
  CHECK(c.backend_detail == "linear at " + std::to_string(int(each)));

  // Its refusal is the engine's refusal: an error naming --allreduce when asked for by name.
  RunArgs eight = llama8b(8);
  eight.allreduce = {"linear"};
  try {
    run_scenario(resolve_scenario(eight));
    FAIL("expected a refusal");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("linear all-reduce refused: at most 4 ranks") != std::string::npos);
    CHECK(e.where() == "--allreduce");
  }

  // A sweep over tp 2, 4, 8 evaluates it at 2 and 4 and skips 8 with the reason.
  sweep::SweepInput in;
  in.base = llama8b(2);
  in.grid.tp = {2, 4, 8};
  in.grid.allreduce = {parse_allreduce("linear")};
  const auto s = sweep::run_sweep(in);
  CHECK(s.evaluated == 2);
  REQUIRE(s.skipped.size() == 1);
  CHECK(s.skipped[0].reason.find("at most 4 ranks") != std::string::npos);
}

TEST_CASE("an unknown or clashing backend name is bad input on --allreduce") {
  RunArgs a = llama8b(2);
  a.allreduce = {"nosuchbackend"};
  try {
    run_scenario(resolve_scenario(a));
    FAIL("expected an error");
  } catch (const InputError& e) {
    CHECK(e.where() == "--allreduce");
    CHECK(std::string(e.what()).find("unknown all-reduce 'nosuchbackend'") != std::string::npos);
  }
  CHECK_THROWS_AS(register_allreduce_backend("nccl", [] { return std::make_unique<LinearAllReduce>(); }), InputError);
  register_linear_once();
  CHECK_THROWS_AS(register_allreduce_backend("linear", [] { return std::make_unique<LinearAllReduce>(); }), InputError);
  CHECK(parse_allreduce("Nccl").kind == AllReduceChoice::Kind::Nccl);  // a name in any case is that name
  CHECK(parse_allreduce("Custom:Fused").fused_norm);
  CHECK_THROWS_AS(parse_allreduce("fixed"), InputError);
}
