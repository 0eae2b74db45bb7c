// The GPU replay's CPU side: the report schema, the no-GPU/no-CUDA refusal (a GPU machine runs a
// short real replay instead), and the calibration fit (recovers known efficiencies; writes a
// profile load_hardware reads).
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "calibrate/replay_fit.h"
#include "cost/compute_cost.h"
#include "engine/phase_timer.h"
#include "evaluate/evaluate_scenario.h"
#include "replay_report/replay_report.h"
#include "scenario/resolve.h"
#include "test_util.h"
#include "util/error.h"
#include "util/json_io.h"

using namespace specsim;
using namespace specsim::test;

namespace {

std::string sample(const std::string& name) { return traces_path("replay/h200/" + name + ".json"); }

// A replayed phase whose every time is what `g` predicts: the fit must find `g` again.
std::vector<ReplayPoint> synthetic_points(const Hardware& hw) {
  std::vector<ReplayPoint> pts;
  for (const char* f : {"llama-3.1-8b_decode_t16", "llama-3.1-70b_verify_t8", "deepseek-v3_decode_t4",
                        "llama-3.1-8b_decode_t1", "deepseek-v3_verify_t16"})
    for (auto p : load_replay_points({sample(f)}, "--from")) {
      double cls[3] = {0, 0, 0};
      for (auto& o : p.phase.ops) {
        Op op = o.op;
        op.dtype = o.ran_dtype;
        o.measured_us =
            predict_replayed_phase(PhasePlan{p.phase.kind, 1, 0, true, {OpBlock{"x", 1, {op}}}}, hw, RunSpec{}).us -
            hw.gpu.graph_launch_us;
        const OpClass c = op_class(op.kind);
        cls[c == OpClass::Gemm ? 0 : c == OpClass::Attention ? 1 : 2] += o.repeat * o.measured_us;
      }
      p.phase.graph = true;
      p.phase.us = predict_point_us(p, hw);
      p.phase.gemm_us = cls[0] + hw.gpu.graph_launch_us;
      p.phase.attention_us = cls[1] > 0 ? cls[1] + hw.gpu.graph_launch_us : -1;
      p.phase.other_us = cls[2] + hw.gpu.graph_launch_us;
      pts.push_back(p);
    }
  return pts;
}

}  // namespace

TEST_CASE("replay: a GPU machine replays for real; without one, exit 2 with one line") {
  const std::vector<std::string> args = {"replay",     "--model-path",  "llama-3.1-8b", "--tp-size", "1",
                                         "--hardware", "h200:nvswitch", "--accept-len", "3"};
#ifdef SPECSIM_WITH_REPLAY
  if (exists("/dev/nvidia0")) {  // the GPU machine: a short replay, its report measured beside predicted
    std::vector<std::string> quick = args;
    quick.insert(quick.end(), {"--iters", "2", "--warmup", "1", "--op-passes", "1", "--no-gemm-chain", "--json"});
    const auto r = run_specsim(quick);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    REQUIRE(!j.at("phases").empty());
    for (const auto& p : j.at("phases")) {
      INFO(p.dump());
      CHECK(p.at("measured").at("us").get<double>() > 0);
      CHECK(p.at("predicted").at("us").get<double>() > 0);
    }
    return;
  }
  WARN("SKIP: no GPU here (no /dev/nvidia0): the real replay is not run; checked: the refusal");
  const auto r = run_specsim(args);
  CHECK(r.err == "error: no CUDA GPU found (replay)\n");
#else
  WARN("SKIP: built without CUDA: the real replay is not run; checked: the refusal");
  const auto r = run_specsim(args);
  CHECK(r.err == "error: this specsim was built without CUDA; rebuild with nvcc, cuBLAS and NCCL (replay)\n");
#endif
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
}

