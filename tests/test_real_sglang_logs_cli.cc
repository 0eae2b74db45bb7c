// Every real server log the repo ships (traces/sglang-logs/real-*.log, traces/vllm-logs/real-*.log)
// goes through every command that reads server logs, with the deployment its post states: ingest, diagnose (and a run
// of its scenario), run --accept-from / --baseline-from, check --accept-from and tune --accept-from. A log of the other
// kind (plain for --accept-from, speculative for --baseline-from) is refused with a hint that names the flag that reads
// it.
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "refused.h"
#include "run_json.h"
#include "test_util.h"

using namespace specsim::test;
using nlohmann::json;

namespace {

// What each post states about the deployment (traces/sglang-logs/README.md). A post that names no
// model or GPU gets a zoo stand-in: the commands must still read its lines.
struct PostDeployment {
  std::vector<std::string> deployment;  // --model-path, --hardware, --tp-size
  std::vector<std::string> settings;    // the speculative flags the post states; empty: plain decoding
  int batch = 1;                        // the #running-req of its decode lines
};

const std::map<std::string, PostDeployment>& real_log_posts() {
  static const std::map<std::string, PostDeployment> posts = {
      // Qwen3-8B + AngelSlim EAGLE-3, tp 2 on A800-SXM4-80GB (the zoo's A100 SXM: the same die)
      {"real-eagle3-idle-gap-sglang-11948.log",
       {{"--model-path", "qwen3-8b", "--hardware", "a100-sxm:nvswitch", "--tp-size", "2"},
        {"--speculative-algorithm", "EAGLE3", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
         "--speculative-num-draft-tokens", "4"},
        1}},
      // no model or GPU named: a stand-in
      {"real-gpu-token-hisparse-sglang-22331.log",
       {{"--model-path", "llama-3.1-8b", "--hardware", "h100-sxm:nvswitch", "--tp-size", "1"}, {}, 5}},
      {"real-token-hisparse-before-sglang-22331.log",
       {{"--model-path", "llama-3.1-8b", "--hardware", "h100-sxm:nvswitch", "--tp-size", "1"}, {}, 5}},
      // vLLM (traces/vllm-logs/README.md). Qwen3.8-27B with 3 MTP tokens on 2x RTX 3060: stand-ins
      {"real-mtp-steady-qwen38-27b-rtx3090-68.log",
       {{"--model-path", "qwen3-8b", "--hardware", "rtx-4090:pcie-switch", "--tp-size", "2"},
        {"--speculative-algorithm", "EAGLE3", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
         "--speculative-num-draft-tokens", "4"},
        1}},
      // Qwen3.6-27B with 6 MTP tokens on 2x RTX 3090: stand-ins
      {"real-mtp-prompt-club-3090-105.log",
       {{"--model-path", "qwen3-8b", "--hardware", "rtx-4090:pcie-switch", "--tp-size", "2"},
        {"--speculative-algorithm", "EAGLE3", "--speculative-num-steps", "6", "--speculative-eagle-topk", "1",
         "--speculative-num-draft-tokens", "7"},
        1}},
      // two engines of a data-parallel server on Ascend NPUs, 3 MTP tokens, no model named: stand-ins
      {"real-dp-engines-vllm-ascend-12521.log",
       {{"--model-path", "qwen3-8b", "--hardware", "h100-sxm:nvswitch", "--tp-size", "1"},
        {"--speculative-algorithm", "EAGLE3", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
         "--speculative-num-draft-tokens", "4"},
        1}},
      // Qwen3-30B-A3B, no GPU named: a stand-in
      {"real-plain-qwen3-30b-a3b-vllm-30599.log",
       {{"--model-path", "qwen3-30b-a3b", "--hardware", "h100-sxm:nvswitch", "--tp-size", "1"}, {}, 1}},
      // qwen3.6-27B on an RTX 4090D: a stand-in that fits one 32 GB card
      {"real-plain-journald-vllm-40630.log",
       {{"--model-path", "qwen3-8b", "--hardware", "rtx-5090:pcie-switch", "--tp-size", "1"}, {}, 2}},
  };
  return posts;
}

std::vector<std::string> joined(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

TEST_CASE("every real server log goes through every command that reads server logs") {
  const std::string dir = fresh_dir();
  int real = 0;
  for (const auto& path : server_log_files()) {
    const std::filesystem::directory_entry e(path);
    const std::string name = e.path().filename().string(), file = e.path().string();
    if (e.path().extension() != ".log" || name.rfind("real-", 0) != 0) continue;
    INFO(name);
    ++real;
    // a new real log says what its post states, here and in traces/sglang-logs/README.md
    REQUIRE(real_log_posts().count(name) == 1);
    const PostDeployment& post = real_log_posts().at(name);
    const bool speculative = !post.settings.empty();
    const std::vector<std::string> deployment = joined(post.deployment, post.settings);
    // a vLLM log's measurements are priced on vLLM's runtime
    const bool vllm_log = e.path().parent_path().filename() == "vllm-logs";
    const std::vector<std::string> priced = vllm_log ? joined(deployment, {"--runtime", "vllm"}) : deployment;

    CHECK(run_specsim({"ingest", "--sglang-log", file}).exit_code == 0);
    const std::string scenario = dir + "/" + name + ".yaml";
    std::vector<std::string> diag = {"diagnose", file, "-o", scenario};
    for (std::size_t i = 0; i < deployment.size(); i += 2)  // diagnose names the model --model
      diag.insert(diag.end(), {deployment[i] == "--model-path" ? "--model" : deployment[i], deployment[i + 1]});
    const CliResult d = run_specsim(diag);
    INFO(d.err);
    REQUIRE(d.exit_code == 0);
    CHECK(run_specsim({"--scenario", scenario}).exit_code == 0);

    if (speculative) {
      const json r = run_json(joined(deployment, {"--accept-from", file}));
      CHECK(r["settings"]["accept_len"].get<double>() > 1.0);
      CHECK(r["settings"]["accept_len_source"].get<std::string>().find(file) != std::string::npos);
      const std::string baseline = dir + "/" + name + ".base.json";
      write_text(baseline, run_json(joined(deployment, {"--accept-len", "2"})).dump());
      CHECK(run_specsim(joined({"check", "--baseline", baseline, "--accept-from", file}, deployment)).exit_code == 0);
      // tune takes the settings the post states for a log without a server_args line
      std::vector<std::string> tune =
          joined({"tune", "--accept-from", file, "--batch-size", "1", "--json"}, post.deployment);
      for (std::size_t i = 0; i < post.settings.size(); i += 2)
        if (post.settings[i] != "--speculative-algorithm")
          tune.insert(tune.end(), {post.settings[i], post.settings[i + 1]});
      const CliResult t = run_specsim(tune);
      INFO(t.err);
      REQUIRE(t.exit_code == 0);
      const json fit = json::parse(t.out)["acceptance"]["fit"]["points"].at(0);
      CHECK(fit["measured_accept_len"].get<double>() == Approx(r["settings"]["accept_len"].get<double>()));
      check_refused(joined(deployment, {"--accept-len", "2", "--baseline-from", file}), "speculation was on");
    } else {
      const std::string batch = std::to_string(post.batch);
      const json r = run_json(joined(priced, {"--accept-len", "2", "--baseline-from", file, "--batch-size", batch}));
      CHECK(r["scenarios"][0]["baseline"]["tok_per_s"].get<double>() > 0);
      // at a batch the log has no line at: the batch it does decode at is named
      if (post.batch != 1)
        check_refused(joined(priced, {"--accept-len", "2", "--baseline-from", file}), "give --batch-size " + batch);
      // another engine's runtime does not take its plain step
      check_refused(joined(deployment, {"--accept-len", "2", "--baseline-from", file, "--batch-size", batch,
                                        "--runtime", vllm_log ? "sglang" : "vllm"}),
                    vllm_log ? "give --runtime vllm" : "give --runtime sglang");
      check_refused(joined(deployment, {"--accept-from", file}), "use it with --baseline-from");
      check_refused(joined({"tune", "--accept-from", file}, post.deployment), "speculative decoding on");
    }
  }
  CHECK(real >= 8);
}

TEST_CASE("tune --accept-from: stated settings are for logs that lack them, and only with --accept-from") {
  const std::string excerpt = traces_path("sglang-logs/real-eagle3-idle-gap-sglang-11948.log");
  const std::string full = traces_path("sglang-logs/sglang-eagle3-llama3.1-8b-h100-synthetic-from-real-format.log");
  // without them the excerpt's settings are unknown, and the error says how to state them
  check_refused({"tune", "--accept-from", excerpt, "--model-path", "qwen3-8b"}, "--speculative-eagle-topk");
  // a log that names its settings keeps them: stated ones would be ignored
  check_refused({"tune", "--accept-from", full, "--speculative-num-steps", "3", "--speculative-eagle-topk", "1"},
                "drop the stated settings");
  // without --accept-from or --accept-len tune searches the shape itself
  check_refused(
      {"tune", "--acceptance", models_path("llama-3.1-8b/eagle1/acceptance.json"), "--speculative-num-steps", "3"},
      "--accept-from");
  // with --accept-len they state where it was measured: steps and topk together
  check_refused({"tune", "--accept-len", "2", "--speculative-num-steps", "3"}, "--speculative-eagle-topk");
  // a tree needs its draft tokens; a depth the accept lens exceed is refused
  check_refused({"tune", "--accept-from", excerpt, "--model-path", "qwen3-8b", "--speculative-num-steps", "3",
                 "--speculative-eagle-topk", "2"},
                "--speculative-num-draft-tokens");
  check_refused({"tune", "--accept-from", excerpt, "--model-path", "qwen3-8b", "--speculative-num-steps", "1",
                 "--speculative-eagle-topk", "1"},
                "above the stated --speculative-num-steps + 1");
}
