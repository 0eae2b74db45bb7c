// vLLM V1 server logs: read into the shape of an SGLang log (ingest/vllm_log.h) and diagnosed with
// the launch their `non-default args` line rebuilds, priced on the profile of the release they name.
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "ingest/python_literal.h"
#include "ingest/server_log.h"
#include "ingest/sglang_log_summary.h"
#include "ingest/vllm_log.h"
#include "refused.h"
#include "test_util.h"
#include "util/error.h"

using namespace specsim;
using namespace specsim::test;
using nlohmann::json;

namespace {

const std::string kVllmSpec = traces_path("vllm-logs/vllm-eagle3-qwen3-8b-h20-synthetic-from-real-format.log");
const std::string kVllmBase = traces_path("vllm-logs/vllm-baseline-qwen3-8b-h20-synthetic-from-real-format.log");
const std::string kVllmEngines = traces_path("vllm-logs/real-dp-engines-vllm-ascend-12521.log");

// A stats line and its SpecDecoding line in v0.11's form, at `t` seconds past 10:00.
std::string vllm_interval(int t, double gen, int running, double accept_len) {
  const std::string at = fmt::format("(APIServer pid=7) INFO 12-01 10:{:02d}:{:02d} ", t / 60, t % 60);
  return at +
         fmt::format(
             "[loggers.py:123] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: "
             "{:.1f} tokens/s, Running: {} reqs, Waiting: 0 reqs, GPU KV cache usage: 0.3%, Prefix "
             "cache hit rate: 0.0%\n",
             gen, running) +
         at +
         fmt::format(
             "[metrics.py:96] SpecDecoding metrics: Mean acceptance length: {:.2f}, Accepted throughput: "
             "1.00 tokens/s, Drafted throughput: 2.00 tokens/s, Accepted: 10 tokens, Drafted: 20 tokens, "
             "Per-position acceptance rate: 0.600, 0.400, Avg Draft acceptance rate: 50.0%\n",
             accept_len);
}

// `f` throws InputError whose printed line holds `text`.
template <class F>
void check_vllm_input_error(F f, const std::string& text) {
  try {
    f();
    FAIL("no InputError; expected one holding: " << text);
  } catch (const InputError& e) {
    CHECK_THAT(e.line(), Catch::Contains(text));
  }
}

}  // namespace

TEST_CASE("python literals: the reprs vLLM logs its arguments in") {
  const std::string literal_text =
      "{'model': 'Qwen/Qwen3-8B', 'tensor_parallel_size': 8, 'gpu_memory_utilization': 0.9, 'enforce_eager': True, "
      "'max_cudagraph_capture_size': None, 'served_model_name': ['a', \"b's\"], 'pair': (1, 2), 'one': (3,), "
      "'speculative_config': {'method': 'eagle3', 'num_speculative_tokens': 3}, "
      "'lora_modules': [LoRAModulePath(name='x', path='y', base_model_name=None)]} trailing";
  const auto v = ingest::read_python_literal(literal_text);
  REQUIRE(v);
  const json& j = v->value;
  CHECK(j["model"] == "Qwen/Qwen3-8B");
  CHECK(j["tensor_parallel_size"] == 8);
  CHECK(j["tensor_parallel_size"].is_number_integer());
  CHECK(j["gpu_memory_utilization"] == Approx(0.9));
  CHECK(j["enforce_eager"] == true);
  CHECK(j["max_cudagraph_capture_size"].is_null());
  CHECK(j["served_model_name"] == json::array({"a", "b's"}));
  CHECK(j["pair"] == json::array({1, 2}));
  CHECK(j["one"] == json::array({3}));
  CHECK(j["speculative_config"]["num_speculative_tokens"] == 3);
  // an object's repr is kept as its text
  CHECK(j["lora_modules"][0] == "LoRAModulePath(name='x', path='y', base_model_name=None)");
  CHECK(v->end == literal_text.find(" trailing"));
  // a dict cut before its end is no literal
  CHECK_FALSE(ingest::read_python_literal("{'model': 'x', 'speculative_config': {'method': 'eag"));
  CHECK_FALSE(ingest::read_python_literal("['a', 'b'"));
  // an element followed by neither a comma nor the closing bracket (a fuzzer's loop once)
  CHECK_FALSE(ingest::read_python_literal("[a: b]"));
  CHECK_FALSE(ingest::read_python_literal("{'k': }"));
}

