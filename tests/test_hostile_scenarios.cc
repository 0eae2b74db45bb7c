// Scenario files get the flags' checks: one schema of types, ranges, unknown and duplicate keys
// for a file's settings and SGLang's --config mapping; YAML bounded in what its aliases expand
// to and refused with a second document; a saved scenario reads back identically.
#include <nlohmann/json.hpp>

#include "hostile_cases.h"

using namespace specsim::test;
using nlohmann::json;

namespace {

bool yaml_or_skip() {
  const std::string dir = fresh_dir();
  write_text(dir + "/probe.yaml", "model-path: llama-3.1-8b\n");
  if (run_specsim({"--scenario", dir + "/probe.yaml"}).err.find("built without yaml-cpp") == std::string::npos)
    return true;
  WARN("SKIP: this specsim was built without yaml-cpp (libyaml-cpp-dev)");
  return false;
}

// A scenario file as `--save-scenario` writes it, with `edit` applied to its JSON.
std::string saved_with(const std::string& dir, const std::string& name, void (*edit)(json&)) {
  const std::string base = dir + "/base.json";
  if (!exists(base)) REQUIRE(run_specsim({"--save-scenario", base}).exit_code == 0);
  json j = json::parse(slurp(base));
  edit(j);
  write_text(dir + "/" + name, j.dump(2));
  return dir + "/" + name;
}

}  // namespace

TEST_CASE("scenario files: nested YAML aliases are bounded, not expanded until memory runs out") {
  if (!yaml_or_skip()) return;
  const std::string dir = fresh_dir(), f = dir + "/laughs.yaml";
  // Nine levels of ten aliases each: 10^9 scalars from a file of about 500 bytes.
  std::string y = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 9; ++i) {
    const std::string p = "*a" + std::to_string(i - 1);
    y += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + p;
    for (int k = 1; k < 10; ++k) y += ", " + p;
    y += "]\n";
  }
  y += "model-path: llama-3.1-8b\n";
  write_text(f, y);
  REQUIRE(y.size() < 600);
  expect_bad_input({{{"run", "--scenario", f}, "aliases"}, {{"tune", "--scenario", f}, "aliases"}});
}

TEST_CASE("scenario files: keys given twice, a second YAML document, unknown keys are refused") {
  const std::string dir = fresh_dir();
  write_text(dir + "/dup.json", R"({"model-path": "llama-3.1-8b", "tp": 2, "tp": 4})");
  write_text(dir + "/spellings.json", R"({"model-path": "llama-3.1-8b", "tp": 2, "tp-size": 4})");
  const std::string unknown = saved_with(dir, "unknown.json", [](json& j) { j["settings"]["tp_sise"] = 2; });
  const std::string top = saved_with(dir, "top.json", [](json& j) { j["setings"] = json::object(); });
  const std::string dup_settings = dir + "/dup_settings.json";
  {
    std::string t = slurp(unknown);
    t.replace(t.find("\"tp_sise\""), 9, "\"tp_size\"");  // tp_size twice in settings
    write_text(dup_settings, t);
  }
  std::vector<BadCase> cases = {
      {{"--scenario", dir + "/dup.json"}, "given twice"},
      {{"--scenario", dir + "/spellings.json"}, "given twice, as 'tp' and 'tp-size'"},
      {{"--scenario", unknown}, "settings.tp_sise"},
      {{"--scenario", top}, "setings"},
      {{"--scenario", dup_settings}, "given twice"},
      {{"tune", "--scenario", unknown}, "settings.tp_sise"},
  };
  if (yaml_or_skip()) {
    write_text(dir + "/dup.yaml", "model-path: llama-3.1-8b\ntp: 2\ntp: 4\n");
    write_text(dir + "/spellings.yaml", "model-path: llama-3.1-8b\ntp: 2\ntp_size: 4\ntp-size: 8\n");
    write_text(dir + "/two.yaml", "model-path: llama-3.1-8b\n---\ntp: 4\n");
    cases.push_back({{"--scenario", dir + "/dup.yaml"}, "given twice"});
    cases.push_back({{"--scenario", dir + "/spellings.yaml"}, "given twice"});
    cases.push_back({{"--scenario", dir + "/two.yaml"}, "more than one YAML document"});
    // 14 bytes on which yaml-cpp's LoadAll yields documents forever (found by fuzzing): no hang.
    write_text(dir + "/loop.yaml", std::string(",\"\"  2 { 4\x10\x39\x36}", 14));
    cases.push_back({{"--scenario", dir + "/loop.yaml"}, "loop.yaml"});
  }
  expect_bad_input(cases);
}

