// What the acceptance model is fitted from: the --acceptance file (strict schema), SGLang logs
// (server_args + accept len lines; the server_args parser itself is tested in test_ingest.cc) and
// bench_speculative.py results.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "accept/acceptance_file.h"
#include "accept/observations.h"
#include "util/error.h"

using namespace specsim;
using namespace specsim::accept;
using nlohmann::json;

namespace {

std::string refusal(const json& j) {
  try {
    acceptance_from_json(j, "acc.json");
  } catch (const InputError& e) {
    return e.line();
  }
  return "";
}

const char* kServerArgs =
    "[2025-06-01 10:00:00 TP0] server_args=ServerArgs(model_path='meta-llama/Llama-3.1-8B-Instruct', tp_size=1, "
    "speculative_algorithm='EAGLE3', speculative_draft_model_path='x/y', speculative_num_steps={}, "
    "speculative_eagle_topk={}, speculative_num_draft_tokens={}, cuda_graph_max_bs=160)\n";

std::string decode(double accept) {
  return "[2025-06-01 10:00:05 TP0] Decode batch, #running-req: 1, #token: 186, token usage: 0.00, accept len: " +
         std::to_string(accept) + ", cuda graph: True, gen throughput (token/s): 178.86, #queue-req: 0\n";
}

std::string server_args(int s, int k, int n) {
  std::string t = kServerArgs;
  for (int v : {s, k, n}) t.replace(t.find("{}"), 2, std::to_string(v));
  return t;
}

}  // namespace

TEST_CASE("--acceptance file: rates and coverage as given, the default shape without coverage") {
  const auto a = acceptance_from_json(
      json::parse(R"({"depth_rates": [0.8, 0.6], "topk_coverage": [[0.8, 0.9, 0.95], [0.6, 0.7]], "source": "s"})"),
      "acc.json");
  CHECK(a.source == "s");
  CHECK(a.model.rate(1) == 0.8);
  CHECK(a.model.coverage_at(1, 3) == 0.95);
  CHECK(a.model.coverage_at(1, 8) == 0.95);  // no coverage gained past the last k given
  CHECK(a.model.coverage_at(5, 2) == 0.7);   // deeper depths reuse the last row
  const auto d = acceptance_from_json(json::parse(R"({"depth_rates": [0.75]})"), "acc.json");
  CHECK(d.model.coverage_at(1, 4) == Approx(1 - 0.25 * 0.5));  // (1 - a) * 4^-0.5
  CHECK(d.note.find("default shape") != std::string::npos);
}

TEST_CASE("--acceptance file: every schema violation is refused naming the field") {
  CHECK(refusal(json::parse(R"({"depth_rates": [1.2]})")).find("acc.json:depth_rates[0]") != std::string::npos);
  CHECK(refusal(json::parse(R"({"depth_rates": [-0.1]})")).find("outside [0, 1]") != std::string::npos);
  CHECK(refusal(json::parse(R"({"depth_rates": ["x"]})")).find("must be a number") != std::string::npos);
  CHECK(refusal(json::parse(R"({"depth_rates": []})")).find("1..64 entries") != std::string::npos);
  CHECK(refusal(json::parse(R"({"rates": [0.5]})")).find("unknown key 'rates'") != std::string::npos);
  CHECK(refusal(json::parse(R"({"topk_coverage": [[0.5]]})")).find("missing depth_rates") != std::string::npos);
  CHECK(refusal(json::parse(R"([0.5])")).find("JSON object") != std::string::npos);
  // Coverage must not fall with k, must start at the rate, and needs one row per depth.
  CHECK(refusal(json::parse(R"({"depth_rates": [0.8], "topk_coverage": [[0.8, 0.9, 0.85]]})"))
            .find("acc.json:topk_coverage[0][2]") != std::string::npos);
  CHECK(refusal(json::parse(R"({"depth_rates": [0.8], "topk_coverage": [[0.7, 0.9]]})"))
            .find("acc.json:topk_coverage[0][0]") != std::string::npos);
  CHECK(
      refusal(json::parse(R"({"depth_rates": [0.8, 0.7], "topk_coverage": [[0.8, 0.9]]})")).find("one row per depth") !=
      std::string::npos);
  CHECK(refusal(json::parse(R"({"depth_rates": [0.8], "topk_coverage": [[0.8, 1.01]]})")).find("outside [0, 1]") !=
        std::string::npos);
}

TEST_CASE("SGLang log: accept lens averaged per setting, each under the server_args above it") {
  const std::string log = server_args(3, 1, 4) + decode(2.5) + decode(3.0) + server_args(5, 4, 8) + decode(3.4);
  const auto obs = observations_from_log(log, "a.log");
  REQUIRE(obs.size() == 2);
  CHECK(obs[0].steps == 3);
  CHECK(obs[0].draft_tokens == 4);
  CHECK(obs[0].accept_len == Approx(2.75));
  CHECK(obs[1].topk == 4);
  CHECK(obs[1].accept_len == Approx(3.4));
  // Accept lens without settings, or a log without speculation, are refused.
  CHECK_THROWS_AS(observations_from_log(decode(2.5), "b.log"), InputError);
  CHECK_THROWS_AS(
      observations_from_log("Decode batch, #running-req: 1, #token: 5, gen throughput (token/s): 50.0\n", "c.log"),
      InputError);
}

TEST_CASE("bench_speculative.py JSON lines and CSV results") {
  const std::string jl =
      R"({"batch_size": 1, "steps": 0, "topk": 0, "num_draft_tokens": 0, "acc_length": 1.0, "step_time": 0.01, "speed": 100})"
      "\n"
      R"({"batch_size": 1, "steps": 3, "topk": 1, "num_draft_tokens": 4, "acc_length": 2.6, "step_time": 0.012})"
      "\n"
      R"({"batch_size": 4, "steps": 3, "topk": 1, "num_draft_tokens": 4, "acc_length": 2.8, "step_time": 0.013})"
      "\n"
      R"({"batch_size": 1, "steps": 5, "topk": 8, "num_draft_tokens": 32, "acc_length": 4.1})"
      "\n";
  const auto obs = observations_from_bench(jl, "b.jsonl");
  REQUIRE(obs.size() == 2);  // plain decoding skipped, the two batch sizes of one setting averaged
  CHECK(obs[0].accept_len == Approx(2.7));
  CHECK(obs[1].draft_tokens == 32);
  const auto csv = observations_from_bench("steps,topk,num_draft_tokens,accept_len\n3,1,4,2.5\n5,4,16,3.5\n", "b.csv");
  REQUIRE(csv.size() == 2);
  CHECK(csv[1].topk == 4);
  CHECK(csv[1].accept_len == 3.5);
  CHECK_THROWS_AS(observations_from_bench("steps,topk,accept_len\n3,1,2.5\n", "b.csv"), InputError);
  CHECK_THROWS_AS(observations_from_bench("steps,topk,num_draft_tokens,accept_len\n3,1,x,2.5\n", "b.csv"), InputError);
  CHECK_THROWS_AS(observations_from_bench(R"({"steps": 2.5, "topk": 1, "num_draft_tokens": 4, "acc_length": 2})", "b"),
                  InputError);
}
