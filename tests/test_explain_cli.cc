// Measurements that contradict each other under the settings a user pasted: the explanation
// search finds the assumption under which every one holds, uses it and says so; it refuses,
// naming the contradiction, when the user stated away every assumption that could explain it.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "run_json.h"
#include "test_util.h"

using namespace specsim::test;
using nlohmann::json;

namespace {

// The built-in scenario's engineer, as a new user: three measurements and the launch command.
std::vector<std::string> pasted(std::vector<std::string> extra = {}, bool json = false) {
  std::vector<std::string> a = {"--hardware",
                                "rtx-pro-6000:pcie-numa",
                                "--measured-spec-tok-s",
                                "54.1",
                                "--measured-baseline-tok-s",
                                "89.5",
                                "--measured-allreduce-us",
                                "200"};
  a.insert(a.end(), extra.begin(), extra.end());
  if (json) a.push_back("--json");  // before the pasted command, which takes every token after --
  for (const char* t : {"--",
                        "python",
                        "-m",
                        "sglang.launch_server",
                        "--model-path",
                        "deepseek-ai/DeepSeek-V3",
                        "--tp",
                        "8",
                        "--speculative-algorithm",
                        "EAGLE3",
                        "--speculative-draft-model-path",
                        "lmsys/DeepSeek-V3-EAGLE3",  // as pasted: the zoo's draft stands in, said as an assumption
                        "--speculative-num-steps",
                        "2",
                        "--speculative-eagle-topk",
                        "1",
                        "--speculative-num-draft-tokens",
                        "3",
                        "--cuda-graph-max-bs",
                        "128"})
    a.push_back(t);
  return a;
}

const json& nccl(const json& j) {
  for (const auto& sc : j["scenarios"])
    if (sc["label"] == "nccl") return sc;
  FAIL("no nccl row");
  return j;
}

json run_pasted_json(std::vector<std::string> extra = {}) {
  const CliResult r = run_specsim(pasted(std::move(extra), true));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out);
}

}  // namespace

TEST_CASE("the pasted launch command with its measurements reproduces the built-in scenario") {
  const json j = run_pasted_json();
  const json& row = nccl(j);
  CHECK(row["baseline"]["tok_per_s"].get<double>() == Approx(89.5).epsilon(0.01));
  CHECK(row["spec"]["tok_per_s"].get<double>() == Approx(54.1).epsilon(0.01));
  const json built_in = run_json({});
  CHECK(row["spec"]["tok_per_s"].get<double>() ==
        Approx(nccl(built_in)["spec"]["tok_per_s"].get<double>()).epsilon(0.01));
  REQUIRE(j.contains("explanation"));
  const json& e = j["explanation"];
  // eager verify explains the 200 us: the baseline's graphed all-reduces cannot cost that much
  CHECK(e["assumed"].get<std::string>().find("verify ran eagerly") != std::string::npos);
  CHECK(e["flags"].dump().find("--eager-phases verify") != std::string::npos);
  CHECK(e["conflict_as_given"].get<std::string>().find("--measured-baseline-tok-s") != std::string::npos);
  CHECK(e["tried"].get<int>() > 1);
  CHECK_FALSE(e["runner_up"].is_null());
  CHECK(j["settings"]["eager_phases"].dump().find("verify") != std::string::npos);
  // the text report says it, with the flag that states it and the runner-up
  const CliResult t = run_specsim(pasted());
  REQUIRE(t.exit_code == 0);
  CHECK(t.out.find("note: assumption: verify ran eagerly") != std::string::npos);
  CHECK(t.out.find("state it with --eager-phases verify") != std::string::npos);
  CHECK(t.out.find("note: runner-up: ") != std::string::npos);
}

TEST_CASE("stating the assumption gives the same run with nothing assumed") {
  const json j = run_pasted_json();
  std::vector<std::string> stated;
  for (const auto& f : j["explanation"]["flags"]) {
    const std::string s = f.get<std::string>();
    for (std::size_t a = 0, b; a < s.size(); a = b + 1) {
      b = s.find(' ', a);
      if (b == std::string::npos) b = s.size();
      stated.push_back(s.substr(a, b - a));
    }
  }
  const json k = run_pasted_json(stated);
  CHECK_FALSE(k.contains("explanation"));
  CHECK(nccl(k)["spec"]["tok_per_s"].get<double>() == Approx(nccl(j)["spec"]["tok_per_s"].get<double>()));
}

TEST_CASE("with every assumption stated away, the contradiction is refused with what was tried") {
  const CliResult r = run_specsim(pasted({"--eager-phases", "none"}));
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind("error: measured baseline 89.5 tok/s", 0) == 0);
  // what a step far under the model's may be: a unit, more requests than the batch, the profile
  CHECK(r.err.find("a wrong unit, tok/s of more requests than --batch-size 1, or this GPU's profile far off?") !=
        std::string::npos);
  CHECK(r.err.find("assumptions tried") != std::string::npos);
  CHECK(r.err.find("(--measured-baseline-tok-s)") != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

TEST_CASE("consistent measurements need no assumption") {
  CHECK_FALSE(run_json({}).contains("explanation"));
  CHECK_FALSE(run_json({"--model-path", "llama-3.1-8b", "--tp-size", "2", "--accept-len", "3",
                        "--measured-baseline-tok-s", "150"})
                  .contains("explanation"));
}
