// Flags a run would ignore, and pasted values outside their stack's range: refused with the flag
// named (exit 2, nothing written) or said in a note, never dropped in silence.
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pasted_command.h"
#include "run_json.h"
#include "test_util.h"

using namespace specsim::test;
using nlohmann::json;

namespace {

// A refused command: exit 2, one error line naming `flag` (and `text` when given).
void refused(const std::vector<std::string>& args, const std::string& flag, const std::string& text = "") {
  const CliResult r = run_specsim(args);
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind("error: ", 0) == 0);
  CHECK(r.err.find(flag) != std::string::npos);
  if (!text.empty()) CHECK(r.err.find(text) != std::string::npos);
}

// A copy of a zoo target outside the zoo: no zoo draft belongs to it.
std::string model_without_draft() {
  const std::string dir = fresh_dir() + "/my8b";
  std::filesystem::create_directories(dir);
  write_text(dir + "/config.json", slurp(models_path("llama-3.1-8b/config.json")));
  return dir;
}

}  // namespace

TEST_CASE("a speculative flag on a model with no draft is refused, not dropped into plain decoding") {
  const std::string model = model_without_draft();
  for (const auto& [flag, value] : std::vector<std::pair<std::string, std::string>>{
           {"--accept-len", "2"}, {"--measured-spec-tok-s", "200"}, {"--speculative-num-steps", "3"}}) {
    INFO(flag);
    refused({"run", "--model-path", model, "--hardware", "h100-sxm:nvswitch", flag, value}, flag,
            "the zoo has no draft for my8b");
  }
  // Without them it runs plainly, and says why.
  const json j = run_json({"run", "--model-path", model, "--hardware", "h100-sxm:nvswitch"});
  CHECK(has_note(j, "the zoo has no draft for my8b: plain decoding only"));
  // Told NONE (as a pasted plain command or a saved plain scenario says), an accept len is noted unused.
  const json none =
      run_json({"run", "--model-path", "llama-3.1-8b", "--speculative-algorithm", "NONE", "--accept-len", "2"});
  CHECK(has_note(none, "--accept-len is not used: the run decodes plainly"));
}

TEST_CASE("NEXTN on a target without its own multi-token-prediction layer is refused, not run with another draft") {
  // it ran Llama-3.1-8B's EAGLE-3 draft under the name NEXTN, with no note
  for (const char* model : {"llama-3.1-8b", "qwen3-32b"}) {
    INFO(model);
    refused({"run", "--model-path", model, "--hardware", "h100-sxm:nvswitch", "--speculative-algorithm", "NEXTN",
             "--accept-len", "2"},
            "--speculative-algorithm", "NEXTN drafts with the target's own multi-token-prediction layer");
  }
  // a target with that layer in the zoo runs it
  const json j = run_json({"run", "--model-path", "deepseek-v3", "--hardware", "h200:nvswitch", "--tp-size", "8",
                           "--speculative-algorithm", "NEXTN", "--accept-len", "2"});
  CHECK(j["model"]["draft"]["name"] == "deepseek-v3/nextn");
}

TEST_CASE("--trace-cycles and --seed need the cycles they shape; a seed past 2^64 - 1 is refused") {
  refused({"run", "--trace-cycles", "5"}, "--trace-cycles", "give one of them");
  refused({"run", "--seed", "7"}, "--seed", "--cycles, --trace or --csv");
  refused({"run", "--seed", "99999999999999999999", "--cycles", "3"}, "--seed", "at most 18446744073709551615");
  const json j = run_json({"run", "--seed", "18446744073709551615", "--cycles", "3", "--allreduce", "nccl"});
  CHECK(j["scenarios"][0]["cycles"]["seed"].get<std::uint64_t>() == 18446744073709551615ULL);
}

TEST_CASE("ingest and calibrate refuse the flags their mode does not read") {
  const std::string log = traces_path("sglang-eagle3-decode-synthetic.log");
  refused({"ingest", "--sglang-log", log, "--model-path", "llama-3.1-8b"}, "--model-path", "--bench-speculative");
  refused({"ingest", "--nccl-tests", traces_path("nccl-tests-a100sxm4x8-nvlink.txt"), "--steps", "3"}, "--steps",
          "only with --torch-trace");
  const std::string trace = traces_path("torch-trace-verify-synthetic.json");
  refused({"ingest", "--torch-trace", trace, "--steps", "0"}, "--steps", "at least 1");
  refused({"ingest", "--torch-trace", trace, "--steps", "7"}, "--steps", "marks its own 2 steps");
  const std::string dir = fresh_dir();
  refused({"calibrate", "--from", traces_path("replay/h200x2/r-nccl.json"), "--hardware", "h200:nvswitch", "-o",
           dir + "/p.json", "--world", "4"},
          "--world", "only with --nccl-tests");
  refused({"calibrate", "--nccl-tests", traces_path("nccl-tests-a100sxm4x8-nvlink.txt"), "--hardware",
           "a100-sxm:nvswitch", "-o", dir + "/p.json", "--world", "0"},
          "--world");
  CHECK(!exists(dir + "/p.json"));
}

