// Bounds SGLang has: accept length within [1, steps + 1], context within the model's positions,
// --cycles that would outgrow them, and models that do not fit the GPUs' memory.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "test_util.h"

using namespace specsim::test;

namespace {
void refused(const std::vector<std::string>& args, const std::string& flag, const std::string& mentions) {
  const CliResult r = run_specsim(args);
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.rfind("error: ", 0) == 0);
  CHECK(r.err.find("(" + flag + ")") != std::string::npos);
  CHECK(r.err.find(mentions) != std::string::npos);
}
}  // namespace

TEST_CASE("accept length lies in [1, steps + 1], trees included") {
  refused({"--accept-len", "6"}, "--accept-len", "[1, 3]");  // built-in: 2 steps
  // a tree of 8 draft tokens at depth 3 accepts at most 4
  refused({"--model-path", "llama-3.1-8b", "--speculative-num-steps", "3", "--speculative-eagle-topk", "4",
           "--speculative-num-draft-tokens", "8", "--accept-len", "5"},
          "--accept-len", "[1, 4]");
  const CliResult ok =
      run_specsim({"--model-path", "llama-3.1-8b", "--speculative-num-steps", "3", "--speculative-eagle-topk", "4",
                   "--speculative-num-draft-tokens", "8", "--accept-len", "4"});
  INFO(ok.err);
  CHECK(ok.exit_code == 0);
}

TEST_CASE("a sweep skips accept lengths above steps + 1") {
  const std::string dir = fresh_dir();
  const CliResult r = run_specsim({"sweep", "--accept-len", "2,3.5", "-o", dir + "/s.csv"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("accept len 3.5 outside [1, 3]") != std::string::npos);
}

TEST_CASE("break-even above steps + 1 says speculation cannot win") {
  const CliResult r = run_specsim({});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("break-even accept len 3.47 (> steps + 1 = 3: speculation cannot win)") != std::string::npos);
}

TEST_CASE("context beyond the model's max position is refused, and --cycles may not grow past it") {
  // eight H200s: a 160k-token KV cache fits beside the weights (on the built-in 96 GB box it does not)
  const std::string h = "h200:nvswitch";
  refused({"--hardware", h, "--context-len", "163841"}, "--context-len", "163840");
  CHECK(run_specsim({"--hardware", h, "--context-len", "163840"}).exit_code == 0);
  refused({"--hardware", h, "--context-len", "160000", "--cycles", "2000"}, "--cycles",
          "max_position_embeddings (163840)");
  CHECK(run_specsim({"--hardware", h, "--context-len", "160000", "--cycles", "100"}).exit_code == 0);
  // one request of 160k tokens does not fit beside the weights: the context is named, no batch fits
  refused({"--context-len", "160000"}, "--context-len", "KV cache 10.55 GiB");
  refused({"--context-len", "160000"}, "--context-len", "not even one request of context 160000 fits at tp 8");
}

TEST_CASE("a model that does not fit the GPUs is refused with the numbers") {
  refused({"--model-path", "deepseek-v3", "--hardware", "h200:nvswitch", "--tp-size", "1", "--accept-len", "2"},
          "--tp-size", "GiB");
  const CliResult r = run_specsim(
      {"--model-path", "deepseek-v3", "--hardware", "h200:nvswitch", "--tp-size", "1", "--accept-len", "2"});
  CHECK(r.err.find("140.4 GiB x mem_fraction_static") != std::string::npos);
  CHECK(r.err.find("(SGLang's default)") != std::string::npos);
  // eight H200s hold it; a small fraction asked for on the command line does not
  CHECK(
      run_specsim({"--model-path", "deepseek-v3", "--hardware", "h200:nvswitch", "--tp-size", "8", "--accept-len", "2"})
          .exit_code == 0);
  refused({"--model-path", "deepseek-v3", "--hardware", "h200:nvswitch", "--tp-size", "8", "--accept-len", "2",
           "--mem-fraction-static", "0.3"},
          "--tp-size, --mem-fraction-static", "0.300");
  // the KV cache counts: Llama-3.1-8B on one H200 fits at batch 1, not at 512 requests of 128k tokens
  CHECK(run_specsim({"--model-path", "llama-3.1-8b", "--tp-size", "1", "--accept-len", "2"}).exit_code == 0);
  refused({"--model-path", "llama-3.1-8b", "--tp-size", "1", "--accept-len", "2", "--batch-size", "512",
           "--context-len", "131072", "--cuda-graph-max-bs", "512"},
          "--batch-size, --context-len", "KV cache");
}