TEST_CASE("replay rejects bad flags before touching a GPU") {
  const auto r = run_specsim({"replay", "--iters", "0"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind("error: --iters", 0) == 0);
}

TEST_CASE("a saved replay report reads back into phases the engine re-predicts") {
  const auto j = read_json_file(sample("llama-3.1-70b_verify_t4"));
  CHECK(j.at("rank_share") == true);
  CHECK(j.at("collectives").get<std::string>().rfind("not measured", 0) == 0);
  const auto phases = phases_from_report(j, "report");
  REQUIRE(phases.size() == 4);
  CHECK(phases[1].kind == PhaseKind::Verify);
  CHECK(phases[1].tokens == 4);
  const Hardware hw = load_hardware("h200:nvswitch", 8);
  for (std::size_t i = 0; i < phases.size(); ++i) {
    const auto& p = phases[i];
    CHECK(p.us > 0);
    CHECK(p.gemm_us > 0);
    CHECK(plan_of(p).kernels() == p.kernels);
    // The engine re-predicts exactly these ops: roofline per op, a switch gap per change of op
    // class in a layer, plus one graph launch when graphed. (The report's own "predicted" was
    // made with the profile of its day, so it is not compared.)
    const PhasePlan plan = plan_of(p);
    double expect = plan.graph ? hw.gpu.graph_launch_us : 0.0;
    for (const auto& b : plan.blocks)
      for (std::size_t k = 0; k < b.ops.size(); ++k) {
        const Op& op = b.ops[k];
        const Op& before = b.ops[(k + b.ops.size() - 1) % b.ops.size()];
        const bool change = b.ops.size() > 1 && op_class(op.kind) != op_class(before.kind);
        expect +=
            b.repeat * ((op.is_collective() ? 0.0 : compute_us(op, hw.gpu)) + (change ? hw.gpu.kernel_switch_us : 0.0));
      }
    if (plan.graph) CHECK(predict_replayed_phase(plan, hw, RunSpec{}).us == Approx(expect).epsilon(1e-9));
    CHECK(j["phases"][i]["predicted"]["us"].get<double>() > 0);
  }
  CHECK(j["phases"][1]["collectives_skipped"] == 2 * 80 + 2);  // 2 ARs per layer + embed AR + logits AG
}

TEST_CASE("replay_json puts measured beside predicted with the error in percent") {
  RunArgs a;
  a.model_path = "llama-3.1-8b", a.tp_size = 1, a.hardware = "h200:nvswitch", a.algorithm = "NONE", a.batch_size = 2;
  const Scenario s = resolve_scenario(a);
  const ScenarioResult r = run_scenario(s);
  ReplayMeasurement m;
  m.device = "test", m.iters = 5;
  const CyclePlan stripped = strip_collectives(r.plan);
  for (const auto& ph : stripped.phases) {
    const PhaseTiming t = predict_replayed_phase(ph, s.hw, s.run);
    PhaseMeasurement pm;
    pm.kind = ph.kind, pm.graph = ph.graph, pm.tokens = ph.tokens, pm.kernels = ph.kernels();
    pm.us = t.us * 1.25, pm.gemm_us = t.gemm_us * 0.8, pm.attention_us = -1, pm.other_us = t.other_us;
    for (const auto& b : ph.blocks)
      for (const auto& op : b.ops) pm.ops.push_back(OpMeasurement{b.name, op.name, b.repeat, op, DType::BF16, 2.0, ""});
    m.phases.push_back(pm);
  }
  const auto j = replay_json(s, r, m);
  REQUIRE(j["phases"].size() == 1);
  const auto& p = j["phases"][0];
  CHECK(p["phase"] == "baseline_decode");
  CHECK(p["error_pct"]["us"].get<double>() == Approx(-20.0));
  CHECK(p["error_pct"]["gemm"].get<double>() == Approx(25.0));
  CHECK(p["measured"]["attention_us"].is_null());
  CHECK(p["error_pct"]["attention"].is_null());
  CHECK(p["measured"]["allreduce_us"] == 0.0);  // tp 1: no collectives to leave out
  const auto back = phases_from_report(j, "report");
  REQUIRE(back.size() == 1);
  CHECK(back[0].us == Approx(m.phases[0].us));
  CHECK(back[0].attention_us == -1);
  CHECK(replay_text(j).find("baseline_decode") != std::string::npos);
  CHECK_THROWS_AS(phases_from_report(nlohmann::json{{"kind", "other"}}, "x"), InputError);
}

TEST_CASE("a replayed forward prices what the replay runs: dense batched expert GEMMs, block-scaled fp8 GEMMs") {
  RunArgs a;
  a.model_path = "deepseek-v3", a.tp_size = 8, a.hardware = "h200:nvswitch", a.algorithm = "NONE";
  const Scenario s = resolve_scenario(a);
  const ScenarioResult r = run_scenario(s);
  const CyclePlan stripped = strip_collectives(r.plan);
  const PhasePlan& ph = stripped.phases.front();
  REQUIRE(s.hw.gpu.moe_gemm_memory_efficiency > 0);
  REQUIRE(s.hw.gpu.gemm_fp8_block_fixed_us > 0);
  REQUIRE(s.hw.gpu.gemm_fp8_block_us_per_kblock > 0);
  REQUIRE(s.hw.gpu.gemm_fp8_tensor_fixed_us > 0);
  REQUIRE(s.hw.gpu.replay_block_fp8.present);
  // The replay runs the block-scaled kernel: its own fitted price, expert GEMMs as dense GEMMs.
  Hardware block = s.hw;
  block.gpu.moe_gemm_memory_efficiency = 0;
  block.gpu.price_as_replay_fp8 = true;
  block.gpu.price_stack_attention = false;  // its own split-KV attention, not SGLang's FA3 MLA call
  // A profile without that price: the stack's block terms.
  Hardware block_stack_terms = block;
  block_stack_terms.gpu.replay_block_fp8.present = false;
  // Reports from before that kernel ran cuBLASLt's per-tensor fp8: its one fixed term.
  Hardware tensor = block_stack_terms;
  tensor.gpu.gemm_fp8_block_fixed_us = s.hw.gpu.gemm_fp8_tensor_fixed_us;
  tensor.gpu.gemm_fp8_block_us_per_kblock = 0;
  const CostContext stack{&s.hw, &s.run, AllReduceChoice{}, Anchors{}, 1},
      as_block{&block, &s.run, AllReduceChoice{}, Anchors{}, 1},
      as_block_stack_terms{&block_stack_terms, &s.run, AllReduceChoice{}, Anchors{}, 1},
      as_tensor{&tensor, &s.run, AllReduceChoice{}, Anchors{}, 1};
  CHECK(predict_replayed_phase(ph, s.hw, s.run).us == Approx(time_phase(ph, as_block).us));
  CHECK(predict_replayed_phase(ph, block_stack_terms, s.run).us == Approx(time_phase(ph, as_block_stack_terms).us));
  CHECK(time_phase(ph, as_block).gemm_us != Approx(time_phase(ph, as_block_stack_terms).gemm_us));
  CHECK(predict_replayed_phase(ph, s.hw, s.run, false).us == Approx(time_phase(ph, as_tensor).us));
  CHECK(time_phase(ph, as_block_stack_terms).gemm_us > time_phase(ph, as_tensor).gemm_us);  // 61 layers of K/128 terms
  CHECK(time_phase(ph, stack).us != Approx(time_phase(ph, as_block).us));

  // The report says which terms priced its fp8 GEMMs, keeps each op's kernel, and reads it back.
  ReplayMeasurement m;
  m.device = "test", m.iters = 5;
  PhaseMeasurement pm;
  pm.kind = ph.kind, pm.graph = ph.graph, pm.tokens = ph.tokens, pm.kernels = ph.kernels(), pm.us = 4000;
  for (const auto& b : ph.blocks)
    for (const auto& op : b.ops) {
      OpMeasurement om{b.name, op.name, b.repeat, op, op.dtype, 2.0, ""};
      om.block_fp8 = op.dtype == DType::FP8 && (op.kind == OpKind::Gemm || op.kind == OpKind::MoeGemm);
      pm.ops.push_back(om);
    }
  REQUIRE(ran_block_fp8(pm));
  m.phases.push_back(pm);
  const auto j = replay_json(s, r, m);
  CHECK(j.at("fp8_gemm_terms").get<std::string>().find("replay_block_fp8: fixed_us") != std::string::npos);
  CHECK(replay_text(j).find("fp8 GEMMs: block-scaled fp8 kernel") != std::string::npos);
  CHECK(j["phases"][0]["predicted"]["us"].get<double>() == Approx(time_phase(ph, as_block).us));
  const auto back = phases_from_report(j, "report");
  REQUIRE(back.size() == 1);
  CHECK(ran_block_fp8(back[0]));
  // The same measurement without the marks (a per-tensor replay) is priced by the per-tensor term.
  for (auto& o : m.phases[0].ops) o.block_fp8 = false;
  const auto jt = replay_json(s, r, m);
  CHECK(jt.at("fp8_gemm_terms").get<std::string>().find("gemm_fp8_tensor_fixed_us") != std::string::npos);
  CHECK(jt["phases"][0]["predicted"]["us"].get<double>() == Approx(time_phase(ph, as_tensor).us));
}

TEST_CASE("the fit recovers known efficiencies from synthetic measurements") {
  Hardware truth = load_hardware("h200:nvswitch", 1);
  truth.gpu.gemm_memory_efficiency = 0.66, truth.gpu.attention_memory_efficiency = 0.45;
  truth.gpu.elementwise_memory_efficiency = 0.38, truth.gpu.kernel_min_us = 1.7;
  truth.gpu.attention_fixed_us = 2.1, truth.gpu.kernel_switch_us = 0.55;
  const auto pts = synthetic_points(truth);
  const Hardware base = load_hardware("h200:nvswitch", 1);  // starts from the shipped numbers
  const ReplayFit f = fit_replay(pts, base.gpu);
  CHECK(f.gemm_memory_efficiency == Approx(0.66).epsilon(0.01));
  CHECK(f.attention_memory_efficiency == Approx(0.45).epsilon(0.01));
  CHECK(f.elementwise_memory_efficiency == Approx(0.38).epsilon(0.01));
  CHECK(f.kernel_min_us == Approx(1.7).epsilon(0.01));
  CHECK(f.attention_fixed_us == Approx(2.1).epsilon(0.01));
  CHECK(f.kernel_switch_us == Approx(0.55).epsilon(0.01));  // only the whole-phase rows carry it
  CHECK(f.clamped.empty());
  Hardware cal = base;
  cal.gpu = apply_fit(base.gpu, f);
  for (const auto& p : pts) CHECK(predict_point_us(p, cal) == Approx(p.phase.us).epsilon(0.005));
}

TEST_CASE("calibrate --from writes a profile load_hardware reads, and refuses bad input whole") {
  const std::string dir = fresh_dir(), out = dir + "/h200-cal.json";
  const auto r =
      run_specsim({"calibrate", "--hardware", "h200:nvswitch", "--from", sample("llama-3.1-8b_decode_t1"), "--from",
                   sample("llama-3.1-8b_decode_t16"), "--holdout", sample("llama-3.1-8b_decode_t4"), "-o", out});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("held-out points:") != std::string::npos);
  const Hardware hw = load_hardware(out, 1);
  CHECK(hw.gpu.name == "h200");
  const auto j = read_json_file(out);
  CHECK(j["gpu"]["gemm_memory_efficiency"]["source"].get<std::string>().rfind("measured: specsim calibrate --from",
                                                                              0) == 0);
  CHECK(j["gpu"]["mem_bw_gbps"] == read_json_file(models_path("hardware/gpus/h200.json"))["mem_bw_gbps"]);

  const std::string bad = dir + "/bad.json", out2 = dir + "/never.json";
  write_text(bad, "{\"kind\": \"specsim-replay\", \"phases\": []}");
  const auto r2 = run_specsim({"calibrate", "--hardware", "h200:nvswitch", "--from", bad, "-o", out2});
  CHECK(r2.exit_code == 2);
  CHECK(r2.err == "error: no phases (" + bad + ": phases)\n");
  CHECK(!exists(out2));
}

TEST_CASE(
    "every replay report the repo ships reads back and fits through calibrate --from, or is refused as a "
    "functional check") {
  namespace fs = std::filesystem;
  int reports = 0;
  for (const auto& dir : fs::directory_iterator(traces_path("replay"))) {
    if (!dir.is_directory()) continue;
    for (const auto& f : fs::directory_iterator(dir.path())) {
      if (f.path().extension() != ".json") continue;
      const std::string path = f.path().string();
      INFO(path);
      const auto j = nlohmann::json::parse(slurp(path));
      CHECK_FALSE(phases_from_report(j, path).empty());
      const std::string out = fresh_dir() + "/fit.json";
      const auto r = run_specsim({"calibrate", "--from", path, "--hardware", "h200:nvswitch", "-o", out});
      INFO(r.err);
      if (j.value("shared_gpus", false)) {  // ranks time-sliced one GPU: timings a functional check, not fitted
        CHECK(r.exit_code == 2);
        CHECK(r.err.find(path) != std::string::npos);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK_FALSE(exists(out));
      } else {
        CHECK(r.exit_code == 0);
        CHECK(exists(out));
      }
      ++reports;
    }
  }
  CHECK(reports >= 47);
}
