// Scenario files: --save-scenario writes the resolved scenario, --scenario reads it back to the
// byte-identical --json; flags override it; the built-in scenario spelled out with flags agrees.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>

#include "test_util.h"

using namespace specsim::test;
using nlohmann::json;

namespace {
std::string run_ok(std::vector<std::string> args) {
  args.push_back("--json");
  const CliResult r = run_specsim(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return r.out;
}
json scenarios(const std::string& out) { return json::parse(out)["scenarios"]; }
}  // namespace

TEST_CASE("--scenario on a saved file gives the same --json, but for naming the file as the accept len's source") {
  const std::string dir = fresh_dir();
  const std::vector<std::vector<std::string>> runs = {
      {},
      {"--eager-phases", "none", "--measured-allreduce-us", "30", "--batch-size", "4", "--allreduce",
       "fixed:40@verify"},
      {"--model-path", "llama-3.1-8b", "--tp-size", "2", "--accept-len", "3", "--hardware", "h100-sxm:nvswitch"},
      {"--baseline-from", traces_path("sglang-baseline-old-form-synthetic.log"), "--speculative-num-steps", "3"},
      // a measurement on another runtime than SGLang is read back as taken on that runtime (not
      // with SGLang's attention backends)
      {"--model-path",
       "llama-3.1-8b",
       "--speculative-draft-model-path",
       "llama-3.1-8b/eagle1",
       "--hardware",
       "h100-sxm:nvswitch",
       "--runtime",
       "vllm",
       "--speculative-algorithm",
       "EAGLE",
       "--speculative-num-steps",
       "2",
       "--speculative-eagle-topk",
       "1",
       "--speculative-num-draft-tokens",
       "3",
       "--accept-len",
       "2.1",
       "--measured-baseline-tok-s",
       "141.44",
       "--measured-spec-tok-s",
       "228.83"},
  };
  int i = 0;
  for (auto args : runs) {
    const std::string file = dir + "/s" + std::to_string(i++) + ".json";
    args.insert(args.end(), {"--save-scenario", file});
    const std::string saved = run_ok(args);
    REQUIRE(exists(file));
    CHECK(slurp(file).find("\"format\": \"specsim-scenario-1\"") != std::string::npos);
    json again = json::parse(run_ok({"--scenario", file})), before = json::parse(saved);
    if (before["settings"].contains("accept_len_source") &&
        before["settings"]["accept_len_source"] == "given (--accept-len)") {
      CHECK(again["settings"]["accept_len_source"] == "from the scenario file " + file);
      again["settings"].erase("accept_len_source"), before["settings"].erase("accept_len_source");
    }
    CHECK(again.dump(2) == before.dump(2));
  }
}

TEST_CASE("a saved scenario keeps --quantization and --kv-cache-dtype and reads back the same") {
  const std::string dir = fresh_dir();
  const std::vector<std::string> formats = {
      "--model-path",   "llama-3.1-70b", "--hardware",       "h200:nvswitch", "--tp-size", "8", "--accept-len", "3",
      "--quantization", "fp8",           "--kv-cache-dtype", "fp8_e4m3"};
  std::vector<std::string> save = formats;
  save.insert(save.end(), {"--save-scenario", dir + "/f.json"});
  const std::string saved = run_ok(save);
  const json file = json::parse(slurp(dir + "/f.json"));
  CHECK(file["settings"]["quantization"] == "fp8");
  CHECK(file["settings"]["kv_cache_dtype"] == "fp8_e4m3");
  json again = json::parse(run_ok({"--scenario", dir + "/f.json"})), before = json::parse(saved);
  again["settings"].erase("accept_len_source"), before["settings"].erase("accept_len_source");
  CHECK(again.dump(2) == before.dump(2));
  // the formats move the answer (a file that lost them would read back as bf16 weights and KV)
  std::vector<std::string> plain(formats.begin(), formats.begin() + 8);
  CHECK(scenarios(run_ok(plain)) != scenarios(before.dump()));
  // a file without them keeps the defaults (no key written)
  plain.insert(plain.end(), {"--save-scenario", dir + "/p.json"});
  run_ok(plain);
  const json p = json::parse(slurp(dir + "/p.json"));
  CHECK(!p["settings"].contains("quantization"));
  CHECK(!p["settings"].contains("kv_cache_dtype"));
}

TEST_CASE("flags override a scenario file") {
  const std::string dir = fresh_dir();
  run_ok({"--save-scenario", dir + "/s.json"});
  CHECK(scenarios(run_ok({"--scenario", dir + "/s.json", "--eager-phases", "none"})) ==
        scenarios(run_ok({"--eager-phases", "none"})));
  // the built-in chain (2, 1, 3) with 4 draft tokens is the chain of 3 steps, from the file or not
  CHECK(scenarios(run_ok({"--scenario", dir + "/s.json", "--speculative-num-draft-tokens", "4"})) ==
        scenarios(run_ok({"--speculative-num-draft-tokens", "4"})));
}

TEST_CASE("a note of the saved run's settings that an overriding flag changes is not shown beside the new one") {
  const std::string dir = fresh_dir();
  const std::vector<std::string> deepseek = {"--model-path", "deepseek-v3",   "--tp-size",        "8",
                                             "--hardware",   "h200:nvswitch", "--accept-len",     "2.5",
                                             "--runtime",    "sglang",        "--sglang-release", "v0.5.9"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = deepseek;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  auto notes = [](const std::string& out) { return json::parse(out)["notes"].get<std::vector<std::string>>(); };
  auto count = [](const std::vector<std::string>& ns, const std::string& part) {
    return std::count_if(ns.begin(), ns.end(), [&](const std::string& n) { return n.find(part) != std::string::npos; });
  };
  const std::string on = "runs FlashInfer's fused all-reduce", off = ": kept off";
  const auto saved = notes(run_ok(with({"--save-scenario", dir + "/s.json"})));
  REQUIRE(count(saved, on) == 1);
  // reloaded with the enforce switch: the fusion is off, and only the note that says so is shown
  const auto reloaded = notes(run_ok({"--scenario", dir + "/s.json", "--enforce-disable-flashinfer-allreduce-fusion"}));
  CHECK(count(reloaded, on) == 0);
  CHECK(count(reloaded, off) == 1);
  CHECK(reloaded == notes(run_ok(with({"--enforce-disable-flashinfer-allreduce-fusion"}))));
  // a note the file holds that its settings do not derive (written by hand) stays, first
  json f = json::parse(slurp(dir + "/s.json"));
  f["notes"].insert(f["notes"].begin(), "measured on our staging cluster, 2026-11");
  write_text(dir + "/hand.json", f.dump(2));
  const auto hand = notes(run_ok({"--scenario", dir + "/hand.json", "--enforce-disable-flashinfer-allreduce-fusion"}));
  REQUIRE(!hand.empty());
  CHECK(hand.front() == "measured on our staging cluster, 2026-11");
  CHECK(count(hand, on) == 0);
}

TEST_CASE("a flag for part of a saved draft shape changes that part and keeps the rest, as a sweep axis does") {
  const std::string dir = fresh_dir(), file = dir + "/tree.json";
  const std::vector<std::string> llama = {"--model-path",      "llama-3.1-8b", "--hardware",
                                          "h100-sxm:nvswitch", "--accept-len", "3"};
  std::vector<std::string> save = llama;
  save.insert(save.end(), {"--speculative-num-steps", "4", "--speculative-eagle-topk", "2",
                           "--speculative-num-draft-tokens", "6", "--save-scenario", file});
  run_ok(save);
  auto shape = [&](const std::vector<std::string>& flags) {
    std::vector<std::string> a = {"--scenario", file};
    a.insert(a.end(), flags.begin(), flags.end());
    const json st = json::parse(run_ok(a))["settings"];
    return std::vector<int>{st["speculative_num_steps"].get<int>(), st["speculative_eagle_topk"].get<int>(),
                            st["speculative_num_draft_tokens"].get<int>()};
  };
  CHECK(shape({"--speculative-num-steps", "5"}) == std::vector<int>{5, 2, 6});
  CHECK(shape({"--speculative-num-draft-tokens", "4"}) == std::vector<int>{4, 2, 4});
  // narrowed to a chain: same depth, draft tokens = steps + 1
  CHECK(shape({"--speculative-eagle-topk", "1"}) == std::vector<int>{4, 1, 5});
  // a kept part that does not suit the flags' is named as the file's
  const CliResult deep = run_specsim({"--scenario", file, "--speculative-num-steps", "1"});
  CHECK(deep.exit_code == 2);
  CHECK(deep.err.find("the scenario file's shape") != std::string::npos);
  CHECK(deep.err.find("--speculative-num-draft-tokens") != std::string::npos);
  // the sweep's points are the runs' settings
  const std::string csv = dir + "/sweep.csv";
  const CliResult sw = run_specsim({"sweep", "--scenario", file, "--speculative-num-steps", "5",
                                    "--speculative-eagle-topk", "1,2", "--allreduce", "nccl", "-o", csv});
  INFO(sw.err);
  REQUIRE(sw.exit_code == 0);
  const std::string rows = slurp(csv);
  CHECK(rows.find(",5,1,6,") != std::string::npos);
  CHECK(rows.find(",5,2,6,") != std::string::npos);
  CHECK(shape({"--speculative-num-steps", "5", "--speculative-eagle-topk", "1"}) == std::vector<int>{5, 1, 6});
}

TEST_CASE("the built-in scenario spelled out with flags gives the same answer") {
  CHECK(scenarios(run_ok({"--model-path",
                          "deepseek-v3",
                          "--tp-size",
                          "8",
                          "--hardware",
                          "rtx-pro-6000:pcie-numa",
                          "--speculative-num-steps",
                          "2",
                          "--cuda-graph-max-bs",
                          "128",
                          "--eager-phases",
                          "verify",
                          "--nccl-p2p-level",
                          "SYS",
                          "--nccl-algo",
                          "ring",
                          "--nccl-proto",
                          "LL",
                          "--measured-baseline-tok-s",
                          "89.5",
                          "--measured-allreduce-us",
                          "200",
                          "--measured-spec-tok-s",
                          "54.1"})) == scenarios(run_ok({})));
}

TEST_CASE("a file that is not a scenario is bad input, and nothing is saved on an error") {
  const std::string dir = fresh_dir();
  write_text(dir + "/x.json", "{\"format\": \"another-tool-1\", \"model\": \"deepseek-v3\"}");
  const CliResult r = run_specsim({"--scenario", dir + "/x.json"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("x.json: format") != std::string::npos);
  // a "format" that is no string (found by the fuzzer, as YAML's empty value): the same line, not
  // the JSON library's "type must be string"
  for (const char* text : {"{\"format\": 3}", "a: 1\nformat\n"}) {
    INFO(text);
    write_text(dir + "/y.yaml", text);
    const CliResult y = run_specsim({"--scenario", dir + "/y.yaml"});
    CHECK(y.exit_code == 2);
    CHECK(y.err.find("not a scenario file") != std::string::npos);
  }
  CHECK(run_specsim({"--accept-len", "9", "--save-scenario", dir + "/no.json"}).exit_code == 2);
  CHECK_FALSE(exists(dir + "/no.json"));
}

TEST_CASE("a YAML scenario in SGLang's --config form gives the built-in scenario's answer") {
  const std::string dir = fresh_dir();
  write_text(dir + "/s.yaml",
             "model-path: deepseek-v3\ntp-size: 8\nhardware: rtx-pro-6000:pcie-numa\nspeculative-num-steps: 2\n"
             "cuda-graph-max-bs: 128\neager-phases: verify\nnccl-p2p-level: SYS\nnccl-algo: ring\nnccl-proto: LL\n"
             "measured-baseline-tok-s: 89.5\nmeasured-allreduce-us: 200\nmeasured-spec-tok-s: 54.1\n");
  const CliResult probe = run_specsim({"--scenario", dir + "/s.yaml"});
  if (probe.err.find("built without yaml-cpp") != std::string::npos) {
    WARN("skipped: this specsim was built without yaml-cpp (libyaml-cpp-dev)");
    return;
  }
  CHECK(scenarios(run_ok({"--scenario", dir + "/s.yaml"})) == scenarios(run_ok({})));
  // flags override the file (a flat file's measurements are taken at the run's own settings, so
  // the override here leaves those alone)
  CHECK(scenarios(run_ok({"--scenario", dir + "/s.yaml", "--allreduce", "fixed:40@verify"})) ==
        scenarios(run_ok({"--allreduce", "fixed:40@verify"})));
  write_text(dir + "/bad.yaml", "model-path: deepseek-v3\nwarp-drive: 9\n");
  const CliResult bad = run_specsim({"--scenario", dir + "/bad.yaml"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("bad.yaml: warp-drive") != std::string::npos);
  write_text(dir + "/broken.yaml", "model-path: [deepseek-v3\n");
  CHECK(run_specsim({"--scenario", dir + "/broken.yaml"}).exit_code == 2);
}

TEST_CASE("a scenario file's accept len under flags that change the draft shape is projected, not reused") {
  const std::string dir = fresh_dir(), file = dir + "/s.json";
  REQUIRE(run_specsim({"run", "--model-path", "llama-3.1-8b", "--hardware", "h100-sxm:nvswitch", "--tp-size", "1",
                       "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
                       "--speculative-num-draft-tokens", "4", "--accept-len", "2.5", "--save-scenario", file})
              .exit_code == 0);
  const auto accept_of = [](const CliResult& r) { return nlohmann::json::parse(r.out).at("settings"); };
  // the file's own shape: its accept len as it is
  auto same = run_specsim({"run", "--scenario", file, "--json"});
  REQUIRE(same.exit_code == 0);
  CHECK(accept_of(same)["accept_len"].get<double>() == Approx(2.5));
  // 6 steps (chain of 6): the rate that gives 2.5 over 3 steps, (1 - a^4) / (1 - a) = 2.5, carried over
  auto deeper = run_specsim({"run", "--scenario", file, "--speculative-num-steps", "6", "--speculative-eagle-topk", "1",
                             "--speculative-num-draft-tokens", "7", "--json"});
  REQUIRE(deeper.exit_code == 0);
  const auto j = accept_of(deeper);
  double a = 0.5;  // solve (1 - a^4) / (1 - a) = 2.5 by bisection, by hand here
  for (double lo = 0, hi = 0.999, i = 0; i < 200; ++i) {
    a = (lo + hi) / 2;
    ((1 - std::pow(a, 4)) / (1 - a) < 2.5 ? lo : hi) = a;
  }
  CHECK(j["accept_len"].get<double>() == Approx((1 - std::pow(a, 7)) / (1 - a)).epsilon(1e-4));
  CHECK(j["accept_len"].get<double>() > 2.5);
  CHECK(j["accept_len_source"].get<std::string>().find("projected") != std::string::npos);
  CHECK(j["accept_len_source"].get<std::string>().find("at steps 3, topk 1, 4 draft tokens") != std::string::npos);
  // an accept len on the command line is the user's own: never projected
  auto given = run_specsim({"run", "--scenario", file, "--speculative-num-steps", "6", "--speculative-eagle-topk", "1",
                            "--speculative-num-draft-tokens", "7", "--accept-len", "3", "--json"});
  REQUIRE(given.exit_code == 0);
  CHECK(accept_of(given)["accept_len"].get<double>() == Approx(3));
  // fewer steps than the file's accept len needs: projected too (was refused as "--accept-len must be
  // in [1, 2]", a flag not given; a sweep over the steps dropped those points)
  auto shallower = run_specsim({"run", "--scenario", file, "--speculative-num-steps", "1", "--json"});
  INFO(shallower.err);
  REQUIRE(shallower.exit_code == 0);
  CHECK(accept_of(shallower)["accept_len"].get<double>() == Approx(1 + a).epsilon(1e-4));
  const std::string csv = dir + "/steps.csv";
  const auto sweep = run_specsim({"sweep", "--scenario", file, "--speculative-num-steps", "1..3", "-o", csv});
  INFO(sweep.err);
  REQUIRE(sweep.exit_code == 0);
  CHECK(sweep.err.find("6 points, 6 evaluated, 0 skipped") != std::string::npos);
}