TEST_CASE("a pasted command's values keep their stack's ranges") {
  const std::vector<std::string> head = {"run", "--hardware", "h100-sxm:nvswitch", "--accept-len", "2", "--"};
  auto sglang = [&](std::vector<std::string> flags) {
    std::vector<std::string> a = head;
    for (const char* t : {"python", "-m", "sglang.launch_server", "--model-path", "meta-llama/Llama-3.1-8B-Instruct",
                          "--speculative-algorithm", "EAGLE3"})
      a.push_back(t);
    a.insert(a.end(), flags.begin(), flags.end());
    return a;
  };
  refused(sglang({"--mem-fraction-static", "7"}), "--mem-fraction-static", "must be in (0, 1]");
  refused(sglang({"--mem-fraction-static", "-1"}), "--mem-fraction-static", "must be in (0, 1]");
  refused(sglang({"--context-length", "-5"}), "--context-length", "at least 1");
  refused(sglang({"--max-running-requests", "0"}), "--max-running-requests", "at least 1");
  refused(sglang({"--max-total-tokens", "1000"}), "--max-total-tokens", "exceed the command's --max-total-tokens");
  refused({"run", "--hardware", "h100-sxm:nvswitch", "--", "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct",
           "--gpu-memory-utilization", "1.5"},
          "--gpu-memory-utilization", "must be in (0, 1]");
  refused({"run", "--hardware", "h100-sxm:nvswitch", "--", "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct",
           "--max-num-seqs", "0"},
          "--max-num-seqs", "at least 1");
  refused({"run", "--hardware", "h100-sxm:nvswitch", "--", "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct",
           "--speculative-config", R"({"method": "eagle3", "num_speculative_tokens": 0})"},
          "num_speculative_tokens", "out of range");
  // The same range on the flag itself, plain decoding too.
  refused({"run", "--model-path", "llama-3.1-8b", "--speculative-algorithm", "NONE", "--mem-fraction-static", "1.5"},
          "--mem-fraction-static", "must be in (0, 1]");

  // A context limit below the default is the run's context, said; a pool that holds the run passes.
  std::vector<std::string> capped = sglang({"--context-length", "1024", "--max-total-tokens", "4096"});
  capped.insert(capped.begin() + 1, "--json");
  const CliResult r = run_specsim(capped);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  CHECK(j["settings"]["context_len"] == 1024);
  CHECK(has_note(j, "the command's --context-length 1024 (below the default 2048)"));
}

TEST_CASE("prefill-only scheduler flags paste as ignored: a decode cycle runs no prefill") {
  std::vector<std::string> a = {"run",
                                "--json",
                                "--hardware",
                                "h100-sxm:nvswitch",
                                "--accept-len",
                                "2",
                                "--",
                                "python",
                                "-m",
                                "sglang.launch_server",
                                "--model-path",
                                "meta-llama/Llama-3.1-8B-Instruct",
                                "--speculative-algorithm",
                                "EAGLE3"};
  const CliResult plain = run_specsim(a);
  REQUIRE(plain.exit_code == 0);
  for (const char* f : {"--chunked-prefill-size", "--max-prefill-tokens", "--schedule-conservativeness"})
    a.push_back(f), a.push_back("4096");
  a.push_back("--disable-radix-cache");
  // the waiting queue's order (was refused as "changes the batches the scheduler forms")
  a.push_back("--schedule-policy"), a.push_back("lpm");
  const CliResult r = run_specsim(a);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json with = json::parse(r.out), without = json::parse(plain.out);
  CHECK(with["scenarios"][0]["spec"]["cycle_us"] == without["scenarios"][0]["spec"]["cycle_us"]);
  int ignored = 0;
  for (const auto& f : with["pasted_command"]["flags"]) ignored += f["class"] == "ignored";
  CHECK(ignored >= 5);
  // --enable-mixed-chunk does mix prefill into decode batches: still refused.
  a.push_back("--enable-mixed-chunk");
  refused(a, "--enable-mixed-chunk", "not modelled");
}

