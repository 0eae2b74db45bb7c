// Anchors compose: each measurement kept where it was taken, listed with where it applies,
// contradictions reported; the built-in scenario keeps its anchors when the user adds one.
#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>

#include "run_json.h"
#include "test_util.h"

using namespace specsim::test;
using nlohmann::json;

namespace {
const json* anchor(const json& j, const std::string& kind, const std::string& origin) {
  for (const auto& a : j["settings"]["anchors"])
    if (a["kind"] == kind && a["origin"] == origin) return &a;
  return nullptr;
}
double tok_s(const json& j, const std::string& backend, const char* part = "spec") {
  for (const auto& sc : j["scenarios"])
    if (sc["label"] == backend) return sc[part]["tok_per_s"].get<double>();
  FAIL("no backend " << backend);
  return 0;
}
}  // namespace

TEST_CASE("the built-in scenario lists its three measurements with where they apply") {
  const json j = run_json({});
  const auto& as = j["settings"]["anchors"];
  REQUIRE(as.size() == 3);
  for (const auto& a : as) {
    CHECK(a["origin"] == "built-in");
    CHECK(a["used"] == true);
    CHECK_FALSE(a["applies"].empty());
    CHECK(a["taken_at"]["batch_size"] == 1);
    CHECK(a["taken_at"]["backend"] == "nccl");
  }
  const json* ar = anchor(j, "allreduce", "built-in");
  REQUIRE(ar);
  CHECK((*ar)["taken_at"]["phase"] == "verify");
  CHECK((*ar)["taken_at"]["mode"] == "eager");
  // the graphed phases and the custom kernel are named where it does not apply
  const std::string no = (*ar)["does_not_apply"].dump();
  CHECK(no.find("baseline_decode") != std::string::npos);
  CHECK(no.find("custom") != std::string::npos);
}

TEST_CASE("--measured-allreduce-us on the built-in scenario joins its other anchors, the contradiction reported") {
  const CliResult t = run_specsim({"--measured-allreduce-us", "100"});
  INFO(t.err);
  REQUIRE(t.exit_code == 0);
  CHECK(t.out.find("contradicts the built-in 200 us") != std::string::npos);
  const json j = run_json({"--measured-allreduce-us", "100"});
  const json* mine = anchor(j, "allreduce", "command line");
  const json* builtin = anchor(j, "allreduce", "built-in");
  REQUIRE(mine);
  REQUIRE(builtin);
  CHECK((*mine)["used"] == true);
  CHECK((*builtin)["used"] == false);
  CHECK((*builtin)["conflict"].get<std::string>().find("contradicted") != std::string::npos);
  // the baseline and the speculation measurements still anchor: both tok/s reproduced with NCCL
  CHECK(anchor(j, "baseline", "built-in"));
  CHECK(tok_s(j, "nccl", "baseline") == Approx(89.5).epsilon(1e-6));
  CHECK(tok_s(j, "nccl") == Approx(54.1).epsilon(1e-6));
  // with a cheaper all-reduce, the same 54.1 tok/s implies a lower acceptance
  CHECK(j["settings"]["accept_len"].get<double>() < run_json({})["settings"]["accept_len"].get<double>());
}

TEST_CASE("a baseline log added to the built-in scenario keeps the built-in all-reduce anchor") {
  const json base = run_json({});
  const json j = run_json({"--baseline-from", traces_path("sglang-baseline-old-form-synthetic.log")});
  const json* ar = anchor(j, "allreduce", "built-in");
  REQUIRE(ar);
  CHECK((*ar)["used"] == true);
  const json* log = anchor(j, "baseline", "command line");
  REQUIRE(log);
  CHECK((*log)["used"] == true);
  CHECK((*log)["source"].get<std::string>().find("--baseline-from") == 0);
  CHECK(anchor(j, "baseline", "built-in")->at("used") == false);
  // the log's ~89 tok/s is the baseline now; the 200 us all-reduce still weighs on the verify
  CHECK(tok_s(j, "nccl", "baseline") == Approx((*log)["measured"].get<double>()).epsilon(1e-6));
  CHECK(tok_s(j, "nccl") == Approx(54.1).epsilon(1e-6));
  CHECK(tok_s(j, "nccl") / tok_s(j, "nccl", "baseline") < 1.0);  // still slower than plain decoding
  CHECK(j["scenarios"][0]["spec"]["speedup"].get<double>() ==
        Approx(base["scenarios"][0]["spec"]["speedup"].get<double>()).epsilon(0.05));
}