TEST_CASE("vLLM log: the launch, the stats lines and their SpecDecoding lines") {
  const std::string text = slurp(kVllmSpec);
  CHECK(ingest::is_vllm_log(text));
  CHECK_FALSE(ingest::is_vllm_log(slurp(traces_path("sglang-logs/real-eagle3-idle-gap-sglang-11948.log"))));
  const ingest::SglangLog log = ingest::parse_server_log(text, kVllmSpec);
  CHECK(log.stack == "vllm");
  REQUIRE(log.server_args.size() == 1);
  const ingest::ServerArgs& a = log.server_args[0];
  CHECK(a.stack == "vllm");
  CHECK(a.vllm_version == "0.11.2");
  CHECK(a.model_path == "Qwen/Qwen3-8B");
  CHECK(a.speculative_algorithm == std::optional<std::string>("EAGLE3"));
  CHECK(a.speculative_draft_model_path == std::optional<std::string>("AngelSlim/Qwen3-8B_eagle3"));
  CHECK(a.speculative_num_steps == 2);
  CHECK(a.speculative_eagle_topk == 1);
  CHECK(a.speculative_num_draft_tokens == 3);
  // the command it came from, an argument a group: the positional MODEL given once, the dict as JSON
  std::vector<std::string> c;
  for (const auto& g : a.vllm_flags) c.insert(c.end(), g.begin(), g.end());
  CHECK(std::count(c.begin(), c.end(), "--model") == 1);
  CHECK(std::count(c.begin(), c.end(), "--host") == 1);
  const auto spec = std::find(c.begin(), c.end(), "--speculative-config");
  REQUIRE(spec + 1 < c.end());
  CHECK(json::parse(*(spec + 1))["method"] == "eagle3");
  // 20 stats lines: two at Running 0 are not decode lines; the first follows the idle start
  REQUIRE(log.decode.size() == 19);
  CHECK(log.idle_lines == 2);
  CHECK(log.decode[0].unsteady.find("Running went from 0 to 1") != std::string::npos);
  CHECK(log.decode[0].prompt_tok_s == Approx(14.6));
  CHECK(log.decode[0].first_of_launch);
  CHECK_FALSE(log.decode[1].first_of_launch);
  for (std::size_t i = 1; i < log.decode.size(); ++i) {
    CHECK(log.decode[i].unsteady.empty());
    CHECK(log.decode[i].accept_len.has_value());
  }
  // the context: GPU KV cache usage (0.3%) of the 455,024-token cache the engine logged
  CHECK(log.decode[1].tokens_key == "GPU KV cache usage");
  const ingest::LogSummary s = ingest::summarize_log(log, kVllmSpec, std::nullopt);
  CHECK(s.batch_size == 1);
  CHECK(s.line_numbers.size() == 18);
  CHECK(s.unsteady_lines.size() == 1);
  REQUIRE(s.context_len);
  CHECK(*s.context_len == 1365);  // 0.3% (the lines' median) of the 455,024-token cache
  CHECK(s.prefill_interval_lines == 0);
}