TEST_CASE("--accept-from: the accept len is labelled as the log's, and a log of another target or draft is said") {
  const std::string log = traces_path("sglang-logs/sglang-nextn-deepseek-v3-tp8-h200-synthetic-from-real-format.log");
  const json j =
      run_json({"run", "--model-path", "llama-3.1-8b", "--hardware", "h100-sxm:nvswitch", "--accept-from", log});
  CHECK(j["settings"]["accept_len_source"].get<std::string>().find("SGLang log") != std::string::npos);
  CHECK(has_note(j, "ran deepseek-ai/DeepSeek-V3, and this run's target is llama-3.1-8b"));
  // a run naming no draft shape takes the log's, so the accept len is used where it was measured
  CHECK(has_note(j, "the run takes the draft shape its accept len was measured at, steps 3, topk 1, 4 draft tokens"));
  CHECK(j["settings"]["speculative_num_steps"] == 3);
  CHECK(j["settings"]["speculative_algorithm"] == "EAGLE3");  // the run's own (the zoo's draft)
  // one that names another shape keeps it, and is told the log ran another
  const json other = run_json({"run", "--model-path", "llama-3.1-8b", "--hardware", "h100-sxm:nvswitch",
                               "--accept-from", log, "--speculative-num-steps", "5"});
  CHECK(has_note(other, "ran steps 3, topk 1, 4 draft tokens and this run has 5, 4, 8"));
}

TEST_CASE(
    "--baseline-from: a run of a named model takes the context its lines decoded at; a deeper log's accept len names "
    "--accept-from") {
  const std::string log = traces_path("sglang-logs/real-token-hisparse-before-sglang-22331.log");
  const json j = run_json({"run", "--model-path", "qwen3-8b", "--hardware", "h100-sxm:nvswitch", "--baseline-from", log,
                           "--batch-size", "5", "--speculative-algorithm", "NONE"});
  CHECK(j["settings"]["context_len"] == 4160);  // the log's median #token / #running-req
  CHECK(has_note(j, "the run takes the context its lines decoded at, 4160 tokens a request"));
  const json given = run_json({"run", "--model-path", "qwen3-8b", "--hardware", "h100-sxm:nvswitch", "--baseline-from",
                               log, "--batch-size", "5", "--speculative-algorithm", "NONE", "--context-len", "1024"});
  CHECK(given["settings"]["context_len"] == 1024);
  // the built-in scenario keeps its own settings; a log deeper than them is named as the cause
  refused({"run", "--accept-from",
           traces_path("sglang-logs/sglang-eagle3-llama3.1-8b-h100-synthetic-from-real-format.log")},
          "--accept-from", "the log ran a deeper draft");
}

TEST_CASE("backend names in any case; a file given to --set names what is wanted") {
  const json a = run_json({"run", "--allreduce", "NCCL"});
  const json b = run_json({"run", "--allreduce", "nccl"});
  CHECK(a["scenarios"][0]["spec"]["cycle_us"] == b["scenarios"][0]["spec"]["cycle_us"]);
  refused({"validate", "--set", traces_path("published/README.md")}, "--set", "is a file");
}

TEST_CASE(
    "a model whose zoo draft is a NextN layer is told to ask for NEXTN; sweep refuses speculation axes on plain "
    "runs") {
  refused({"run", "--model-path", "glm-4.7", "--hardware", "h200:nvswitch", "--tp-size", "8", "--accept-len", "2"},
          "--accept-len", "--speculative-algorithm NEXTN");
  const json j = run_json({"run", "--model-path", "glm-4.7", "--hardware", "h200:nvswitch", "--tp-size", "8"});
  CHECK(has_note(j, "--speculative-algorithm NEXTN runs its zoo NextN draft"));
  const std::string model = model_without_draft();
  for (const char* axis : {"--accept-len", "--speculative-num-steps"})
    refused({"sweep", "--model-path", model, "--hardware", "h100-sxm:nvswitch", axis, "2,3"}, axis,
            "this scenario decodes plainly");
  refused({"sweep", "--model-path", "llama-3.1-8b", "--speculative-algorithm", "NONE", "--accept-rate", "0.5,0.6"},
          "--accept-rate", "this scenario decodes plainly");
  // vLLM's own range for its memory share is (0, 1]: 1.0 is valid.
  const CliResult r = run_specsim({"run", "--hardware", "h200:nvswitch", "--", "vllm", "serve",
                                   "meta-llama/Llama-3.1-8B-Instruct", "--gpu-memory-utilization", "1.0"});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  // A command that takes no scenario is not told to give one.
  refused({"validate", "--", "x"}, "validate", "this command takes none");
}
