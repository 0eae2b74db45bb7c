// SGLang's bench_speculative.py results: read, turned into a scenario anchored to every row, and
// refused with FILE:LINE when a line is not the script's output.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "ingest/bench_speculative.h"
#include "test_util.h"
#include "util/error.h"

using nlohmann::json;
using namespace specsim::test;

namespace {

const std::string kSample = traces_path("bench-speculative/llama31-8b-h100-eagle3-synthetic.jsonl");

std::vector<std::string> save_args(const std::string& in, const std::string& out) {
  return {"ingest",
          "--bench-speculative",
          in,
          "--model-path",
          "llama-3.1-8b",
          "--hardware",
          "h100-sxm:nvswitch",
          "--speculative-algorithm",
          "EAGLE3",
          "--save-scenario",
          out};
}

}  // namespace

TEST_CASE("bench_speculative.py rows: plain decoding and speculative settings with their per-stream tok/s") {
  const auto rows = specsim::ingest::read_bench_speculative(kSample, "--bench-speculative");
  REQUIRE(rows.size() == 6);
  CHECK_FALSE(rows[0].speculative());
  CHECK(rows[2].steps == 3);
  CHECK(rows[2].acc_length == Approx(2.83));
  CHECK(rows[2].speed == Approx(rows[2].acc_length / rows[2].step_time_s).epsilon(0.001));
  CHECK(rows[5].batch_size == 4);
  const CliResult r = run_specsim({"ingest", "--bench-speculative", kSample, "--json"});
  REQUIRE(r.exit_code == 0);
  CHECK(json::parse(r.out)["rows"].size() == 6);
}

TEST_CASE("the saved scenario is anchored to every row: baselines and cycles fitted over the settings") {
  const std::string dir = fresh_dir(), out = dir + "/bench.json";
  REQUIRE(run_specsim(save_args(kSample, out)).exit_code == 0);
  const json f = json::parse(slurp(out));
  REQUIRE(f["measured"].size() == 6);
  // The script's speed is one request stream's: the batch's tok/s is it times the batch size.
  bool saw_bs4 = false;
  for (const auto& m : f["measured"])
    if (m["settings"]["batch_size"] == 4 && m.contains("spec_tok_s")) {
      CHECK(m["spec_tok_s"]["value"].get<double>() == Approx(4 * 224.083));
      saw_bs4 = true;
    }
  CHECK(saw_bs4);
  CHECK(f["settings"]["speculative_num_steps"] == 3);  // the fastest setting at bs 1
  const CliResult r = run_specsim({"run", "--scenario", out, "--allreduce", "nccl", "--json"});
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  int cycles = 0;
  for (const auto& a : j["settings"]["anchors"]) cycles += a["kind"] == "cycle";
  CHECK(cycles == 4);
  // Four settings, two fitted terms: the scenario's own setting comes back near its measurement.
  CHECK(j["scenarios"][0]["spec"]["tok_per_s"].get<double>() == Approx(243.336).epsilon(0.05));
  // The plain decode measured at the run's batch anchors it; bs 4's is carried only to bs 4.
  CHECK(j["scenarios"][0]["baseline"]["tok_per_s"].get<double>() == Approx(140.449).epsilon(0.001));
  const CliResult bs4 = run_specsim({"run", "--scenario", out, "--allreduce", "nccl", "--json", "--batch-size", "4"});
  REQUIRE(bs4.exit_code == 0);
  const json j4 = json::parse(bs4.out);
  CHECK(j4["scenarios"][0]["baseline"]["tok_per_s"].get<double>() == Approx(4 * 131.406).epsilon(0.005));
  // bs 4's one cycle is its own terms: the bs 1 settings are not fitted into it.
  CHECK(j4["scenarios"][0]["spec"]["tok_per_s"].get<double>() == Approx(4 * 224.083).epsilon(0.01));
  int unused_at_other_batch = 0;
  for (const auto& a : j4["settings"]["anchors"])
    for (const auto& n : a["does_not_apply"])
      unused_at_other_batch += n.get<std::string>().rfind("measured at bs 1;", 0) == 0;
  CHECK(unused_at_other_batch == 4);  // the bs 1 baseline and its 3 cycles
}

TEST_CASE("a line that is not bench_speculative.py's output is refused with FILE:LINE") {
  const std::string dir = fresh_dir();
  auto refuse = [&](const std::string& text, const std::string& says) {
    write_text(dir + "/r.jsonl", text);
    const CliResult r = run_specsim({"ingest", "--bench-speculative", dir + "/r.jsonl"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("r.jsonl:") != std::string::npos);
    CHECK(r.err.find(says) != std::string::npos);
  };
  const std::string ok =
      R"({"batch_size": 1, "steps": 2, "topk": 1, "num_draft_tokens": 3, "acc_length": 2.45, "step_time": 0.01051, "speed": 233.111})";
  refuse(ok + "\n{not json\n", "not a JSON object");
  refuse(
      R"({"batch_size": 1, "steps": 2, "topk": 1, "num_draft_tokens": 3, "acc_length": 2.45, "step_time": 0.01051, "speed": 500})",
      "not acc_length / step_time");
  refuse(
      R"({"batch_size": 1, "steps": 2, "topk": 0, "num_draft_tokens": 3, "acc_length": 2.45, "step_time": 0.01051, "speed": 233.111})",
      "needs topk");
  refuse(
      R"({"batch_size": 1.5, "steps": 2, "topk": 1, "num_draft_tokens": 3, "acc_length": 2.45, "step_time": 0.01051, "speed": 233.111})",
      "\"batch_size\"");
  refuse(
      R"({"batch_size": 1, "steps": 2, "topk": 1, "num_draft_tokens": 3, "acc_length": 4.5, "step_time": 0.01051, "speed": 428.16})",
      "outside 1..steps + 1");
}

TEST_CASE("a scenario needs a speculative row and the deployment; nothing is written on a refusal") {
  const std::string dir = fresh_dir(), out = dir + "/s.json";
  write_text(
      dir + "/plain.jsonl",
      R"({"batch_size": 1, "steps": 0, "topk": 0, "num_draft_tokens": 0, "acc_length": 1.0, "step_time": 0.00712, "speed": 140.449})"
      "\n");
  CliResult r = run_specsim(save_args(dir + "/plain.jsonl", out));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("no speculative row") != std::string::npos);
  CHECK_FALSE(exists(out));
  r = run_specsim({"ingest", "--bench-speculative", kSample, "--save-scenario", out});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--model-path") != std::string::npos);
  r = run_specsim({"ingest", "--bench-speculative", kSample, "--model-path", "llama-3.1-8b"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--save-scenario") != std::string::npos);
  r = run_specsim(save_args(kSample, kSample));  // the output may not be the input
  CHECK(r.exit_code == 2);
  CHECK_FALSE(exists(out));
}
