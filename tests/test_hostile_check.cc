// `check` baselines: a baseline that could not have come from `specsim run --json` (or `specsim
// replay -o`) of this release line is an error, never a silent "ok".
#include <nlohmann/json.hpp>

#include "hostile_cases.h"

using namespace specsim::test;
using nlohmann::json;

TEST_CASE("check: malformed run baselines are errors") {
  const std::string dir = fresh_dir();
  const auto ok = run_specsim({"--json"});
  REQUIRE(ok.exit_code == 0);
  write_text(dir + "/ok.json", ok.out);
  REQUIRE(run_specsim({"check", "--baseline", dir + "/ok.json"}).exit_code == 0);
  const json good = json::parse(ok.out);
  std::vector<BadCase> cases;
  int n = 0;
  auto add = [&](const std::function<void(json&)>& doctor, const std::string& mentions) {
    json b = good;
    doctor(b);
    const std::string f = dir + "/b" + std::to_string(n++) + ".json";
    write_text(f, b.dump());
    cases.push_back({{"check", "--baseline", f}, mentions});
  };
  add([](json& b) { b["scenarios"][0]["phases"] = json::array(); }, "has no phases");
  add([](json& b) { b["scenarios"][0]["phases"][0]["us"] = -5; }, "not a positive number");
  add([](json& b) { b["scenarios"][0]["phases"][0]["us"] = 0; }, "not a positive number");
  add([](json& b) { b["scenarios"][0]["phases"][0]["us"] = "fast"; }, "lacks name or us");
  add([](json& b) { b["scenarios"][0]["phases"][0].erase("name"); }, "lacks name or us");
  add([](json& b) { b["scenarios"][0]["baseline"]["tok_per_s"] = 0; }, "baseline.tok_per_s");
  add([](json& b) { b["scenarios"][0]["baseline"]["tok_per_s"] = -3.5; }, "baseline.tok_per_s");
  add([](json& b) { b["scenarios"][0].erase("baseline"); }, "baseline.tok_per_s");
  add([](json& b) { b["scenarios"][0]["spec"]["tok_per_s"] = 0; }, "spec.tok_per_s");
  add([](json& b) { b["scenarios"][0]["spec"] = 7; }, "spec.tok_per_s");
  add([](json& b) { b.erase("model"); }, "no model.name");
  add([](json& b) { b.erase("specsim_version"); }, "no specsim_version");
  add([](json& b) { b["specsim_version"] = "9.0.0"; }, "regenerate it");
  add([](json& b) { b["specsim_version"] = 1; }, "no specsim_version");
  add([](json& b) { b["scenarios"] = json::array(); }, "no scenarios");
  add([](json& b) { b.erase("settings"); }, "no settings");
  add([](json& b) { b = json::array({b}); }, "expected a JSON object");
  expect_bad_input(cases);
}

TEST_CASE("check --replay: malformed replay baselines are errors before any GPU is looked for") {
  const std::string dir = fresh_dir();
  const json good = json::parse(slurp(traces_path("replay/h200/llama-3.1-8b_decode_t1.json")));
  std::vector<BadCase> cases;
  int n = 0;
  auto add = [&](const std::function<void(json&)>& doctor, const std::string& mentions) {
    json b = good;
    doctor(b);
    const std::string f = dir + "/r" + std::to_string(n++) + ".json";
    write_text(f, b.dump());
    cases.push_back({{"check", "--replay", "--baseline", f}, mentions});
  };
  add([](json& b) { b["phases"] = json::array(); }, "no phases");
  add([](json& b) { b["phases"][0]["measured"]["us"] = -1; }, "no positive measured.us");
  add(
      [](json& b) {
        b["phases"][0]["phase"] = std::string(5000, 'p');
        b["phases"][0]["measured"]["us"] = 0;
      },
      "ppp... has no positive");
  add([](json& b) { b["kind"] = "specsim-run"; }, "specsim-replay");
  expect_bad_input(cases);
}
