// Files the tool must never harm: every file a run reads, however it was named (a flag, a
// profile a scenario file names, the model of a pasted command, the runtime profile, the draft
// config), is checked against every output; the output is refused and the input left whole.
#include <sys/stat.h>

#include "hostile_cases.h"

using namespace specsim::test;

namespace {

struct Inputs {
  std::string dir, model, draft, runtime, hardware, scenario;
};

Inputs copies() {
  Inputs in;
  in.dir = fresh_dir();
  ::mkdir((in.dir + "/model").c_str(), 0755);
  ::mkdir((in.dir + "/draft").c_str(), 0755);
  in.model = in.dir + "/model/config.json";
  in.draft = in.dir + "/draft/config.json";
  in.runtime = in.dir + "/runtime.json";
  in.hardware = in.dir + "/hw.json";
  in.scenario = in.dir + "/s.json";
  write_text(in.model, slurp(models_path("llama-3.1-8b/config.json")));
  write_text(in.draft, slurp(models_path("llama-3.1-8b/eagle3/config.json")));
  write_text(in.runtime, slurp(models_path("runtime/sglang.json")));
  write_text(in.hardware, slurp(models_path("hardware/h200-calibrated.json")));
  write_text(in.scenario, R"({"format": "specsim-scenario-1", "model": ")" + in.model + R"(", "hardware": ")" +
                              in.hardware + R"(", "settings": {"tp_size": 1}})");
  return in;
}

}  // namespace

TEST_CASE("inputs kept: an output that is a file the run read is refused, however the input was named") {
  const Inputs in = copies();
  const std::string log = traces_path("sglang-logs/sglang-eagle3-llama3.1-8b-h100-synthetic-from-real-format.log");
  const std::vector<std::string> files = {in.model, in.draft, in.runtime, in.hardware, in.scenario};
  std::vector<std::string> before;
  for (const auto& f : files) before.push_back(slurp(f));
  REQUIRE(run_specsim({"--model-path", in.model, "--hardware", "h200:nvswitch"}).exit_code == 0);
  expect_bad_input({
      // the runtime profile
      {{"--model-path", in.model, "--hardware", "h200:nvswitch", "--runtime", in.runtime, "--save-scenario",
        in.runtime},
       "is also an input"},
      // the draft config
      {{"--model-path", in.model, "--speculative-draft-model-path", in.draft, "--hardware", "h200:nvswitch",
        "--accept-len", "2", "--save-scenario", in.draft},
       "is also an input"},
      // the model named inside a pasted SGLang command
      {{"run", "--hardware", "h200:nvswitch", "--save-scenario", in.model, "--", "python", "-m", "sglang.launch_server",
        "--model-path", in.model},
       "is also an input"},
      // a hardware profile the scenario file names
      {{"--scenario", in.scenario, "--save-scenario", in.hardware}, "is also an input"},
      // diagnose's profile given as its own output
      {{"diagnose", log, "--hardware", in.hardware, "-o", in.hardware}, "is also an input"},
      // the model as the trace of the same run
      {{"--model-path", in.model, "--hardware", "h200:nvswitch", "--cycles", "3", "--trace", in.model},
       "is also an input"},
  });
  for (std::size_t i = 0; i < files.size(); ++i) {
    INFO(files[i]);
    CHECK(slurp(files[i]) == before[i]);
  }
}

TEST_CASE("inputs kept: an output replaced keeps its permissions") {
  const std::string dir = fresh_dir(), out = dir + "/private.json";
  write_text(out, "old\n");
  ::chmod(out.c_str(), 0600);
  count_cases();
  REQUIRE(run_specsim({"--save-scenario", out}).exit_code == 0);
  struct stat st {};
  REQUIRE(::stat(out.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK(slurp(out).find("specsim-scenario-1") != std::string::npos);
}