TEST_CASE("measurements at other settings compose by execution mode") {
  // CUDA graphs on verify: the user's all-reduce measurement is a graph one, the built-in an eager one
  const json j = run_json({"--eager-phases", "none", "--measured-allreduce-us", "30"});
  const json* mine = anchor(j, "allreduce", "command line");
  const json* builtin = anchor(j, "allreduce", "built-in");
  REQUIRE(mine);
  REQUIRE(builtin);
  CHECK((*mine)["taken_at"]["mode"] == "graph");
  CHECK((*builtin)["taken_at"]["mode"] == "eager");
  CHECK((*mine)["used"] == true);
  CHECK((*builtin)["used"] == true);
  CHECK((*builtin)["applies"].dump().find("no phase of this run") != std::string::npos);
  const auto& verify = j["scenarios"][0]["phases"][1];
  CHECK(verify["allreduce_us"].get<double>() / verify["allreduce_count"].get<double>() == Approx(30).epsilon(1e-6));
}

TEST_CASE("on other hardware only the acceptance carries, and the listing says so") {
  const json j = run_json({"--hardware", "h200:nvswitch"});
  const json* ar = anchor(j, "allreduce", "built-in");
  REQUIRE(ar);
  CHECK((*ar)["applies"].empty());
  CHECK((*ar)["does_not_apply"].dump().find("this run's box") != std::string::npos);
  CHECK_FALSE(anchor(j, "spec", "built-in")->at("applies").empty());
}

TEST_CASE("a speculative tok/s with its accept len calibrates the cycle, split as the model prices its forwards") {
  const std::vector<std::string> base = {
      "--model-path", "llama-3.1-8b", "--hardware", "h100-sxm:nvswitch", "--tp-size", "2", "--allreduce", "nccl"};
  std::vector<std::string> a = base;
  for (const char* t : {"--accept-len", "3", "--measured-spec-tok-s", "300"}) a.push_back(t);
  const json j = run_json(a);
  const json* c = anchor(j, "cycle", "command line");
  REQUIRE(c);
  CHECK((*c)["used"] == true);
  // the run at the measured settings gives the measurement back
  CHECK(tok_s(j, "nccl") == Approx(300).epsilon(1e-9));
  const double cycle_us = 3 * 1e6 / 300.0;
  CHECK((*c)["measured_cycle_us"].get<double>() == Approx(cycle_us));
  const double unexplained = (*c)["unexplained_us_per_cycle"].get<double>();
  CHECK(unexplained == Approx(cycle_us - (*c)["model"].get<double>()));
  // the plain decoding step is untouched by it
  const json plain = run_json([&] {
    auto b = base;
    for (const char* t : {"--accept-len", "3"}) b.push_back(t);
    return b;
  }());
  CHECK(tok_s(j, "nccl", "baseline") == Approx(tok_s(plain, "nccl", "baseline")));
  // one setting: split in proportion to the modelled time of each forward (the 4 draft decode
  // forwards, the draft extend, the verify), read from the same run without the measurement
  double decode_us = 0, extend_us = 0, cycle_model_us = 0;
  for (const auto& p : plain["scenarios"][0]["phases"]) {
    const std::string name = p["name"];
    if (name == "baseline_decode") continue;
    const double us = p["count"].get<double>() * p["us"].get<double>();
    cycle_model_us += us;
    if (name == "draft_decode") decode_us += us;
    if (name == "draft_extend") extend_us += us;
  }
  REQUIRE(cycle_model_us == Approx((*c)["model"].get<double>()));
  const double step = (*c)["extra_us_per_draft_forward"].get<double>();
  const double extend = (*c)["extra_us_per_draft_extend"].get<double>();
  const double verify = (*c)["extra_us_per_verify"].get<double>();
  CHECK(step == Approx(unexplained * decode_us / cycle_model_us / 4));
  CHECK(extend == Approx(unexplained * extend_us / cycle_model_us));
  CHECK(verify == Approx(unexplained * (1 - (decode_us + extend_us) / cycle_model_us)));
  CHECK(4 * step + extend + verify == Approx(unexplained));
  CHECK(std::abs(step) < std::abs(verify));  // a draft forward is a fraction of the verify's cost
  // never "not used" beside a given accept len: it is a measurement of the cycle, not of acceptance
  CHECK((*c)["does_not_apply"].dump().find("baseline_decode") != std::string::npos);
}