TEST_CASE("scenario files: wrong types, out-of-range and fractional values name the file and the field") {
  const std::string dir = fresh_dir();
  const auto s = [&](const char* name, void (*edit)(json&)) { return saved_with(dir, name, edit); };
  const std::vector<BadCase> cases = {
      {{"--scenario", s("str.json", [](json& j) { j["settings"]["batch_size"] = "four"; })}, "settings.batch_size"},
      {{"--scenario", s("neg.json", [](json& j) { j["settings"]["num_gpus"] = -3; })}, "settings.num_gpus"},
      {{"--scenario", s("frac.json", [](json& j) { j["settings"]["context_len"] = 2048.9; })}, "settings.context_len"},
      {{"--scenario", s("big.json", [](json& j) { j["settings"]["tp_size"] = 5000; })}, "settings.tp_size"},
      {{"--scenario", s("bool.json", [](json& j) { j["settings"]["disable_cuda_graph"] = "yes"; })},
       "settings.disable_cuda_graph"},
      {{"--scenario", s("ar.json", [](json& j) { j["settings"]["allreduce"] = json::array({1}); })},
       "settings.allreduce[0]"},
      {{"--scenario", s("notes.json", [](json& j) { j["notes"] = json::array({7}); })}, "notes[0]"},
      {{"--scenario", s("title.json", [](json& j) { j["title"] = 7; })}, ": title"},
      {{"--scenario", s("algo.json", [](json& j) { j["settings"]["nccl_algo_enabled"]["ring"] = 1; })},
       "nccl_algo_enabled.ring"},
      {{"--scenario", s("meas.json", [](json& j) { j["measured"] = 3; })}, ": measured"},
  };
  expect_bad_input(cases);
  for (const auto& c : cases) CHECK(run_specsim(c.args).err.find(dir) != std::string::npos);  // the file is named
  // The flat (SGLang --config) form alike.
  write_text(dir + "/flat_frac.json", R"({"model-path": "llama-3.1-8b", "context-len": 2048.9})");
  write_text(dir + "/flat_neg.json", R"({"model-path": "llama-3.1-8b", "num-gpus": -3})");
  write_text(dir + "/flat_type.json", R"({"model-path": "llama-3.1-8b", "batch-size": [4]})");
  expect_bad_input({{{"--scenario", dir + "/flat_frac.json"}, "context-len"},
                    {{"--scenario", dir + "/flat_neg.json"}, "num-gpus"},
                    {{"--scenario", dir + "/flat_type.json"}, "batch-size"}});
}

TEST_CASE("scenario files: a saved scenario keeps --runtime and exact fixed: latencies, and reads back the same") {
  const std::string dir = fresh_dir(), f = dir + "/s.json";
  count_cases(2);
  const std::vector<std::string> args = {"--runtime", "vllm", "--allreduce", "fixed:12.3456789", "--json"};
  std::vector<std::string> save = args;
  save.insert(save.end(), {"--save-scenario", f});
  const CliResult first = run_specsim(save);
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  const json file = json::parse(slurp(f));
  CHECK(file["settings"]["runtime"] == "vllm");
  CHECK(file["settings"]["allreduce"].dump().find("fixed:12.3456789") != std::string::npos);
  const CliResult again = run_specsim({"--scenario", f, "--json"});
  INFO(again.err);
  REQUIRE(again.exit_code == 0);
  CHECK(json::parse(again.out)["scenarios"] == json::parse(first.out)["scenarios"]);
}

TEST_CASE("scenario files: settings read from acceptance sources are bounded as the flags are") {
  const std::string dir = fresh_dir();
  write_text(dir + "/deep.csv", "steps,topk,num_draft_tokens,accept_len\n1000,8,1000,3.5\n");
  const std::string log =
      slurp(traces_path("sglang-logs/sglang-eagle3-llama3.1-8b-h100-synthetic-from-real-format.log"));
  const auto at = log.find("speculative_num_steps=");
  REQUIRE(at != std::string::npos);
  std::string deep = log;
  deep.replace(at, deep.find_first_of(",)", at) - at, "speculative_num_steps=1000");
  write_text(dir + "/deep.log", deep);
  const std::vector<std::string> box = {"--model-path", "llama-3.1-8b", "--hardware", "h200:nvswitch"};
  auto with_box = [&](std::vector<std::string> a) {
    a.insert(a.end(), box.begin(), box.end());
    return a;
  };
  expect_bad_input({
      {with_box({"tune", "--accept-from", dir + "/deep.csv"}), "deep.csv:2: steps"},
      {with_box({"tune", "--accept-from", dir + "/deep.log"}), "speculative_num_steps"},
  });
}