// Llama-3.1-8B (models/llama-3.1-8b/config.json: hidden 4096, 32 layers, 32 heads, 8 kv heads of
// 128, MLP 14336, vocab 128256) on one H200 (140.4 GiB), plain decoding (no draft), bf16:
//   parameters 32 x (4096 x 48 x 128 + 4096 x 4096) + 32 x 3 x 4096 x 14336 + 2 x 4096 x 128256
//            = 1,342,177,280 + 5,637,144,576 + 1,050,673,152 = 8,029,995,008
//   weights    2 bytes each = 16,059,990,016 B = 14.96 GiB
//   KV cache   32 layers x 2 (k, v) x 8 heads x 128 x 2 B = 128 KiB a token; 131072 tokens = 16 GiB a request
//   budget     140.4 x 0.5 = 70.2 GiB: (70.2 - 14.96) / 16 = 3.45, so batch 3 fits and 4 does not
//   weights alone: 140.4 x 0.1 = 14.04 GiB < 14.96, so no batch fits
TEST_CASE("a refusal for memory names the cause and the largest batch that fits (hand-computed)") {
  const std::vector<std::string> base = {
      "--model-path", "llama-3.1-8b",  "--hardware", "h200:nvswitch", "--tp-size", "1", "--speculative-algorithm",
      "NONE",         "--context-len", "131072"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), base.begin(), base.end());
    return more;
  };
  CHECK(run_specsim(with({"--batch-size", "3", "--mem-fraction-static", "0.5"})).exit_code == 0);
  const std::vector<std::string> four = with({"--batch-size", "4", "--mem-fraction-static", "0.5"});
  refused(four, "--batch-size, --context-len, --mem-fraction-static",
          "weights 15.0 GiB + KV cache 64.00 GiB (batch 4 x context 131072) = 79.0 GiB per GPU > 140.4 GiB x "
          "mem_fraction_static 0.500 = 70.2 GiB");
  refused(four, "--batch-size, --context-len, --mem-fraction-static",
          "the largest batch that fits at context 131072 and tp 1 is 3");
  // the weights alone over the budget: no batch fits; more GPUs, fp8 weights or a larger fraction
  const std::vector<std::string> tiny = with({"--batch-size", "1", "--mem-fraction-static", "0.1"});
  refused(tiny, "--tp-size, --mem-fraction-static",
          "the weights alone take 15.0 GiB per GPU > 140.4 GiB x mem_fraction_static 0.100 = 14.0 GiB");
  refused(tiny, "--tp-size, --mem-fraction-static",
          "no batch fits (largest batch: 0): use more GPUs (a larger --tp-size), smaller weights (--dtype fp8) or a "
          "larger --mem-fraction-static");
  // fp8 weights are the smallest modelled: not suggested again
  const CliResult fp8 = run_specsim(with({"--dtype", "fp8", "--mem-fraction-static", "0.05"}));
  CHECK(fp8.exit_code == 2);
  CHECK(fp8.err.find("the weights alone") != std::string::npos);
  CHECK(fp8.err.find("--dtype fp8") == std::string::npos);
}

TEST_CASE("the built-in scenario: batch 16 is refused, naming batch and context and the largest batch that fits") {
  refused({"--batch-size", "16"}, "--batch-size, --context-len", "KV cache 2.16 GiB (batch 16 x context 2048)");
  const CliResult r = run_specsim({"--batch-size", "16"});
  const std::string mark = "the largest batch that fits at context 2048 and tp 8 is ";
  const size_t at = r.err.find(mark);
  REQUIRE(at != std::string::npos);
  const int most = std::stoi(r.err.substr(at + mark.size()));
  // what it prints is what run takes: that batch runs, one more is refused
  CHECK(run_specsim({"--batch-size", std::to_string(most)}).exit_code == 0);
  refused({"--batch-size", std::to_string(most + 1)}, "--batch-size, --context-len", mark + std::to_string(most));
}