TEST_CASE("vLLM log: what real logs carry") {
  // an earlier field order (vllm-project/vllm#24049, 2025-09) and an ANSI-coloured prefix with a
  // trailing MFU field (vllm-project/vllm#30738, 2025-12), each as its post quotes it
  const std::string older =
      "(APIServer pid=3617069) INFO 09-01 14:28:09 [loggers.py:123] Engine 000: Avg prompt throughput: 0.4 tokens/s, "
      "Avg generation throughput: 16.0 tokens/s, Running: 0 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.0%, Prefix "
      "cache hit rate: 0.0%\n"
      "(APIServer pid=3617069) INFO 09-01 14:28:09 [metrics.py:87] SpecDecoding metrics: Draft acceptance rate: 15.5%, "
      "Mean acceptance length: 1.77, Accepted: 17 tokens, Drafted: 110 tokens, Per-position acceptance rate: 0.318, "
      "0.182, 0.091, 0.091, 0.091\n";
  // Running 0 throughout: nothing decoding, and said
  check_vllm_input_error([&] { ingest::parse_vllm_log(older, "F"); }, "no vLLM stats line with a running request");
  const std::string ansi =
      "[0;36m(APIServer pid=2548211)[0;0m INFO 12-15 18:32:12 [loggers.py:259] Engine 000: Avg prompt throughput: "
      "600.0 tokens/s, Avg generation throughput: 204.3 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache "
      "usage: 0.3%, Prefix cache hit rate: 0.0%, MFU: 11.3 TF/s/GPU 772.8 GB/s/GPU\n";
  const auto l = ingest::parse_vllm_log(ansi + older, "F");
  REQUIRE(l.decode.size() == 1);
  CHECK(l.decode[0].gen_tok_s == Approx(204.3));
  CHECK(l.decode[0].running_req == 1);
  CHECK_FALSE(l.decode[0].accept_len);  // the SpecDecoding line follows the Running-0 line, not this one
  CHECK(l.idle_lines == 1);
  // the older SpecDecoding line after a stats line of its process at a running request
  std::string running = older;
  running.replace(running.find("Running: 0"), 10, "Running: 1");
  const auto r = ingest::parse_vllm_log(running, "F");
  REQUIRE(r.decode.size() == 1);
  CHECK(r.decode[0].accept_len == Approx(1.77));
}

TEST_CASE("vLLM log: the first V1 SpecDecoding form gives counts, and the launch's K their mean") {
  // vllm-project/vllm#15902 (2025-04) shows the line as `SpecDecoding metrics: Draft acceptance
  // rate: 100.0%, Accepted: 66 tokens, Drafted: 66 tokens`: drafts = drafted / K
  const std::string launch =
      "INFO 04-24 10:00:00 [utils.py:233] non-default args: {'model': 'meta-llama/Llama-3.1-8B-Instruct', "
      "'speculative_config': {'method': 'eagle', 'model': 'yuhuili/EAGLE-LLaMA3.1-Instruct-8B', "
      "'num_speculative_tokens': 3}}\n";
  const std::string interval = vllm_interval(10, 120, 1, 2);
  const std::string stats = interval.substr(0, interval.find('\n') + 1);
  const std::string counts =
      "(APIServer pid=7) INFO 12-01 10:00:10 [loggers.py:111] SpecDecoding metrics: Draft acceptance rate: 50.0%, "
      "Accepted: 60 tokens, "
      "Drafted: 120 tokens\n";
  const auto log = ingest::parse_vllm_log(launch + stats + counts, "F");
  REQUIRE(log.decode.size() == 1);
  CHECK(log.decode[0].accept_len == Approx(2.5));  // 1 + 60 / (120 / 3)
  // vLLM 0.8 logs no non-default args: the engine's config line says K
  const std::string engine =
      "(EngineCore_0 pid=9) INFO 04-24 10:00:02 [core.py:58] Initializing a V1 LLM engine (v0.8.5) with config: "
      "model='meta-llama/Llama-3.1-8B-Instruct', speculative_config=SpeculativeConfig(draft_model='x', "
      "num_spec_tokens=3), tokenizer='meta-llama/Llama-3.1-8B-Instruct'\n";
  const auto from_engine = ingest::parse_vllm_log(engine + stats + counts, "F");
  CHECK(from_engine.decode[0].accept_len == Approx(2.5));
  CHECK(from_engine.vllm_version == "0.8.5");
  // without either the count of drafts is unknown: refused with where to find it
  check_vllm_input_error([&] { ingest::parse_vllm_log(stats + counts, "F"); }, "keep the server's start-up lines");
  // a second launch starts afresh: its SpecDecoding line neither pairs with the launch before's
  // last stats line nor takes that launch's K
  const std::string relaunch = launch + stats + counts + launch;
  const auto two = ingest::parse_vllm_log(relaunch + stats + counts, "F");
  REQUIRE(two.decode.size() == 2);
  CHECK(two.decode[1].accept_len == Approx(2.5));
  CHECK(two.decode[1].server_args_index == std::optional<std::size_t>(1));
  const auto dangling = ingest::parse_vllm_log(launch + stats + launch + counts, "F");
  REQUIRE(dangling.decode.size() == 1);
  CHECK_FALSE(dangling.decode[0].accept_len);  // the new launch's line, not the old interval's
  CHECK(dangling.speculative());               // yet speculation was on
}

