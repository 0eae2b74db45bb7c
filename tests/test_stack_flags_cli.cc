// Pasted launch commands, SGLang's and vLLM's: every flag classed by models/stacks/ (one row per
// class pinned here, and every flag a user pasted when trying the tool), the last occurrence
// winning, list flags taking their lists, a missing algorithm meaning plain decoding.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "pasted_command.h"
#include "scenario/sglang_cmdline.h"
#include "scenario/stack_flag_table.h"
#include "scenario/vllm_cmdline.h"
#include "test_util.h"

using namespace specsim;
using namespace specsim::test;
using nlohmann::json;

namespace {

const std::vector<std::string> kSglang = {"python", "-m", "sglang.launch_server", "--model-path",
                                          "meta-llama/Llama-3.1-8B-Instruct"};

std::vector<std::string> with(std::vector<std::string> base, const std::vector<std::string>& more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

}  // namespace

TEST_CASE("the flag tables class every flag, and every modelled row is applied") {
  for (const std::string stack : {"sglang", "vllm"}) {
    const StackFlagTable& t = stack_flag_table(stack);
    const auto& applied = stack == "sglang" ? sglang_applied_flags() : vllm_applied_flags();
    CHECK(t.rows.size() > 150);
    for (const auto& r : t.rows) {
      INFO(stack << " " << r.flag);
      CHECK(!r.what.empty());
      const bool has = std::find(applied.begin(), applied.end(), r.flag) != applied.end();
      CHECK(has == r.modelled_for_some());
    }
  }
}

TEST_CASE("one row per class, and every flag named by users, classed as the stacks run them") {
  struct Row {
    const char* stack;
    const char* flag;
    FlagClass cls;
  };
  const Row rows[] = {
      // one row per class
      {"sglang", "--tp-size", FlagClass::Modelled},
      {"sglang", "--enable-dp-attention", FlagClass::Modelled},
      {"sglang", "--port", FlagClass::Ignored},
      {"vllm", "-tp", FlagClass::Modelled},
      {"vllm", "--enable-expert-parallel", FlagClass::Modelled},
      {"vllm", "--served-model-name", FlagClass::Ignored},
      // the flags a new user pasted: none ignored
      {"sglang", "--dp", FlagClass::Modelled},  // argparse's abbreviation of --dp-size
      {"sglang", "--ep-size", FlagClass::Modelled},
      {"sglang", "--moe-a2a-backend", FlagClass::Modelled},
      {"sglang", "--kv-cache-dtype", FlagClass::Modelled},
      {"sglang", "--disable-custom-all-reduce", FlagClass::Modelled},
      {"sglang", "--enable-torch-compile", FlagClass::Refused},
      {"sglang", "--quantization", FlagClass::Modelled},
      {"sglang", "--tensor-parallel-size", FlagClass::Modelled},
      {"sglang", "--tp", FlagClass::Modelled},
      {"sglang", "--cuda-graph-bs", FlagClass::Modelled},
      {"sglang", "--speculative-draft-model-path", FlagClass::Modelled},
      {"sglang", "--speculative-algorithm", FlagClass::Modelled},
      {"sglang", "--enable-flashinfer-allreduce-fusion", FlagClass::Modelled},
      {"sglang", "--nnodes", FlagClass::Modelled},
      {"sglang", "--node-rank", FlagClass::Ignored},
      {"sglang", "--pp-size", FlagClass::Modelled},
      {"sglang", "--max-micro-batch-size", FlagClass::Refused},
      {"sglang", "--lora-paths", FlagClass::Refused},
      {"vllm", "--speculative-config", FlagClass::Modelled},
      {"vllm", "--no-enforce-eager", FlagClass::Modelled},
      {"vllm", "--max_model_len", FlagClass::Modelled},  // vLLM takes underscores
  };
  for (const auto& r : rows) {
    INFO(r.stack << " " << r.flag);
    const StackFlag* f = stack_flag_table(r.stack).find(r.flag, "test");
    REQUIRE(f != nullptr);
    CHECK(f->cls == r.cls);
  }
  CHECK(stack_flag_table("sglang").find("--no-such-flag", "test") == nullptr);
  CHECK_THROWS_WITH(stack_flag_table("sglang").find("--enable-flashinfer", "test"), Catch::Contains("ambiguous"));
}

TEST_CASE("per-value classes: a flag modelled for the values specsim prices, refused for the others") {
  struct ValueRow {
    const char* flag;
    const char* value;
    FlagClass cls;
  };
  const ValueRow rows[] = {
      {"--attention-backend", "fa3", FlagClass::Modelled},  // SGLang's default on Hopper
      {"--attention-backend", "flashinfer", FlagClass::Modelled},
      {"--attention-backend", "triton", FlagClass::Refused},  // the flag's own row
      {"--decode-attention-backend", "fa3", FlagClass::Modelled},
      {"--prefill-attention-backend", "flashmla", FlagClass::Refused},
      {"--sampling-backend", "flashinfer", FlagClass::Modelled},
      {"--sampling-backend", "pytorch", FlagClass::Refused},
      {"--grammar-backend", "xgrammar", FlagClass::Ignored},  // runs only for grammar requests
      {"--grammar-backend", "none", FlagClass::Ignored},
  };
  const StackFlagTable& t = stack_flag_table("sglang");
  for (const auto& r : rows) {
    INFO(r.flag << " " << r.value);
    const StackFlag* f = t.find(r.flag, "test");
    REQUIRE(f != nullptr);
    const FlagValueClass* v = f->for_value(r.value);
    CHECK((v ? v->cls : f->cls) == r.cls);
  }
  // --disable-cuda-graph takes no value: its row's class, modelled
  CHECK(t.find("--disable-cuda-graph", "test")->cls == FlagClass::Modelled);
  CHECK(t.find("--disable-cuda-graph", "test")->by_value.empty());

  // pasted: the value's class is listed and applied; another value is refused naming the flag
  const CliResult fa3 = paste_run(with(
      kSglang, {"--attention-backend", "fa3", "--grammar-backend", "xgrammar", "--sampling-backend", "flashinfer"}));
  INFO(fa3.err);
  REQUIRE(fa3.exit_code == 0);
  const json j = json::parse(fa3.out);
  int seen = 0;
  for (const auto& f : j["pasted_command"]["flags"]) {
    const std::string name = f["flag"], cls = f["class"];
    if (name == "--attention-backend") {
      ++seen;
      CHECK(cls == "modelled");
      CHECK(f["value"] == "fa3");
    } else if (name == "--grammar-backend") {
      ++seen;
      CHECK(cls == "ignored");
    } else if (name == "--sampling-backend") {
      ++seen;
      CHECK(cls == "modelled");
    }
  }
  CHECK(seen == 3);
  const CliResult plain = paste_run(kSglang);
  REQUIRE(plain.exit_code == 0);
  CHECK(json::parse(plain.out)["scenarios"][0]["baseline"] == j["scenarios"][0]["baseline"]);
  const CliResult triton = paste_run(with(kSglang, {"--attention-backend", "triton"}));
  CHECK(triton.exit_code == 2);
  CHECK(triton.err.find("not modelled: --attention-backend triton changes the attention kernels") != std::string::npos);
  CHECK(triton.out.empty());
}

TEST_CASE("a refused flag stops the run: not modelled, what it changes, exit 2") {
  for (const auto& extra : std::vector<std::vector<std::string>>{{"--enable-torch-compile"}, {"--enable-lora"}}) {
    const CliResult r = paste_run(with(kSglang, extra));
    INFO(extra[0] << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("not modelled: " + extra[0] + " changes ") != std::string::npos);
    CHECK(r.out.empty());
  }
  // the parallel layout is modelled: on a dense model, or as replicas, it is refused naming the flag
  for (const auto& extra : std::vector<std::vector<std::string>>{
           {"--enable-dp-attention"}, {"--dp", "8"}, {"--ep-size", "8"}, {"--moe-a2a-backend", "deepep"}}) {
    const CliResult r = paste_run(with(kSglang, extra));
    INFO(extra[0] << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK((r.err.find("no MoE layers") != std::string::npos ||
           r.err.find("without --enable-dp-attention") != std::string::npos ||
           r.err.find("does not divide tp") != std::string::npos));
    CHECK(r.out.empty());
  }
  const CliResult two = paste_run(with(kSglang, {"--enable-torch-compile", "--max-micro-batch-size", "2"}));
  CHECK(two.err.find("refused too: --max-micro-batch-size") != std::string::npos);
  const CliResult unknown = paste_run(with(kSglang, {"--no-such-flag"}));
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.find("not a flag of SGLang v0.5.2") != std::string::npos);
  CHECK(unknown.err.find("a typo, or a flag of another release: remove it and give what it changes as specsim's "
                         "own flags") != std::string::npos);
}

TEST_CASE("last occurrence wins, --tensor-parallel-size is --tp, modelled flags reach the run") {
  const CliResult r = paste_run(with(kSglang, {"--tp", "4", "--tensor-parallel-size", "2", "--port", "30000",
                                               "--mem-fraction-static", "0.7", "--dtype", "auto"}));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  CHECK(j["settings"]["tp_size"] == 2);
  const json& pc = j["pasted_command"];
  CHECK(pc["stack"] == "SGLang v0.5.2");
  bool port_ignored = false, tp_once = false;
  int tp_rows = 0;
  for (const auto& f : pc["flags"]) {
    if (f["flag"] == "--port") port_ignored = f["class"] == "ignored" && f["value"] == "30000";
    if (f["flag"] == "--tensor-parallel-size" || f["flag"] == "--tp") ++tp_rows, tp_once = f["value"] == "2";
  }
  CHECK(port_ignored);
  CHECK(tp_rows == 1);
  CHECK(tp_once);
  // the text report lists them with their class
  const CliResult t = run_specsim(
      with({"run", "--accept-len", "2", "--hardware", "h200:nvswitch", "--"}, with(kSglang, {"--port", "30000"})));
  CHECK(t.out.find("pasted SGLang v0.5.2 command:") != std::string::npos);
  CHECK(t.out.find("ignored   --port 30000: network port") != std::string::npos);
}

TEST_CASE("no --speculative-algorithm in a pasted command: plain decoding") {
  const CliResult plain = paste_run(kSglang);
  REQUIRE(plain.exit_code == 0);
  CHECK(json::parse(plain.out)["settings"]["speculative_algorithm"] == "NONE");
  const CliResult spec =
      paste_run(with(kSglang, {"--speculative-algorithm", "EAGLE3", "--speculative-num-steps", "3",
                               "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"}));
  INFO(spec.err);
  REQUIRE(spec.exit_code == 0);
  const json j = json::parse(spec.out);
  CHECK(j["settings"]["speculative_algorithm"] == "EAGLE3");
  CHECK(j["settings"]["speculative_num_steps"] == 3);
}

TEST_CASE("--cuda-graph-bs takes its list: the largest captured size bounds the graph batches") {
  // SGLang v0.5.2 tops 1 2 4 8 up to cuda-graph-max-bs 40 in steps of 16: 8, 24, 40
  const CliResult r = paste_run(with(kSglang, {"--cuda-graph-bs", "1", "2", "4", "8", "--cuda-graph-max-bs", "40"}),
                                {"--batch-size", "40"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  CHECK(j["settings"]["cuda_graph_max_bs"] == 40);
  const CliResult low = paste_run(with(kSglang, {"--cuda-graph-bs", "1", "2", "4", "8", "--cuda-graph-max-bs", "30"}));
  REQUIRE(low.exit_code == 0);
  CHECK(json::parse(low.out)["settings"]["cuda_graph_max_bs"] == 24);
  const CliResult none = paste_run(with(kSglang, {"--cuda-graph-bs", "64", "--cuda-graph-max-bs", "32"}));
  CHECK(none.exit_code == 2);
  CHECK(none.err.find("--cuda-graph-bs") != std::string::npos);
}

TEST_CASE("a pasted draft is used as given: a local config read, a remote id stands in for by the zoo's, said") {
  const std::string dir = fresh_dir();
  write_text(dir + "/config.json", slurp(models_path("llama-3.1-8b/eagle3/config.json")));
  const CliResult local =
      paste_run(with(kSglang, {"--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", dir}));
  INFO(local.err);
  REQUIRE(local.exit_code == 0);
  CHECK(json::parse(local.out)["model"]["draft"]["source"].get<std::string>().find(dir) != std::string::npos);
  // A Hugging Face id cannot be read here: the zoo's draft of the target stands in, as a note.
  const CliResult remote = paste_run(
      with(kSglang, {"--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "someone/my-draft"}));
  INFO(remote.err);
  REQUIRE(remote.exit_code == 0);
  CHECK(json::parse(remote.out)["notes"].dump().find("assumption: the draft someone/my-draft is not held here") !=
        std::string::npos);
  // A target the zoo has no EAGLE-3 draft for, of no architecture another zoo model shares: the id
  // is refused, never another architecture's draft (same-architecture stand-ins:
  // test_pasted_program_cli.cc).
  const CliResult none =
      run_specsim({"run", "--hardware", "h200:nvswitch", "--json", "--", "python", "-m", "sglang.launch_server",
                   "--model-path", "llama-2-7b", "--tp", "8", "--speculative-algorithm", "EAGLE3",
                   "--speculative-draft-model-path", "someone/my-draft", "--speculative-num-steps", "3"});
  CHECK(none.exit_code == 2);
  CHECK(none.err.find("'someone/my-draft' is a remote draft specsim does not hold") != std::string::npos);
}

TEST_CASE("a pasted command without --hardware lists the choices; plain run prints its default") {
  const CliResult r = run_specsim(with({"run", "--accept-len", "2", "--"}, kSglang));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("give --hardware GPU:TOPOLOGY (GPUs: ") != std::string::npos);
  CHECK(r.err.find("h200") != std::string::npos);
  CHECK(r.err.find("topologies: ") != std::string::npos);
  const CliResult plain = run_specsim({"run", "--model-path", "llama-3.1-8b", "--accept-len", "2"});
  REQUIRE(plain.exit_code == 0);
  CHECK(plain.out.find("hardware: 1x h200 on nvswitch (default: no --hardware given)") != std::string::npos);
}

TEST_CASE("--sglang-args and -- COMMAND together are refused") {
  const CliResult r = run_specsim(with({"run", "--hardware", "h200:nvswitch", "--sglang-args",
                                        "python -m sglang.launch_server --model-path llama-3.1-8b", "--"},
                                       kSglang));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("give it once") != std::string::npos);
}

TEST_CASE("vllm serve MODEL with --speculative-config JSON") {
  const CliResult r = paste_run(
      {"vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "-tp", "2", "--port", "8000", "--speculative-config",
       R"({"method": "eagle3", "model": "llama-3.1-8b/eagle3", "num_speculative_tokens": 3})"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  CHECK(j["model"]["name"] == "llama-3.1-8b");
  CHECK(j["settings"]["tp_size"] == 2);
  CHECK(j["settings"]["speculative_algorithm"] == "EAGLE3");
  CHECK(j["settings"]["speculative_num_steps"] == 3);
  CHECK(j["settings"]["speculative_eagle_topk"] == 1);
  CHECK(j["settings"]["speculative_num_draft_tokens"] == 4);
  CHECK(j["pasted_command"]["stack"] == "vLLM v0.11.0");
  // no --speculative-config: plain decoding; an unpriced method is refused
  const CliResult plain = paste_run({"python", "-m", "vllm.entrypoints.openai.api_server", "--model", "llama-3.1-8b"});
  REQUIRE(plain.exit_code == 0);
  CHECK(json::parse(plain.out)["settings"]["speculative_algorithm"] == "NONE");
  const CliResult ngram = paste_run(
      {"vllm", "serve", "llama-3.1-8b", "--speculative-config", R"({"method": "ngram", "num_speculative_tokens": 3})"});
  CHECK(ngram.exit_code == 2);
  CHECK(ngram.err.find("not modelled: --speculative-config method 'ngram'") != std::string::npos);
  const CliResult dotted = paste_run({"vllm", "serve", "llama-3.1-8b", "--speculative-config.method", "eagle3",
                                      "--speculative-config.num_speculative_tokens", "2"});
  INFO(dotted.err);
  REQUIRE(dotted.exit_code == 0);
  CHECK(json::parse(dotted.out)["settings"]["speculative_num_steps"] == 2);
  // --enable-expert-parallel: ep = tp; a dense model at tp 1 has nothing to split, a MoE one at tp 2 splits its experts
  const CliResult eager = paste_run({"vllm", "serve", "llama-3.1-8b", "--enforce-eager", "--enable-expert-parallel"});
  INFO(eager.err);
  CHECK(eager.exit_code == 0);
  const CliResult moe_ep = paste_run({"vllm", "serve", "qwen3-30b-a3b", "-tp", "2", "--enable-expert-parallel"});
  INFO(moe_ep.err);
  REQUIRE(moe_ep.exit_code == 0);
  CHECK(json::parse(moe_ep.out)["settings"]["ep_size"] == 2);
}

TEST_CASE("vLLM's draft_tensor_parallel_size: the target's tp is its default, 1 under a larger tp is not priced") {
  auto spec = [](const std::string& tp, const std::string& draft_tp) {
    return paste_run(
        {"vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--tensor-parallel-size", tp, "--speculative-config",
         R"({"method": "eagle3", "num_speculative_tokens": 3, "draft_tensor_parallel_size": )" + draft_tp + "}"});
  };
  const CliResult same = spec("1", "1");  // as users write it at tp 1
  INFO(same.err);
  REQUIRE(same.exit_code == 0);
  CHECK(json::parse(same.out)["settings"]["speculative_num_steps"] == 3);
  CHECK(spec("2", "2").exit_code == 0);
  const CliResult one = spec("2", "1");
  CHECK(one.exit_code == 2);
  CHECK(one.err.find("not modelled: a draft on one rank under --tensor-parallel-size 2") != std::string::npos);
  CHECK(one.out.empty());
  const CliResult other = spec("4", "2");
  CHECK(other.exit_code == 2);
  CHECK(other.err.find("2 is neither 1 nor the target's --tensor-parallel-size 4") != std::string::npos);
  CHECK(spec("2", "\"2\"").exit_code == 2);
}

TEST_CASE("vLLM flags whose value the V1 engine runs anyway are ignored with the reason; other values refused") {
  const CliResult r =
      paste_run({"vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--enable-prefix-caching",
                 "--no-enable-chunked-prefill", "--block-size", "16", "-O3", "--load-format", "safetensors"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  int ignored = 0;
  for (const auto& f : j["pasted_command"]["flags"]) ignored += f["class"] == "ignored";
  CHECK(ignored == 5);
  for (const std::string bad : {"--block-size=32", "-O0", "--load-format=bitsandbytes"}) {
    const CliResult no = paste_run({"vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", bad});
    CHECK(no.exit_code == 2);
    CHECK(no.err.find("not modelled") != std::string::npos);
  }
}

TEST_CASE("a pasted command's paths on the serving machine: a folder named like a known id is that zoo model") {
  const CliResult r = paste_run({"python", "-m", "sglang.launch_server", "--model-path",
                                 "/models/Llama-3.1-8B-Instruct", "--speculative-algorithm", "EAGLE3",
                                 "--speculative-draft-model-path", "/models/EAGLE3-LLaMA3.1-Instruct-8B"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  CHECK(j["model"]["name"] == "llama-3.1-8b");
  CHECK(j["model"]["draft"]["name"] == "llama-3.1-8b/eagle3");
  CHECK(j.dump().find("the draft /models/EAGLE3-LLaMA3.1-Instruct-8B is not held here") != std::string::npos);
  // later releases of a zoo architecture
  for (const std::string id : {"deepseek-ai/DeepSeek-V3.1", "moonshotai/Kimi-K2-Instruct-0905"}) {
    const CliResult later = paste_run(
        {"python", "-m", "sglang.launch_server", "--model-path", id, "--tp", "8", "--speculative-algorithm", "NONE"});
    INFO(later.err);
    CHECK(later.exit_code == 0);
  }
  // a folder that names nothing known is still refused with the choices
  const CliResult unknown = paste_run({"python", "-m", "sglang.launch_server", "--model-path", "/models/my-own-model"});
  CHECK(unknown.exit_code == 2);
}

TEST_CASE("a saved scenario keeps the pasted command's limits: run and sweep refuse what the launch could not run") {
  const std::string dir = fresh_dir(), file = dir + "/s.json";
  const CliResult saved =
      paste_run({"python", "-m", "sglang.launch_server", "--model-path", "meta-llama/Llama-3.1-8B-Instruct",
                 "--max-running-requests", "4", "--context-length", "4096", "--max-total-tokens", "12000"},
                {"--save-scenario", file});
  INFO(saved.err);
  REQUIRE(saved.exit_code == 0);
  const json st = json::parse(slurp(file))["settings"];
  CHECK(st["max_running_requests"] == 4);
  CHECK(st["max_context_len"] == 4096);
  CHECK(st["max_total_tokens"] == 12000);
  const CliResult batch = run_specsim({"run", "--scenario", file, "--batch-size", "8"});
  CHECK(batch.exit_code == 2);
  CHECK(batch.err.find("batch 8 exceeds the launch's limit of 4 running requests") != std::string::npos);
  const CliResult context = run_specsim({"run", "--scenario", file, "--context-len", "8192"});
  CHECK(context.exit_code == 2);
  CHECK(context.err.find("8192 tokens of context exceed the launch's limit of 4096") != std::string::npos);
  const CliResult pool = run_specsim({"run", "--scenario", file, "--batch-size", "4", "--context-len", "4000"});
  CHECK(pool.exit_code == 2);
  CHECK(pool.err.find("KV pool of 12000 tokens") != std::string::npos);
  CHECK(run_specsim({"run", "--scenario", file, "--batch-size", "2"}).exit_code == 0);
  const CliResult sweep = run_specsim({"sweep", "--scenario", file, "--batch-size", "1,2,8", "-o", dir + "/s.csv"});
  INFO(sweep.err);
  REQUIRE(sweep.exit_code == 0);
  CHECK(sweep.err.find("exceeds the launch's limit of 4 running requests") != std::string::npos);
}

TEST_CASE("a specsim flag over the pasted command's value of the same setting wins, and says so") {
  const CliResult r = run_specsim({"run", "--json", "--accept-len", "2", "--hardware", "h200:nvswitch", "--tp-size",
                                   "8", "--sglang-args", "--model-path deepseek-ai/DeepSeek-V3 --tp 4"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  CHECK(j["settings"]["tp_size"] == 8);
  CHECK(j.dump().find("--tp-size 8 overrides the command's 4") != std::string::npos);
  const CliResult same = run_specsim({"run", "--json", "--accept-len", "2", "--hardware", "h200:nvswitch", "--tp-size",
                                      "8", "--sglang-args", "--model-path deepseek-ai/DeepSeek-V3 --tp 8"});
  CHECK(same.out.find("overrides the command's") == std::string::npos);
}

TEST_CASE("the command's own limits hold the run: --context-length, --max-num-seqs") {
  const CliResult r = paste_run(with(kSglang, {"--context-length", "4096"}), {"--context-len", "8192"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("exceed the command's --context-length 4096") != std::string::npos);
  const CliResult v = paste_run({"vllm", "serve", "llama-3.1-8b", "--max-num-seqs", "4"}, {"--batch-size", "8"});
  CHECK(v.exit_code == 2);
  CHECK(v.err.find("--max-num-seqs 4") != std::string::npos);
}
