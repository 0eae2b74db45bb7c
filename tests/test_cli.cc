// The command line: the default run, --json, and bad input (one `error:` line, exit 2).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "test_util.h"

using namespace specsim::test;

TEST_CASE("no arguments prints the built-in scenario") {
  const auto r = run_specsim({});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("deepseek-v3") != std::string::npos);
  CHECK(r.out.find("break-even accept len") != std::string::npos);
  CHECK(r.out.find("custom") != std::string::npos);
  CHECK(r.err.empty());
}

TEST_CASE("the README quotes the built-in scenario's output as it is") {
  // The quick start's first command is `build/specsim`; its output is quoted under "Its real output".
  const std::string readme = slurp(models_path("../README.md"));
  const std::string head = "Its real output";
  const auto at = readme.find(head);
  REQUIRE(at != std::string::npos);
  const auto open = readme.find("```\n", at);
  REQUIRE(open != std::string::npos);
  const auto close = readme.find("```", open + 4);
  REQUIRE(close != std::string::npos);
  const auto r = run_specsim({});
  REQUIRE(r.exit_code == 0);
  // A failure here means README.md's quoted output is stale: paste `build/specsim`'s output there.
  CHECK(readme.substr(open + 4, close - open - 4) == r.out);
}

TEST_CASE("--json prints one JSON object") {
  const auto r = run_specsim({"--json"});
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["scenarios"][0]["spec"]["tok_per_s"].get<double>() == Approx(54.1));
  CHECK(run_specsim({"run", "--json"}).out == r.out);  // deterministic, and `run` is the default
}

TEST_CASE("bad input: one error line naming the field, exit 2") {
  const std::string dir = fresh_dir();
  write_text(dir + "/bad.json", "{ \"architectures\": [\"LlamaForCausalLM\"], ");
  write_text(dir + "/unknown.json", R"({"architectures": ["GPT2LMHeadModel"], "hidden_size": 8})");
  write_text(dir + "/nolayers.json", R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 4096})");
  write_text(dir + "/empty.json", "");
  write_text(dir + "/array.json", "[1, 2, 3]");
  write_text(dir + "/garbled.json", std::string("\x00\xff\xfe{{{\x01", 8));
  write_text(
      dir + "/negheads.json",
      R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": -32, "vocab_size": 128256, "intermediate_size": 14336})");
  write_text(
      dir + "/hugelayers.json",
      R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "num_hidden_layers": 99999999999, "num_attention_heads": 32, "vocab_size": 128256, "intermediate_size": 14336})");
  write_text(
      dir + "/fltheads.json",
      R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32.5, "vocab_size": 128256, "intermediate_size": 14336})");
  // A hardware profile whose number has no source, and one with a negative bandwidth.
  std::string hw = slurp(models_path("hardware/gpus/h200.json"));
  const std::string topo = slurp(models_path("hardware/topologies/nvswitch.json"));
  write_text(dir + "/hw_ok.json", "{\"gpu\": " + hw + ", \"topology\": " + topo + "}");
  auto doctored = nlohmann::json::parse(slurp(dir + "/hw_ok.json"));
  doctored["gpu"]["mem_bw_gbps"]["source"] = "";
  write_text(dir + "/hw_nosource.json", doctored.dump());
  doctored["gpu"]["mem_bw_gbps"] = {{"value", -1}, {"source", "x"}};
  write_text(dir + "/hw_negative.json", doctored.dump());
  doctored = nlohmann::json::parse(slurp(dir + "/hw_ok.json"));
  doctored["gpu"]["gemm_memory_efficiency"]["value"] = 1.5;
  write_text(dir + "/hw_eff.json", doctored.dump());
  doctored = nlohmann::json::parse(slurp(dir + "/hw_ok.json"));
  doctored.erase("topology");
  write_text(dir + "/hw_notopo.json", doctored.dump());
  struct Case {
    std::vector<std::string> args;
    std::string mentions;
  };
  const std::vector<Case> cases = {
      {{"--model-path", dir + "/missing.json"}, "--model-path"},
      {{"--model-path", dir + "/bad.json"}, "malformed JSON"},
      {{"--model-path", dir + "/unknown.json"}, "unknown architecture"},
      {{"--model-path", dir + "/nolayers.json"}, "num_hidden_layers"},
      {{"--model-path", dir}, "config.json"},
      {{"--hardware", "h300:nvswitch"}, "unknown GPU"},
      {{"--hardware", "h200:ring"}, "unknown topology"},
      {{"--hardware", "rtx-4090:nvswitch"}, "NVLink"},
      {{"--tp-size", "3"}, "--tp-size"},
      {{"--tp-size", "0"}, "--tp-size"},
      {{"--tp-size", "16"}, "--tp-size"},
      {{"--accept-len", "3.5"}, "--accept-len"},
      {{"--accept-len", "0.5"}, "--accept-len"},
      {{"--accept-len", "nan"}, "--accept-len"},
      {{"--accept-rate", "1.0"}, "--accept-rate"},
      {{"--batch-size", "0"}, "--batch-size"},
      {{"--batch-size", "abc"}, "--batch-size"},
      {{"--context-len", "-5"}, "--context-len"},
      {{"--measured-baseline-tok-s", "-1"}, "--measured-baseline-tok-s"},
      {{"--measured-allreduce-us", "inf"}, "--measured-allreduce-us"},
      {{"--allreduce", "fixed:0"}, "--allreduce"},
      {{"--allreduce", "fixed:abc"}, "--allreduce"},
      {{"--allreduce", "mpi"}, "--allreduce"},
      {{"--allreduce", "custom:three-shot"}, "--allreduce"},
      {{"--model-path", "llama-3.1-8b", "--tp-size", "2", "--accept-len", "2", "--hardware", "rtx-4090:pcie-switch",
        "--allreduce", "custom"},
       "peer-to-peer"},
      {{"--speculative-algorithm", "MEDUSA"}, "--speculative-algorithm"},
      {{"--eager-phases", "prefill"}, "--eager-phases"},
      {{"--dtype", "int3"}, "--dtype"},
      {{"--nccl-proto", "LL256"}, "--nccl-proto"},
      {{"--model-path", "llama-3.1-8b", "--tp-size", "2"}, "--accept-len"},
      {{"--model-path", models_path("deepseek-v3/eagle3/config.json")}, "draft"},
      {{"--no-such-flag"}, "no-such-flag"},
      {{"frobnicate"}, "unknown command"},
      {{"--model-path", dir + "/empty.json"}, "malformed JSON"},
      {{"--model-path", dir + "/array.json"}, "JSON object"},
      {{"--model-path", dir + "/garbled.json"}, "malformed JSON"},
      {{"--model-path", dir + "/negheads.json"}, "num_attention_heads"},
      {{"--model-path", dir + "/hugelayers.json"}, "num_hidden_layers"},
      {{"--model-path", dir + "/fltheads.json"}, "num_attention_heads"},
      {{"--hardware", dir + "/hw_nosource.json"}, "source"},
      {{"--hardware", dir + "/hw_negative.json"}, "mem_bw_gbps"},
      {{"--hardware", dir + "/hw_eff.json"}, "efficiency"},
      {{"--hardware", dir + "/hw_notopo.json"}, "topology"},
      {{"--hardware", dir + "/missing.json"}, "--hardware"},
      {{"--batch-size", "99999999999"}, "--batch-size"},
      {{"--batch-size", "-3"}, "--batch-size"},
      {{"--context-len", "1e30"}, "--context-len"},
      {{"--accept-rate", "nan"}, "--accept-rate"},
      {{"--accept-len", "2", "--accept-rate", "0.5"}, "--accept-rate"},
      {{"--measured-spec-tok-s", "500"}, "--measured-spec-tok-s"},
      {{"--num-gpus", "4"}, "--num-gpus"},
      {{"--speculative-num-steps", "0"}, "--speculative-num-steps"},
      {{"--speculative-eagle-topk", "4", "--speculative-num-steps", "2", "--speculative-num-draft-tokens", "22"},
       "--speculative-num-draft-tokens"},
      {{"--allreduce", "fixed:-5"}, "--allreduce"},
      {{"--allreduce", "fixed:1e99"}, "--allreduce"},
      {{"--nccl-p2p-level", "FAR"}, "--nccl-p2p-level"},
      {{"--speculative-draft-model-path", models_path("llama-3.1-8b/eagle3/config.json")}, "hidden_size"},
      {{"--speculative-draft-model-path", models_path("llama-3.1-8b/config.json")}, "EAGLE-3"},
  };
  for (const auto& c : cases) {
    std::string shown;
    for (const auto& a : c.args) shown += a + " ";
    INFO(shown);
    const auto r = run_specsim(c.args);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.rfind("error: ", 0) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.find(c.mentions) != std::string::npos);
  }
}

