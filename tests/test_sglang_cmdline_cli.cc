// SGLang launch commands pasted as is: after `--` or as --sglang-args; HF ids mapped to the zoo,
// each flag listed with its class, SGLang's topk-1 adjustment mirrored.
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <map>
#include <nlohmann/json.hpp>

#include "test_util.h"

using namespace specsim::test;
using nlohmann::json;

namespace {
const std::vector<std::string> kLaunch = {"python",
                                          "-m",
                                          "sglang.launch_server",
                                          "--model-path",
                                          "deepseek-ai/DeepSeek-V3",
                                          "--tp",
                                          "8",
                                          "--trust-remote-code",
                                          "--port",
                                          "30000",
                                          "--host",
                                          "0.0.0.0",
                                          "--speculative-algorithm",
                                          "EAGLE3",
                                          "--speculative-num-steps",
                                          "2",
                                          "--speculative-eagle-topk",
                                          "1",
                                          "--speculative-num-draft-tokens",
                                          "4"};
}  // namespace

TEST_CASE("specsim run -- <SGLang launch command> takes the cycle's flags and lists the rest") {
  std::vector<std::string> args = {"run", "--json", "--accept-len", "2", "--hardware", "h200:nvswitch", "--"};
  args.insert(args.end(), kLaunch.begin(), kLaunch.end());
  const CliResult r = run_specsim(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  CHECK(j["model"]["name"] == "deepseek-v3");
  CHECK(j["settings"]["tp_size"] == 8);
  // topk 1: SGLang sets draft tokens to steps + 1 and warns; so does specsim
  CHECK(j["settings"]["speculative_num_steps"] == 2);
  CHECK(j["settings"]["speculative_num_draft_tokens"] == 3);
  const std::string notes = j["notes"].dump();
  CHECK(notes.find("adjusted to speculative_num_steps + 1 when speculative_eagle_topk == 1") != std::string::npos);
  CHECK(notes.find("deepseek-ai/DeepSeek-V3 -> zoo deepseek-v3") != std::string::npos);
  std::vector<std::string> ignored;
  for (const auto& f : j["pasted_command"]["flags"])
    if (f["class"] == "ignored") ignored.push_back(f["flag"].get<std::string>() + " " + f["value"].get<std::string>());
  CHECK(ignored == std::vector<std::string>{"--trust-remote-code ", "--port 30000", "--host 0.0.0.0"});
}

TEST_CASE("--sglang-args takes the command as one string; specsim's own flags override it") {
  const CliResult r = run_specsim({"--json", "--accept-len", "2", "--hardware", "h200:nvswitch", "--sglang-args",
                                   "python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct "
                                   "--tp-size 2 --mem-fraction-static 0.8",
                                   "--tp-size", "1"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  CHECK(j["model"]["name"] == "llama-3.1-8b");
  CHECK(j["settings"]["tp_size"] == 1);
  const CliResult bad = run_specsim(
      {"--hardware", "h200:nvswitch", "--sglang-args", "python -m sglang.launch_server --model-path x --tp"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--sglang-args: --tp") != std::string::npos);
  const CliResult no_model =
      run_specsim({"--hardware", "h200:nvswitch", "--sglang-args", "python -m sglang.launch_server --tp 8"});
  CHECK(no_model.exit_code == 2);
}

TEST_CASE("a file name where the launch command goes is refused as such, not read as a command without flags") {
  const std::string dir = fresh_dir();
  // `--json FILE`: --json takes no value, so FILE lands where a pasted command goes.
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"run", "--json", dir + "/out.json"},
           {"run", "--model-path", "llama-3.1-8b", "--json", dir + "/sglang-out.json"},
           {"run", "--hardware", "h200:nvswitch", "--", "out.CSV", "--tp", "8"}}) {
    const CliResult r = run_specsim(args);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("is a file name where a launch command goes") != std::string::npos);
    CHECK(r.err.find("--json prints to stdout") != std::string::npos);
    CHECK(r.out.empty());
  }
  CHECK_FALSE(exists(dir + "/out.json"));
  const CliResult quoted = run_specsim({"run", "--hardware", "h200:nvswitch", "--sglang-args", "report.json --tp 8"});
  CHECK(quoted.exit_code == 2);
  CHECK(quoted.err.find("'report.json' is a file name where a launch command goes") != std::string::npos);
  CHECK(quoted.err.find("--json") == std::string::npos);  // nothing about specsim's flags inside a quoted command
  // Launchers in the spellings people paste still run, wrapper scripts included.
  for (const auto& launch : std::vector<std::vector<std::string>>{
           {"CUDA_VISIBLE_DEVICES=0", "python3", "-m", "sglang.launch_server", "--model-path", "llama-3.1-8b"},
           {"/usr/bin/python3.10", "-m", "sglang.launch_server", "--model-path", "llama-3.1-8b"},
           {"./serve.sh", "--model-path", "llama-3.1-8b", "--tp", "1"},
           {"vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"},
           {"--model-path", "llama-3.1-8b"}}) {
    std::vector<std::string> args = {"run", "--hardware", "h200:nvswitch", "--accept-len", "2", "--"};
    args.insert(args.end(), launch.begin(), launch.end());
    const CliResult r = run_specsim(args);
    INFO(launch.front() << ": " << r.err);
    CHECK(r.exit_code == 0);
  }
}

TEST_CASE("vocabularies are padded as SGLang pads them: 128257 runs at tp 8") {
  const std::string dir = fresh_dir();
  json cfg = json::parse(slurp(models_path("llama-3.1-8b/config.json")));
  cfg["vocab_size"] = 128257;
  write_text(dir + "/config.json", cfg.dump());
  const CliResult r = run_specsim({"--json", "--model-path", dir + "/config.json", "--tp-size", "8"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  // the logits all-gather carries the padded 128320 columns (bf16) of the one decode token
  const auto& base = j["scenarios"][0]["phases"].back();
  CHECK(base["name"] == "baseline_decode");
  CHECK(base["allgather_bytes"].get<double>() == Approx(128320.0 * 2));
}

TEST_CASE("every Hugging Face id a shipped real log or published table names maps to its zoo model") {
  // Qwen/Qwen3-8B is the model of the sglang#11948 excerpt; it was refused as "neither a config.json
  // nor a zoo model"
  const std::vector<std::array<std::string, 3>> ids = {
      {"Qwen/Qwen3-8B", "qwen3-8b", "EAGLE3"},
      {"Qwen/Qwen3-30B-A3B-Instruct-2507", "qwen3-30b-a3b", "EAGLE3"},
      {"Qwen/Qwen3-235B-A22B-Instruct-2507", "qwen3-235b-a22b", "EAGLE3"},
      {"deepseek-ai/DeepSeek-R1-0528", "deepseek-r1", "NEXTN"}};
  for (const auto& [id, zoo, algorithm] : ids) {
    INFO(id);
    const CliResult r =
        run_specsim({"run", "--json", "--accept-len", "2", "--hardware", "h200:nvswitch", "--", "python", "-m",
                     "sglang.launch_server", "--model-path", id, "--tp", "8", "--speculative-algorithm", algorithm});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const json j = json::parse(r.out);
    CHECK(j["model"]["name"] == zoo);
    CHECK(j["notes"].dump().find(id + " -> zoo " + zoo) != std::string::npos);
  }
}

TEST_CASE("a pasted vLLM command takes vLLM's defaults: --gpu-memory-utilization 0.9, graphs up to 512 tokens") {
  // At SGLang's default fraction (0.813 on an 80 GB H100) batch 200 of Llama-3.1-8B was refused;
  // vLLM's default is 0.9
  const std::vector<std::string> vllm = {"vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--speculative-config",
                                         R"({"method":"eagle3","num_speculative_tokens":3})"};
  std::vector<std::string> args = {
      "run", "--json", "--accept-len", "2.5", "--hardware", "h100-sxm:nvswitch", "--batch-size", "200", "--"};
  args.insert(args.end(), vllm.begin(), vllm.end());
  const CliResult r = run_specsim(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  CHECK(j["notes"].dump().find("vLLM's default --gpu-memory-utilization 0.9 is the memory-fit fraction") !=
        std::string::npos);
  // vLLM captures graphs by a forward's tokens, up to 512 by default: the plain step of 200 requests
  // runs from a graph, the verify of 200 x 4 tokens does not (before: SGLang's 160 requests, both eager)
  CHECK(j["settings"]["cuda_graph_max_bs"] == 512);
  std::map<std::string, std::string> mode;
  for (const auto& p : j["scenarios"][0]["phases"]) mode[p["name"]] = p["mode"];
  CHECK(mode["verify"] == "eager");
  CHECK(mode["draft_decode"] == "graph");
  CHECK(mode["baseline_decode"] == "graph");
  // with --max-num-seqs N the limit is min(2N, 512) tokens: 64 requests' 256-token verify runs eagerly
  std::vector<std::string> seqs = args;
  seqs.push_back("--max-num-seqs"), seqs.push_back("64");
  seqs[std::find(seqs.begin(), seqs.end(), "--batch-size") - seqs.begin() + 1] = "64";
  const CliResult few = run_specsim(seqs);
  INFO(few.err);
  REQUIRE(few.exit_code == 0);
  CHECK(json::parse(few.out)["settings"]["cuda_graph_max_bs"] == 128);
  // --runtime vllm without a pasted command takes the same defaults (it was refused at SGLang's fraction)
  const CliResult rt = run_specsim({"run", "--json", "--runtime", "vllm", "--model-path", "llama-3.1-8b", "--hardware",
                                    "h100-sxm:nvswitch", "--accept-len", "2.5", "--batch-size", "200"});
  INFO(rt.err);
  REQUIRE(rt.exit_code == 0);
  CHECK(json::parse(rt.out)["notes"].dump().find("vLLM's default --gpu-memory-utilization 0.9") != std::string::npos);
  // specsim's own --mem-fraction-static wins, and the note is not printed
  std::vector<std::string> own = args;
  own.insert(own.begin() + 1, {"--mem-fraction-static", "0.95"});
  const CliResult o = run_specsim(own);
  INFO(o.err);
  REQUIRE(o.exit_code == 0);
  CHECK(json::parse(o.out)["notes"].dump().find("vLLM's default --gpu-memory-utilization") == std::string::npos);
  // given, it is the command's
  args.push_back("--gpu-memory-utilization"), args.push_back("0.5");
  const CliResult small = run_specsim(args);
  CHECK(small.exit_code == 2);
  CHECK(small.err.find("mem_fraction_static 0.500") != std::string::npos);
}

TEST_CASE("labels say what runs: no all-reduce under DP attention, RCCL priced as NCCL on AMD") {
  // before: "nccl (ring/Simple over P2P at 0 B)" for a layout whose cycle runs no all-reduce
  const CliResult dp = run_specsim({"run", "--hardware", "h200:nvswitch", "--accept-len", "2", "--", "python", "-m",
                                    "sglang.launch_server", "--model-path", "deepseek-ai/DeepSeek-V3", "--tp", "8",
                                    "--dp", "8", "--enable-dp-attention", "--speculative-algorithm", "EAGLE3"});
  INFO(dp.err);
  REQUIRE(dp.exit_code == 0);
  CHECK(dp.out.find("== all-reduce: nccl (no all-reduce in the verify or the decode step of this layout)") !=
        std::string::npos);
  CHECK(dp.out.find("at 0 B") == std::string::npos);
  // before: "NCCL path NVL" on an xGMI box
  const CliResult amd = run_specsim({"run", "--hardware", "mi300x:xgmi", "--tp-size", "8", "--model-path",
                                     "deepseek-v3", "--speculative-algorithm", "NEXTN", "--accept-len", "2"});
  INFO(amd.err);
  REQUIRE(amd.exit_code == 0);
  CHECK(amd.out.find("(xGMI; RCCL priced as NCCL over path NVL, a guess)") != std::string::npos);
}