TEST_CASE("two measured step counts fit the cycle per draft forward and per verify by least squares") {
  const std::string dir = fresh_dir();
  const std::string file = dir + "/two.json";
  auto entry = [](int steps, double tok_s) {
    return json{{"origin", "bench"},
                {"hardware", "h100-sxm:nvswitch"},
                {"settings",
                 {{"tp_size", 2},
                  {"speculative_algorithm", "EAGLE3"},
                  {"speculative_num_steps", steps},
                  {"speculative_eagle_topk", 1},
                  {"speculative_num_draft_tokens", steps + 1},
                  {"batch_size", 1},
                  {"accept_len", 2.5}}},
                {"spec_tok_s", {{"value", tok_s}, {"source", "a bench table"}}}};
  };
  const json f = {{"format", "specsim-scenario-1"},
                  {"model", "llama-3.1-8b"},
                  {"hardware", "h100-sxm:nvswitch"},
                  {"settings",
                   {{"tp_size", 2},
                    {"speculative_num_steps", 3},
                    {"speculative_eagle_topk", 1},
                    {"speculative_num_draft_tokens", 4},
                    {"accept_len", 2.5}}},
                  {"measured", {entry(2, 250.0), entry(4, 200.0)}}};
  write_text(file, f.dump(2));
  // two points, two unknowns: each measured setting is reproduced (within 0.5%: the extras sit in
  // the forwards, under which the runtime's overlapped host work partly hides)
  for (const auto& [steps, measured] : {std::pair{2, 250.0}, std::pair{4, 200.0}}) {
    // the measured settings whole
    const json j =
        run_json({"--scenario", file, "--allreduce", "nccl", "--speculative-num-steps", std::to_string(steps),
                  "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", std::to_string(steps + 1)});
    CHECK(tok_s(j, "nccl") == Approx(measured).epsilon(0.005));
  }
  // and a third step count lies on the fitted line: residual(S) = S a + b
  const json j3 = run_json({"--scenario", file, "--allreduce", "nccl"});
  const json* c = anchor(j3, "cycle", "bench");
  REQUIRE(c);
  const double a = (*c)["extra_us_per_draft_forward"].get<double>(), b = (*c)["extra_us_per_verify"].get<double>();
  CHECK(a != Approx(b));
}

TEST_CASE("a measured cycle faster than the model shortens every forward by its own share, none below zero") {
  // vLLM 0.10's fitted per-draft-step host time makes the modelled draft forwards long and the
  // draft extend short: an even split per draft forward drove the extend negative (a refusal)
  const json j = run_json({"--model-path", "gpt-oss-120b", "--hardware", "b200:nvswitch", "--runtime", "vllm-0.10",
                           "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
                           "--speculative-num-draft-tokens", "4", "--accept-len", "2", "--measured-spec-tok-s", "450"});
  const json* c = anchor(j, "cycle", "command line");
  REQUIRE(c);
  CHECK((*c)["used"] == true);
  CHECK((*c)["unexplained_us_per_cycle"].get<double>() < 0);
  CHECK(tok_s(j, "nccl") == Approx(450).epsilon(1e-6));
  for (const auto& p : j["scenarios"][0]["phases"]) {
    INFO(p["name"]);
    CHECK(p["us"].get<double>() > 0);
  }
  CHECK((*c)["extra_us_per_draft_extend"].get<double>() > (*c)["extra_us_per_draft_forward"].get<double>());
}

TEST_CASE("a measurement far above the model is used, with a caution naming what it may be") {
  const json j =
      run_json({"--model-path", "deepseek-v3", "--hardware", "h200:nvswitch", "--tp-size", "8", "--batch-size", "8",
                "--accept-len", "2.5", "--speculative-algorithm", "NEXTN", "--measured-baseline-tok-s", "80"});
  const json* b = anchor(j, "baseline", "command line");
  REQUIRE(b);
  CHECK((*b)["used"] == true);
  REQUIRE(b->contains("caution"));
  const std::string c = (*b)["caution"];
  CHECK(c.find("one request's tok/s where the batch's is asked for (its 8 requests: 640 tok/s)") != std::string::npos);
  // at the batch's tok/s the same step is plausible: no caution
  const json ok =
      run_json({"--model-path", "deepseek-v3", "--hardware", "h200:nvswitch", "--tp-size", "8", "--batch-size", "8",
                "--accept-len", "2.5", "--speculative-algorithm", "NEXTN", "--measured-baseline-tok-s", "640"});
  CHECK_FALSE(anchor(ok, "baseline", "command line")->contains("caution"));
  // the built-in's measurements are within the range: none cautioned; its spec anchor was taken
  // with verify eager, as its measured settings say
  const json built_in = run_json({"--eager-phases", "none"});
  for (const auto& a : built_in["settings"]["anchors"]) CHECK_FALSE(a.contains("caution"));
  CHECK((*anchor(built_in, "spec", "built-in"))["taken_at"]["mode"] == "eager");
  // a spec tok/s measured with CUDA graphs (SGLang's default) was taken with verify graphed
  const json graphed = run_json({"--model-path", "llama-3.1-8b", "--hardware", "h200:nvswitch", "--tp-size", "1",
                                 "--measured-spec-tok-s", "250"});
  CHECK((*anchor(graphed, "spec", "command line"))["taken_at"]["mode"] == "graph");
}

TEST_CASE(
    "measurements that disagree are named together: a measured all-reduce in the cycle a spec tok/s cannot reach") {
  const auto r = run_specsim({"run", "--model-path", "deepseek-v3", "--hardware", "h200:nvswitch", "--tp-size", "8",
                              "--measured-allreduce-us", "200", "--measured-spec-tok-s", "150", "--accept-len", "2.5"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("with the measured 200 us per NCCL all-reduce: 123 of them, 24600 us, in the verify") !=
        std::string::npos);
  CHECK(r.err.find("(--measured-spec-tok-s, --measured-allreduce-us)") != std::string::npos);
  CHECK(r.err.find("e+0") == std::string::npos);  // whole microseconds, not 1.667e+04
}
