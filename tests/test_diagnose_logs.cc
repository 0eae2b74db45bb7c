// `specsim diagnose LOG LOG...`: logs of one deployment at several settings -> one scenario whose
// cycle anchors are fitted over all of them.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "test_util.h"

using nlohmann::json;
using namespace specsim::test;

namespace {

const std::string kSteps5 = traces_path("sglang-logs/sglang-eagle3-llama3.1-8b-h100-synthetic-from-real-format.log");
const std::string kSteps3 =
    traces_path("sglang-logs/sglang-eagle3-s3k1-llama3.1-8b-h100-synthetic-from-real-format.log");

double spec_tok_s(const std::vector<std::string>& args) {
  auto full = args;
  full.insert(full.end(), {"--allreduce", "nccl", "--json"});
  const CliResult r = run_specsim(full);
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out)["scenarios"][0]["spec"]["tok_per_s"].get<double>();
}

}  // namespace

TEST_CASE("two logs at two draft settings: one scenario that reproduces both") {
  const std::string dir = fresh_dir(), out = dir + "/both.json";
  const CliResult r = run_specsim({"diagnose", kSteps5, kSteps3, "--hardware", "h100-sxm:nvswitch", "-o", out});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("combined with the other logs") != std::string::npos);
  const json f = json::parse(slurp(out));
  REQUIRE(f["measured"].size() == 2);
  for (const auto& m : f["measured"]) {
    CHECK(m.contains("spec_tok_s"));
    CHECK_FALSE(m.contains("baseline_tok_s"));  // implied per log: dropped
  }
  // Each log's own setting, run from the combined scenario, comes back at its measured tok/s.
  const double s5 = f["measured"][0]["spec_tok_s"]["value"].get<double>();
  const double s3 = f["measured"][1]["spec_tok_s"]["value"].get<double>();
  CHECK(spec_tok_s({"run", "--scenario", out}) == Approx(s5).epsilon(0.02));
  CHECK(spec_tok_s({"run", "--scenario", out, "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
                    "--speculative-num-draft-tokens", "4", "--accept-len",
                    f["measured"][1]["settings"]["accept_len"].dump()}) == Approx(s3).epsilon(0.02));
}

TEST_CASE("a plain-decoding log beside a speculative one is a measured baseline of the combined scenario") {
  const std::string dir = fresh_dir(), out = dir + "/b.json";
  const CliResult r = run_specsim(
      {"diagnose", kSteps5, traces_path("sglang-logs/sglang-baseline-llama3.1-8b-h100-synthetic-from-real-format.log"),
       "--hardware", "h100-sxm:nvswitch", "-o", out});
  REQUIRE(r.exit_code == 0);
  const json f = json::parse(slurp(out));
  int baselines = 0;
  for (const auto& m : f["measured"])
    if (m.contains("baseline_tok_s")) {
      ++baselines;
      CHECK(m["baseline_tok_s"]["source"].get<std::string>().find("implied") == std::string::npos);
    }
  CHECK(baselines == 1);
}

TEST_CASE("logs of different deployments are refused, with no scenario written") {
  const std::string dir = fresh_dir(), out = dir + "/x.json";
  const CliResult r = run_specsim(
      {"diagnose", kSteps5, traces_path("sglang-logs/sglang-nextn-deepseek-v3-tp8-h200-synthetic-from-real-format.log"),
       "--hardware", "h200:nvswitch", "-o", out});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("one deployment per diagnose") != std::string::npos);
  CHECK_FALSE(exists(out));
}