TEST_CASE("a JSON number that overflows a double is bad input, not a crash (found by fuzz_model_config)") {
  const std::string dir = fresh_dir();
  write_text(dir + "/big.json", R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 12e222222222222})");
  const auto r = run_specsim({"--model-path", dir + "/big.json"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind("error: unreadable JSON", 0) == 0);
}

TEST_CASE("topk 1 with draft tokens != steps + 1 runs as SGLang runs it: adjusted, with SGLang's warning") {
  const auto r = run_specsim({"--model-path", "llama-3.1-8b", "--accept-len", "2", "--speculative-eagle-topk", "1",
                              "--speculative-num-steps", "2", "--speculative-num-draft-tokens", "5"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("SGLang warns: speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 when "
                   "speculative_eagle_topk == 1 (5 -> 3)") != std::string::npos);
  CHECK(r.out.find("steps 2, topk 1, draft tokens 3") != std::string::npos);
  // only the draft tokens given: the steps follow, and the output says so
  const auto d = run_specsim({"--speculative-num-draft-tokens", "4"});
  REQUIRE(d.exit_code == 0);
  CHECK(d.out.find("4 draft tokens are a chain of 3 steps: --speculative-num-steps set to 3") != std::string::npos);
  CHECK(d.out.find("steps 3, topk 1, draft tokens 4") != std::string::npos);
}

TEST_CASE("a flag a command does not take is named, with the command whose --help lists them") {
  const auto r = specsim::test::run_specsim({"tune", "--measured-spec-tok-s", "50"});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "error: '--measured-spec-tok-s' is not a flag of specsim tune (`specsim tune --help` lists them)\n");
  const auto v = specsim::test::run_specsim({"sweep", "stray"});
  CHECK(v.exit_code == 2);
  CHECK(v.err.find("'stray' was not expected here: a value without its flag?") != std::string::npos);
}