TEST_CASE("vLLM log: several engines, the V0 engine, bad fields") {
  const auto dp = ingest::parse_server_log(slurp(kVllmEngines), kVllmEngines);
  CHECK(dp.engines == 2);
  REQUIRE(dp.decode.size() == 1);  // engine 002's; engine 004's line and its SpecDecoding line are another batch
  CHECK(dp.decode[0].accept_len == Approx(2.87));
  // engines in processes of their own may interleave: each SpecDecoding line pairs with its
  // process's stats line; an engine that only idles is not the one read
  const std::string text = slurp(kVllmEngines);
  std::vector<std::string> l;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t nl = text.find('\n', at);
    l.push_back(text.substr(at, nl - at + 1));
    at = nl + 1;
  }
  REQUIRE(l.size() == 5);
  const auto mixed = ingest::parse_vllm_log(l[0] + l[1] + l[3] + l[2] + l[4], "F");
  REQUIRE(mixed.decode.size() == 1);
  CHECK(mixed.decode[0].accept_len == Approx(2.87));
  std::string idle = l[1];
  idle.replace(idle.find("Running: 1"), 10, "Running: 0");
  const auto second = ingest::parse_vllm_log(idle + l[3] + l[4], "F");
  REQUIRE(second.decode.size() == 1);
  CHECK(second.decode[0].gen_tok_s == Approx(45.0));  // engine 004's
  CHECK(second.decode[0].accept_len == Approx(2.98));
  // V0 (tenstorrent/tt-inference-server#350, 2025-06; vllm-project/vllm#7301, 2025-02), as quoted
  check_vllm_input_error(
      [] {
        ingest::parse_vllm_log(
            "INFO 06-25 03:10:21 [metrics.py:540] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 72.5 "
            "tokens/s, Running: 32 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 26.3%, CPU KV cache "
            "usage: 0.0%.\n",
            "F");
      },
      "VLLM_USE_V1=1");
  check_vllm_input_error(
      [] {
        ingest::parse_vllm_log(
            vllm_interval(0, 50, 1, 2) +
                "INFO 02-06 03:05:53 metrics.py:475] Speculative metrics: Draft acceptance rate: 0.200, System "
                "efficiency: 0.167, Number of speculative tokens: 5, Number of accepted tokens: 1, Number of draft "
                "tokens: 5, Number of emitted tokens: 1.\n",
            "F");
      },
      "V0-engine");
  std::string bad = vllm_interval(0, 50, 1, 2);
  bad.replace(bad.find("50.0 tokens/s"), 4, "5x.0");
  check_vllm_input_error([&] { ingest::parse_vllm_log(bad, "F"); },
                         "bad Avg generation throughput '5x.0' in the vLLM stats line");
  std::string deep = vllm_interval(0, 50, 1, 2);
  deep.replace(deep.find("length: 2.00"), 12, "length: 99.0");
  check_vllm_input_error([&] { ingest::parse_vllm_log(deep, "F"); }, "bad Mean acceptance length '99.0'");
  // a last line cut mid-field (no newline, fewer fields than its kind's line before) is left out,
  // said: `Running: 1` cut from 12, a mean acceptance length cut after its first digit
  const std::string two = vllm_interval(0, 50, 12, 2) + vllm_interval(10, 51, 12, 2);
  const std::string stats_cut = two.substr(0, two.rfind("Running: 12") + 10);
  const auto c = ingest::parse_vllm_log(stats_cut, "F");
  CHECK(c.decode.size() == 1);
  CHECK(c.decode[0].running_req == 12);
  CHECK(c.cut_last_line == std::optional<std::size_t>(3));
  const std::string spec_cut = two.substr(0, two.rfind("length: 2.00") + 9);
  const auto sc = ingest::parse_vllm_log(spec_cut, "F");
  REQUIRE(sc.decode.size() == 2);
  CHECK_FALSE(sc.decode[1].accept_len);
  CHECK(sc.cut_last_line == std::optional<std::size_t>(4));
  // a whole last line without its newline is read, the first of its kind too
  const auto whole = ingest::parse_vllm_log(two.substr(0, two.size() - 1), "F");
  CHECK(whole.decode[1].accept_len == Approx(2.0));
  CHECK_FALSE(whole.cut_last_line);
  const std::string one = vllm_interval(0, 50, 1, 2);
  const auto pair = ingest::parse_vllm_log(one.substr(0, one.size() - 1), "F");
  REQUIRE(pair.decode.size() == 1);
  CHECK(pair.decode[0].accept_len == Approx(2.0));
  const std::string lone_stats = one.substr(0, one.find('\n'));
  CHECK(ingest::parse_vllm_log(lone_stats, "F").decode.size() == 1);
  // a SpecDecoding line cut at the end still says speculation was on: no plain step to take
  const auto spec_only_cut = ingest::parse_vllm_log(one.substr(0, one.rfind("length: 2.00") + 9), "F");
  CHECK(spec_only_cut.speculative());
  CHECK_FALSE(spec_only_cut.baseline_tok_s());
  // a batch that changed: the interval is left out of the figures; a batch never steady is refused
  const auto changing = ingest::parse_vllm_log(
      vllm_interval(0, 50, 1, 2) + vllm_interval(10, 90, 2, 2) + vllm_interval(20, 91, 2, 2), "F");
  CHECK(changing.decode[1].unsteady.find("from 1 to 2") != std::string::npos);
  const auto sum = ingest::summarize_log(changing, "F", 2);
  CHECK(sum.tok_s == Approx(91));
  check_vllm_input_error(
      [] {
        ingest::summarize_log(ingest::parse_vllm_log(vllm_interval(0, 50, 1, 2) + vllm_interval(10, 90, 2, 2), "F"),
                              "F", 2);
      },
      "steady lines are at 1 (1 lines)");
}

