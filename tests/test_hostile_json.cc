// Deep or odd JSON: nesting is bounded on every JSON input, echoed values are cut short, and
// replay reports are checked as strictly by `calibrate --from` as by `ingest`.
#include <nlohmann/json.hpp>

#include "hostile_cases.h"

using namespace specsim::test;
using nlohmann::json;

namespace {

std::string nested(int levels) { return std::string(levels, '[') + std::string(levels, ']'); }

// `text` (a JSON object) with one more field holding `value` (raw JSON text).
std::string with_field(const std::string& text, const std::string& value) {
  const auto at = text.find('{');
  return text.substr(0, at + 1) + "\"extra\": " + value + ", " + text.substr(at + 1);
}

std::string hw_profile() {
  return "{\"gpu\": " + slurp(models_path("hardware/gpus/h200.json")) +
         ", \"topology\": " + slurp(models_path("hardware/topologies/nvswitch.json")) + "}";
}

const std::string kReport = "replay/h200/llama-3.1-8b_decode_t1.json";

}  // namespace

TEST_CASE("json: nesting deeper than 64 levels is refused on every JSON input") {
  const std::string dir = fresh_dir(), deep = nested(100000);
  write_text(dir + "/config.json", with_field(slurp(models_path("llama-3.1-8b/config.json")), deep));
  write_text(dir + "/hw.json", with_field(hw_profile(), deep));
  const auto base = run_specsim({"--json"});
  REQUIRE(base.exit_code == 0);
  write_text(dir + "/base.json", with_field(base.out, deep));
  write_text(dir + "/report.json", with_field(slurp(traces_path(kReport)), deep));
  write_text(dir + "/torch.json", "{\"traceEvents\": [], \"x\": " + deep + "}");
  write_text(dir + "/deep65.json", with_field(hw_profile(), nested(65)));
  const std::string out = dir + "/out.json";
  expect_bad_input({
      {{"--model-path", dir + "/config.json"}, "nested deeper than 64"},
      {{"--hardware", dir + "/hw.json"}, "nested deeper than 64"},
      {{"--hardware", dir + "/deep65.json"}, "nested deeper than 64"},
      {{"check", "--baseline", dir + "/base.json"}, "nested deeper than 64"},
      {{"calibrate", "--from", dir + "/report.json", "--hardware", "h200:nvswitch", "-o", out}, "report.json"},
      {{"calibrate", "--nccl-tests", traces_path("nccl-tests-a100sxm4x8-nvlink.txt"), "--hardware", dir + "/hw.json",
        "-o", out},
       "nested deeper than 64"},
      {{"ingest", "--replay-report", dir + "/report.json"}, "nested deeper than 64"},
      {{"ingest", "--torch-trace", dir + "/torch.json"}, "nested deeper than 64"},
      {{"run", "--anchor-trace", dir + "/torch.json"}, "nested deeper than 64"},
  });
  CHECK_FALSE(exists(out));
}

TEST_CASE("json: 60 levels inside an unused field are still read") {
  const std::string dir = fresh_dir();
  write_text(dir + "/hw.json", with_field(hw_profile(), nested(60)));
  count_cases();
  CHECK(run_specsim({"--hardware", dir + "/hw.json"}).exit_code == 0);
}

TEST_CASE("json: replay reports that `ingest` refuses are refused by `calibrate --from` too") {
  const std::string dir = fresh_dir(), out = dir + "/out.json";
  const json good = json::parse(slurp(traces_path(kReport)));
  std::vector<BadCase> cases;
  auto add = [&](const std::string& name, const std::function<void(json&)>& doctor, const std::string& mentions) {
    json r = good;
    doctor(r);
    write_text(dir + "/" + name, r.dump());
    cases.push_back({{"calibrate", "--from", dir + "/" + name, "--hardware", "h200:nvswitch", "-o", out}, mentions});
    cases.push_back({{"ingest", "--replay-report", dir + "/" + name}, ".ops"});
  };
  add(
      "noops.json", [](json& r) { r["phases"][0]["ops"] = json::array(); }, "phases[0].ops");
  add(
      "negm.json", [](json& r) { r["phases"][0]["ops"][0]["m"] = -5; }, "ops[0].m");
  add(
      "hugerepeat.json", [](json& r) { r["phases"][0]["ops"][0]["repeat"] = 1000000000; }, "ops[0].repeat");
  add(
      "zerous.json", [](json& r) { r["phases"][0]["ops"][0]["measured_us"] = 0; }, "ops[0].measured_us");
  expect_bad_input(cases);
  CHECK_FALSE(exists(out));
}

TEST_CASE("json: values echoed in an error line are cut short") {
  const std::string dir = fresh_dir();
  auto base = json::parse(run_specsim({"--json"}).out);
  base["scenarios"][0]["label"] = std::string(100000, 'x');
  base["scenarios"][0].erase("phases");
  write_text(dir + "/base.json", base.dump());
  auto cfg = json::parse(slurp(models_path("llama-3.1-8b/config.json")));
  cfg["quantization_config"] = {{"quant_method", std::string(100000, 'q') + "\n"}};
  write_text(dir + "/config.json", cfg.dump());
  cfg["architectures"] = {std::string(100000, 'A')};
  write_text(dir + "/arch.json", cfg.dump());
  expect_bad_input({{{"--model-path", dir + "/arch.json"}, "arch.json"}});
  CHECK(run_specsim({"--model-path", dir + "/arch.json"}).err.size() < 1100);
  expect_bad_input({{{"check", "--baseline", dir + "/base.json"}, "has no phases"},
                    {{"--model-path", dir + "/config.json"}, "quant"}});
  for (const auto& args : {std::vector<std::string>{"check", "--baseline", dir + "/base.json"},
                           std::vector<std::string>{"--model-path", dir + "/config.json"}})
    CHECK(run_specsim(args).err.size() < 600);
}
