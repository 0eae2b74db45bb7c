// `specsim check --replay` without a GPU: baselines of the wrong kind are refused, a replay
// baseline with no GPU visible is one `error:` line naming no GPU (exit 2), and the CPU half
// (replay-report comparison, the plan's distinct all-reduces, the verification lines) is right.
// The GPU half is tests/gpu/test_check_replay.cc.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "check/check_replay.h"
#include "evaluate/evaluate_scenario.h"
#include "replay_report/replay_report.h"
#include "scenario/resolve.h"
#include "test_util.h"
#include "util/error.h"

using namespace specsim;
using namespace specsim::test;
using nlohmann::json;

namespace {

RunArgs llama_tp(int tp) {
  RunArgs a;
  a.model_path = "llama-3.1-8b";
  a.tp_size = tp;
  a.accept_len = 3;
  return a;
}

/// A replay report of the real shape for `args`, with made-up measured times (100, 110, ... us).
json fake_replay_report(const RunArgs& args) {
  const Scenario s = resolve_scenario(args);
  const ScenarioResult r = run_scenario(s);
  ReplayMeasurement m;
  m.device = "NVIDIA H200";
  m.iters = 5, m.warmup = 2;
  double us = 100;
  for (const auto& p : r.plan.phases) {
    PhaseMeasurement pm;
    pm.kind = p.kind, pm.graph = p.graph, pm.tokens = p.tokens, pm.us = us;
    us += 10;
    m.phases.push_back(pm);
  }
  return replay_json(s, r, m);
}

}  // namespace

TEST_CASE("check --replay: baseline kinds") {
  const json replay = fake_replay_report(llama_tp(8));
  const json analytic =
      json::parse(run_specsim({"run", "--json", "--model-path", "llama-3.1-8b", "--accept-len", "3"}).out);
  CHECK(check::baseline_kind(replay) == check::BaselineKind::Replay);
  CHECK(check::baseline_kind(analytic) == check::BaselineKind::Analytic);
  CHECK(check::baseline_kind(json{{"hello", 1}}) == check::BaselineKind::Unknown);
  CHECK_THROWS_AS(check::require_baseline_kind(analytic, true, "b"), InputError);
  CHECK_THROWS_AS(check::require_baseline_kind(replay, false, "b"), InputError);
  CHECK_NOTHROW(check::require_baseline_kind(replay, true, "b"));
  CHECK_NOTHROW(check::require_baseline_kind(analytic, false, "b"));
  CHECK_NOTHROW(check::validate_replay_report(replay, "b"));
  json broken = replay;
  broken["phases"][0]["measured"].erase("us");
  CHECK_THROWS_AS(check::validate_replay_report(broken, "b"), InputError);
}

TEST_CASE("check --replay: measured phase comparison") {
  const json base = fake_replay_report(llama_tp(8));
  REQUIRE(base["phases"].size() >= 2);
  json now = base;
  CHECK(check::replay_input_differences(base, now).empty());
  now["phases"][0]["measured"]["us"] = base["phases"][0]["measured"]["us"].get<double>() * 1.02;  // within 3%
  now["phases"][1]["measured"]["us"] = base["phases"][1]["measured"]["us"].get<double>() * 1.10;  // beyond
  auto rows = check::compare_replay_reports(base, now, 0.03);
  REQUIRE(rows.size() == base["phases"].size());
  CHECK(rows[0].status == "ok");
  CHECK(rows[1].status == "REGRESSED");
  CHECK(rows[1].regressed);
  CHECK(rows[1].delta == Approx(0.10));
  now["phases"].erase(now["phases"].begin());
  rows = check::compare_replay_reports(base, now, 0.03);
  CHECK(rows[0].status == "MISSING");
  now["device"] = "NVIDIA H100";
  now["scenario"]["tp"] = 4;
  const auto diffs = check::replay_input_differences(base, now);
  REQUIRE(diffs.size() == 2);
  CHECK(diffs[0] == "scenario/tp: baseline 8, now 4");
}

TEST_CASE("check --replay: the plan's distinct all-reduces") {
  const ScenarioResult r8 = run_scenario(resolve_scenario(llama_tp(8)));
  const auto cases = distinct_allreduces(r8.plan);
  REQUIRE(!cases.empty());
  for (const auto& c : cases) {
    CHECK(c.bytes > 0);
    CHECK(c.bytes % 2 == 0);  // whole bf16 elements
    CHECK(c.calls > 0);
    CHECK(r8.plan.find(c.phase) != nullptr);
  }
  // Every phase with all-reduces is there, and the calls add up to the plan's count.
  for (const auto& p : r8.plan.phases) {
    int calls = 0;
    for (const auto& c : cases) calls += c.phase == p.kind ? c.calls : 0;
    CHECK(calls == p.count_of(OpKind::AllReduce));
  }
  CHECK(distinct_allreduces(run_scenario(resolve_scenario(llama_tp(1))).plan).empty());
}

TEST_CASE("check --replay: verification lines") {
  VerifyResult ok{"custom:one-shot-push", "verify", 32768, 8, true, 0, 131072, ""};
  CHECK(!ok.failed());
  CHECK(verify_line(ok) ==
        "allreduce verify: custom:one-shot-push verify 32768 bytes x 8 ranks: ok (131072 elements match the CPU "
        "reference)");
  VerifyResult bad = ok;
  bad.wrong = 131072;
  CHECK(bad.failed());
  CHECK(verify_line(bad).find("WRONG: 131072 of 131072 elements") != std::string::npos);
  VerifyResult nccl{"nccl", "", 0, 8, false, 0, 0, "not verified: needs 8 GPUs, this machine has 1"};
  CHECK(!nccl.failed());  // visible, but not a failure
  CHECK(verify_line(nccl) == "allreduce verify: nccl: not verified: needs 8 GPUs, this machine has 1");
  VerifyResult err{"custom:two-shot", "verify", 64, 8, false, 0, 0, "ERROR: timed out"};
  CHECK(err.failed());
}

TEST_CASE("check --replay: without a GPU, one error line naming no GPU") {
  const std::string dir = fresh_dir();
  const std::string base = dir + "/replay.json";
  write_text(base, fake_replay_report(llama_tp(8)).dump(2));
  ::setenv("CUDA_VISIBLE_DEVICES", "", 1);  // hides any GPU of this machine from the child
  const auto r = run_specsim(
      {"check", "--replay", "--baseline", base, "--model-path", "llama-3.1-8b", "--tp-size", "8", "--accept-len", "3"});
  ::unsetenv("CUDA_VISIBLE_DEVICES");
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.rfind("error: no GPU: ", 0) == 0);
  CHECK(r.err.find('\n') == r.err.size() - 1);  // one line

  // A replay baseline without --replay, and an analytic one with it: refused, saying what to do.
  const auto no_flag = run_specsim({"check", "--baseline", base, "--model-path", "llama-3.1-8b", "--tp-size", "8"});
  CHECK(no_flag.exit_code == 2);
  CHECK(no_flag.err.find("add --replay") != std::string::npos);
  const std::string abase = dir + "/run.json";
  write_text(abase, run_specsim({"run", "--json"}).out);
  const auto mixed = run_specsim({"check", "--replay", "--baseline", abase});
  CHECK(mixed.exit_code == 2);
  CHECK(mixed.err.find("analytic `specsim run --json` report") != std::string::npos);
}