TEST_CASE("diagnose: a vLLM log's launch is read as its command and priced on its release's profile") {
  const std::string dir = fresh_dir();
  const std::string out = dir + "/vllm.json";
  const CliResult d = run_specsim({"diagnose", kVllmSpec, "--hardware", "h20:nvswitch", "-o", out, "--json"});
  INFO(d.err);
  REQUIRE(d.exit_code == 0);
  const json j = json::parse(d.out);
  CHECK(j["engine"] == "vllm");
  CHECK(j["reproduction"]["reproduces"] == true);
  CHECK(j["measured"]["tok_s"].get<double>() == Approx(258.3).epsilon(0.002));
  CHECK(j["measured"]["context_from"] == "GPU KV cache usage");
  CHECK(j["unsteady_lines"].size() == 1);
  CHECK(j["measured"]["context_len"] == 1365);
  const json file = json::parse(slurp(out));
  CHECK(file["settings"]["runtime"] == "vllm");
  CHECK(file["settings"]["context_len"] == 1365);
  CHECK(file.dump().find("vLLM 0.11.2 (the log's release)") != std::string::npos);
  // the written scenario runs back to the measured tok/s
  const CliResult r = run_specsim({"--scenario", out, "--json"});
  REQUIRE(r.exit_code == 0);
  double spec_tok_s = 0;
  const json run_back = json::parse(r.out);  // kept: a range-for over a temporary's member would dangle
  for (const auto& sc : run_back["scenarios"])
    if (sc["allreduce"] == "nccl") spec_tok_s = sc["spec"]["tok_per_s"].get<double>();
  CHECK(spec_tok_s == Approx(258.3).epsilon(0.01));
  // with the plain run of the same server, the accept len the tok/s implies is the logged one
  const CliResult b =
      run_specsim({"diagnose", kVllmSpec, "--hardware", "h20:nvswitch", "--baseline-from", kVllmBase, "--json"});
  INFO(b.err);
  REQUIRE(b.exit_code == 0);
  const json bj = json::parse(b.out);
  CHECK(bj["reproduction"]["how"] == "measured-baseline-implied-accept-len");
  CHECK(bj["implied"]["accept_len"].get<double>() == Approx(bj["measured"]["accept_len"].get<double>()).epsilon(0.01));
  // a plain log of another engine is not this server's
  check_refused({"diagnose", kVllmSpec, "--hardware", "h20:nvswitch", "--baseline-from",
                 traces_path("sglang-logs/sglang-baseline-llama3.1-8b-h100-synthetic-from-real-format.log")},
                "the baseline log is SGLang's and LOG is vLLM's");

  // a log of vLLM 0.10 is priced on the 0.9-0.10 fit
  std::string older = slurp(kVllmSpec);
  for (const char* v : {"version 0.11.2", "engine (v0.11.2)"}) {
    std::string from = v, to = v;
    to.replace(to.find("0.11.2"), 6, "0.10.1");
    older.replace(older.find(from), from.size(), to);
  }
  const std::string older_log = dir + "/older.log", older_out = dir + "/older.json";
  write_text(older_log, older);
  REQUIRE(run_specsim({"diagnose", older_log, "--hardware", "h20:nvswitch", "-o", older_out}).exit_code == 0);
  CHECK(json::parse(slurp(older_out))["settings"]["runtime"] == "vllm-0.10");

  // launch settings the model does not price ran in the measured deployment: left out and listed
  // (their cost is in the implied overhead), as a newer release's flag is
  std::string extra = slurp(kVllmSpec);
  extra.replace(extra.find("'max_model_len': 8192"), 21,
                "'max_model_len': 8192, 'max_num_batched_tokens': 4096, 'data_parallel_size': 2, "
                "'enable_some_later_flag': True");
  const std::string extra_log = dir + "/extra.log";
  write_text(extra_log, extra);
  const CliResult e = run_specsim({"diagnose", extra_log, "--hardware", "h20:nvswitch", "--json"});
  INFO(e.err);
  REQUIRE(e.exit_code == 0);
  std::string listed;
  const json extra_diagnosis = json::parse(e.out);
  for (const auto& f : extra_diagnosis["findings"])
    if (f["id"] == "settings-not-modelled") listed = f["message"].get<std::string>();
  CHECK(listed.find("--max-num-batched-tokens 4096") != std::string::npos);
  CHECK(listed.find("--data-parallel-size 2") != std::string::npos);
  CHECK(listed.find("--enable-some-later-flag (not a flag of vLLM v0.11.0") != std::string::npos);
  // speculation the model cannot price is refused at the launch's line, with no file written
  std::string ngram = slurp(kVllmSpec);
  ngram.replace(ngram.find("'method': 'eagle3'"), 18, "'method': 'ngram'");
  const std::string ngram_log = dir + "/ngram.log", ngram_out = dir + "/ngram.json";
  write_text(ngram_log, ngram);
  const CliResult refused = run_specsim({"diagnose", ngram_log, "--hardware", "h20:nvswitch", "-o", ngram_out});
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find("ngram.log:3 (the launch's non-default args)") != std::string::npos);
  CHECK_FALSE(exists(ngram_out));
}
