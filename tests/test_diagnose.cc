// `specsim diagnose`: an SGLang log -> a scenario file that `specsim run --scenario` evaluates to
// the log's measured tok/s, the findings where log and model disagree, and bad input.
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "diagnose/findings.h"
#include "diagnose/nccl_tests_gpu.h"
#include "diagnose/scenario_yaml.h"
#include "ingest/server_log.h"
#include "ingest/sglang_log.h"
#include "ingest/sglang_log_summary.h"
#include "ingest/text_lines.h"
#include "run_json.h"
#include "test_util.h"

using namespace specsim;
using namespace specsim::test;
using nlohmann::json;

namespace {

const std::string kEagle3 = traces_path("sglang-logs/sglang-eagle3-llama3.1-8b-h100-synthetic-from-real-format.log");
const std::string kBase = traces_path("sglang-logs/sglang-baseline-llama3.1-8b-h100-synthetic-from-real-format.log");
const std::string kNextn = traces_path("sglang-logs/sglang-nextn-deepseek-v3-tp8-h200-synthetic-from-real-format.log");
const std::string kSeed = traces_path("sglang-eagle3-decode-synthetic.log");  // no full server_args, graphs off
// Real excerpts (traces/sglang-logs/README.md has their sources).
const std::string kIdleGap = traces_path("sglang-logs/real-eagle3-idle-gap-sglang-11948.log");
const std::string kGpuToken = traces_path("sglang-logs/real-gpu-token-hisparse-sglang-22331.log");
const std::string kTokenBefore = traces_path("sglang-logs/real-token-hisparse-before-sglang-22331.log");

std::string edit(std::string t, const std::string& from, const std::string& to) {
  const auto at = t.find(from);
  REQUIRE(at != std::string::npos);
  return t.replace(at, from.size(), to);
}

// `text` with every "gen throughput (token/s): X" as X * k.
std::string scale_tok_s(const std::string& text, double k) {
  std::string out;
  for (const auto l : ingest::split_lines(text)) {
    std::string line(l);
    const std::string key = "gen throughput (token/s): ";
    if (const auto at = line.find(key); at != std::string::npos) {
      const auto end = line.find(',', at);
      const double v = std::stod(line.substr(at + key.size(), end - at - key.size()));
      line = line.substr(0, at + key.size()) + fmt::format("{:.2f}", v * k) + line.substr(end);
    }
    out += line + "\n";
  }
  return out;
}

// Gen throughputs of the decode lines of `file`, in order.
std::vector<double> tok_s_of_lines(const std::string& file) {
  std::vector<double> v;
  for (const auto& d : ingest::parse_sglang_log(slurp(file), file).decode) v.push_back(d.gen_tok_s);
  return v;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// The log's measured figure, computed here without specsim's diagnose code: the median gen
// throughput of the decode lines at the most common #running-req.
double median_tok_s(const std::string& file) {
  const auto log = ingest::parse_sglang_log(slurp(file), file);
  std::map<int, int> per_batch;
  for (const auto& d : log.decode) ++per_batch[d.running_req];
  const int bs =
      std::max_element(per_batch.begin(), per_batch.end(), [](auto& a, auto& b) { return a.second < b.second; })->first;
  std::vector<double> v;
  for (const auto& d : log.decode)
    if (d.running_req == bs) v.push_back(d.gen_tok_s);
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

bool has_finding(const json& report, const std::string& id) {
  for (const auto& f : report.at("findings"))
    if (f.at("id") == id) return true;
  return false;
}

const json& finding(const json& report, const std::string& id) {
  for (const auto& f : report.at("findings"))
    if (f.at("id") == id) return f;
  FAIL("no finding " << id);
  return report;
}

// `specsim run --scenario FILE`'s tok/s with the all-reduce the measured run ran: SGLang's own at
// tp > 1 (its custom kernel where its gates allow it, as the log's server_args say), NCCL's name
// at tp 1 (no all-reduce).
double run_tok_s(const std::string& scenario, bool spec) {
  const json r = run_json({"run", "--scenario", scenario});
  const json& first = r.at("scenarios").at(0);
  const std::string ran = first.at("allreduce");
  REQUIRE((ran == "nccl" || ran.rfind("sglang", 0) == 0));
  return spec ? first.at("spec").at("tok_per_s").get<double>() : first.at("baseline").at("tok_per_s").get<double>();
}

}  // namespace

TEST_CASE("diagnose -> scenario file -> run reproduces the log's measured tok/s within 1%") {
  const std::string dir = fresh_dir();
  struct Case {
    std::string log, hardware, how;
    bool spec;
  };
  for (const auto& c : std::vector<Case>{
           {kEagle3, "h100-sxm:nvswitch", "logged-accept-len-implied-overhead", true},
           {kNextn, "h200:nvswitch", "logged-accept-len-implied-overhead", true},
           {kBase, "h100-sxm:nvswitch", "measured-baseline", false},
           {kSeed, "rtx-pro-6000:pcie-numa", "logged-accept-len-implied-overhead", true},
       }) {
    INFO(c.log);
    const double measured = median_tok_s(c.log);
    for (const std::string ext : {".yaml", ".json"}) {
      const std::string out = dir + "/scenario" + ext;
      const json d = run_json({"diagnose", c.log, "--hardware", c.hardware, "-o", out});
      CHECK(d.at("reproduction").at("how") == c.how);
      CHECK(d.at("reproduction").at("reproduces") == true);
      CHECK(d.at("measured").at("tok_s").get<double>() == Approx(measured));
      CHECK(d.at("speculative") == c.spec);
      REQUIRE(exists(out));
      CHECK(run_tok_s(out, c.spec) == Approx(measured).epsilon(0.01));
    }
  }
  // The scenario keeps what the launch said.
  const json d = run_json({"diagnose", kEagle3, "--hardware", "h100-sxm:nvswitch"});
  CHECK(d.at("model") == "llama-3.1-8b");
  CHECK(d.at("speculative_num_steps") == 5);
  CHECK(d.at("speculative_eagle_topk") == 8);
  CHECK(d.at("speculative_num_draft_tokens") == 32);
  CHECK(d.at("scenario").at("settings").at("cuda_graph_max_bs") == 8);
  CHECK(d.at("scenario").at("settings").at("accept_len").get<double>() ==
        Approx(d.at("measured").at("accept_len").get<double>()));
  CHECK(d.at("wrote").is_null());
  const json n = run_json({"diagnose", kNextn, "--hardware", "h200:nvswitch"});
  CHECK(n.at("model") == "deepseek-v3");
  CHECK(n.at("tp_size") == 8);
  CHECK(n.at("speculative_algorithm") == "EAGLE");
  CHECK(n.at("batch_size") == 1);  // 45 lines at 1 request, 15 at 4
  CHECK(n.at("lines_used").size() == 45);
}

TEST_CASE("diagnose from a speculative log alone: the baseline it writes is reported as implied") {
  const std::string out = fresh_dir() + "/s.yaml";
  REQUIRE(run_specsim({"diagnose", kEagle3, "--hardware", "h100-sxm:nvswitch", "-o", out}).exit_code == 0);
  const auto r = run_specsim({"run", "--scenario", out});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("tok/s implied at bs 1") != std::string::npos);
  CHECK(r.out.find("tok/s measured at bs 1") == std::string::npos);
}

TEST_CASE("diagnose findings: figure, range and advice where the log and the model disagree") {
  // DeepSeek-V3 at 96 tok/s and accept len 2.66 on 8x H200: far more per forward than the model.
  const json n = run_json({"diagnose", kNextn, "--hardware", "h200:nvswitch"});
  const json& o = finding(n, "overhead-out-of-range");
  CHECK(o.at("warning") == true);
  CHECK(o.at("figure").get<double>() > o.at("range").at(1).get<double>());
  CHECK(o.at("figure").get<double>() == Approx(n.at("implied").at("overhead_us_per_forward").get<double>()));
  CHECK_FALSE(o.at("advice").get<std::string>().empty());
  CHECK(has_finding(n, "batch-mixed"));
  // --batch-size picks the 4-request lines.
  const json n4 = run_json({"diagnose", kNextn, "--hardware", "h200:nvswitch", "--batch-size", "4"});
  CHECK(n4.at("batch_size") == 4);
  CHECK(n4.at("lines_used").size() == 15);
  CHECK(n4.at("reproduction").at("reproduces") == true);

  // Llama-3.1-8B EAGLE-3 near the published H100 figures: no warning.
  const json e = run_json({"diagnose", kEagle3, "--hardware", "h100-sxm:nvswitch"});
  for (const auto& f : e.at("findings")) CHECK(f.at("warning") == false);

  // The older sample: cuda graph False in every line -> verify eager in the scenario.
  const json s = run_json({"diagnose", kSeed, "--hardware", "rtx-pro-6000:pcie-numa"});
  CHECK(has_finding(s, "graphs-off"));
  CHECK(s.at("scenario").at("settings").at("eager_phases") == "verify");
  CHECK(s.at("measured").at("eager_lines") == 60);

  // Plain decoding: reported, speculation off.
  const json b = run_json({"diagnose", kBase, "--hardware", "h100-sxm:nvswitch"});
  CHECK(has_finding(b, "speculation-off"));
  CHECK(finding(b, "speculation-off").at("warning") == false);

  // With a measured plain-decode log the accept len is implied, and compared with the logged one.
  const json m = run_json({"diagnose", kNextn, "--hardware", "h200:nvswitch", "--baseline-from",
                           traces_path("sglang-baseline-old-form-synthetic.log")});
  CHECK(m.at("reproduction").at("how") == "measured-baseline-implied-accept-len");
  CHECK(m.at("reproduction").at("reproduces") == true);
  CHECK(has_finding(m, "accept-len-gap"));
  CHECK(m.at("implied").at("accept_len").get<double>() < m.at("measured").at("accept_len").get<double>());

  // An all-reduce measurement: nccl-tests at the verify payload, or a torch trace's NCCL kernels.
  const json t = run_json(
      {"diagnose", kNextn, "--hardware", "h200:nvswitch", "--trace", traces_path("torch-trace-verify-synthetic.json")});
  CHECK(t.at("measured").at("allreduce_us").get<double>() == Approx(200).epsilon(0.02));
  CHECK(has_finding(t, "allreduce-out-of-range"));
  const json nt = run_json({"diagnose", kNextn, "--hardware", "h200:nvswitch", "--nccl-tests",
                            traces_path("nccl-tests-a100sxm4x8-nvlink.txt")});
  CHECK(nt.at("measured").at("allreduce_us").get<double>() > 0);
  CHECK(nt.at("reproduction").at("reproduces") == true);
}

TEST_CASE("diagnose --nccl-tests: a -g 8 eager table's one launching thread is told apart from the collective") {
  // One thread launching 8 GPUs' collectives costs about 33.3 us an iteration (models/nccl/tuning.json):
  // nccl-tests prints max(host, collective) + min(host, collective) / iters.
  auto allreduce_finding = [](const json& j) {
    for (const auto& f : j.at("findings"))
      if (f.at("id") == "allreduce-host-bound") return true;
    return false;
  };
  // The thanos A100 host: 41.0 us at 64 KB with -g 8, 31.5 us one process per GPU. The -g 8 time is
  // within 1.5x of the launch: used as printed, an upper bound, and said so.
  const json g8 = run_json({"diagnose", kNextn, "--hardware", "h200:nvswitch", "--nccl-tests",
                            traces_path("nccl-tests/a100-sxm4-80gb-x8-nvlink-g8-thanos.txt")});
  CHECK(allreduce_finding(g8));
  CHECK(g8.at("measured").at("allreduce_us").get<double>() == Approx(40.95).epsilon(0.01));
  // an upper bound above the model is not reported as out of range
  CHECK_FALSE(has_finding(g8, "allreduce-out-of-range"));
  const json mpi = run_json({"diagnose", kNextn, "--hardware", "h200:nvswitch", "--nccl-tests",
                             traces_path("nccl-tests/a100-sxm4-80gb-x8-nvlink-mpi-thanos.txt")});
  CHECK_FALSE(allreduce_finding(mpi));
  // A collective well above the launch: the launch overlaps it, and only its fill of 20 iterations
  // (33.3 / 20 us) comes off the printed time.
  const std::string dir = fresh_dir(), log = dir + "/g8-slow.txt";
  write_text(log,
             "# nThread 1 nGpus 8 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 "
             "validation: 1 graph: 0\n"
             "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   "
             "busbw #wrong\n"
             "       32768          8192     float     sum      -1   100.00    0.33    0.57      0   100.00    0.33    "
             "0.57      0\n"
             "       65536         16384     float     sum      -1   100.00    0.66    1.15      0   100.00    0.66    "
             "1.15      0\n");
  const json slow = run_json({"diagnose", kNextn, "--hardware", "h200:nvswitch", "--nccl-tests", log});
  CHECK_FALSE(allreduce_finding(slow));
  CHECK(slow.at("measured").at("allreduce_us").get<double>() == Approx(100 - (8 * 3.96 + 1.6) / 20).epsilon(1e-3));
}

TEST_CASE("diagnose findings on edited logs: accept len above steps + 1, unstable throughput, no server_args") {
  const std::string dir = fresh_dir();
  std::string text = slurp(kEagle3);
  write_text(dir + "/steps.log", edit(edit(text, "speculative_num_steps=5", "speculative_num_steps=2"),
                                      "speculative_num_draft_tokens=32", "speculative_num_draft_tokens=8"));
  const json s = run_json({"diagnose", dir + "/steps.log", "--hardware", "h100-sxm:nvswitch"});
  CHECK(has_finding(s, "accept-len-above-steps"));
  CHECK(finding(s, "accept-len-above-steps").at("range").at(1) == 3.0);

  // Every other line at a third of the throughput.
  std::string unstable;
  int n = 0;
  for (const auto l : ingest::split_lines(text)) {
    std::string line(l);
    const auto at = line.find("gen throughput (token/s): ");
    if (at != std::string::npos && n++ % 2) line = edit(line, "(token/s): 3", "(token/s): 1");
    unstable += line + "\n";
  }
  write_text(dir + "/unstable.log", unstable);
  const json u = run_json({"diagnose", dir + "/unstable.log", "--hardware", "h100-sxm:nvswitch"});
  CHECK(has_finding(u, "throughput-unstable"));
  CHECK(finding(u, "throughput-unstable").at("figure").get<double>() > 0.1);

  // No server_args line: the flags stand in for it.
  std::string no_args;
  for (const auto l : ingest::split_lines(text))
    if (std::string(l).find("server_args=") == std::string::npos) no_args += std::string(l) + "\n";
  write_text(dir + "/noargs.log", no_args);
  const json a = run_json({"diagnose", dir + "/noargs.log", "--hardware", "h100-sxm:nvswitch", "--model",
                           "llama-3.1-8b", "--speculative-algorithm", "EAGLE3", "--speculative-num-steps", "5",
                           "--speculative-eagle-topk", "8", "--speculative-num-draft-tokens", "32"});
  CHECK(has_finding(a, "no-server-args"));
  CHECK(a.at("server_args_line").is_null());
  CHECK(a.at("reproduction").at("reproduces") == true);
}

TEST_CASE("diagnose bad input: one error line, exit 2, no -o file") {
  const std::string dir = fresh_dir();
  const std::string out = dir + "/s.yaml";
  write_text(dir + "/nodecode.log", "[2025-07-14 09:30:01] server_args=ServerArgs(model_path='x')\nhello\n");
  std::string text = slurp(kEagle3);
  std::string unknown = text;
  for (std::size_t p; (p = unknown.find("meta-llama/Llama-3.1-8B-Instruct")) != std::string::npos;)
    unknown.replace(p, 32, "mistralai/Mistral-7B-v0.3");
  write_text(dir + "/unknown.log", unknown);
  std::string no_args;
  for (const auto l : ingest::split_lines(text))
    if (std::string(l).find("server_args=") == std::string::npos) no_args += std::string(l) + "\n";
  write_text(dir + "/noargs.log", no_args);
  const std::string bad_tp = text.replace(text.find("tp_size=1"), 9, "tp_size=x");
  write_text(dir + "/badtp.log", bad_tp);
  struct Case {
    std::vector<std::string> args;
    std::string where;
  };
  const std::string hw = "h100-sxm:nvswitch";
  for (const auto& c : std::vector<Case>{
           {{dir + "/missing.log", "--hardware", hw}, "missing.log"},
           {{dir + "/nodecode.log", "--hardware", hw}, "nodecode.log:2"},
           {{dir + "/unknown.log", "--hardware", hw}, "--model"},
           {{dir + "/noargs.log", "--hardware", hw}, "--model"},
           {{dir + "/noargs.log", "--hardware", hw, "--model", "llama-3.1-8b"}, "--speculative-algorithm"},
           {{dir + "/badtp.log", "--hardware", hw}, "badtp.log:2"},
           {{kEagle3}, "--hardware"},
           {{kEagle3, "--hardware", "h100-sxm:nope"}, "--hardware"},
           {{kEagle3, "--hardware", hw, "--batch-size", "3"}, "--batch-size"},
           {{kNextn, "--hardware", "h200:nvswitch", "--trace", traces_path("torch-trace-verify-synthetic.json"),
             "--nccl-tests", traces_path("nccl-tests-a100sxm4x8-nvlink.txt")},
            "--trace"},
           {{kEagle3, "--hardware", hw, "--trace", traces_path("torch-trace-verify-synthetic.json")}, "--trace"},
           {{kEagle3, "--hardware", hw, "--baseline-from", kEagle3}, "--baseline-from"},
           {{kNextn, "--hardware", "h200:nvswitch", "--baseline-from", kBase}, "--baseline-from"},  // tp 1 vs 8
       }) {
    std::vector<std::string> args = {"diagnose"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    args.insert(args.end(), {"-o", out});
    const CliResult r = run_specsim(args);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.rfind("error: ", 0) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.find(c.where) != std::string::npos);
    CHECK(r.out.empty());
    CHECK_FALSE(exists(out));
  }
  // The unknown model's error lists the zoo.
  const CliResult r = run_specsim({"diagnose", dir + "/unknown.log", "--hardware", hw});
  CHECK(r.err.find("llama-3.1-8b") != std::string::npos);
  CHECK(r.err.find("deepseek-v3") != std::string::npos);
}

TEST_CASE("diagnose findings: the overhead range, by hand") {
  ingest::LogSummary log;
  log.launch = ingest::ServerArgs{};  // else a note says the log has none
  log.batch_size = 1, log.tok_s = 100, log.line_numbers = {1, 2}, log.decode_lines = 2, log.lines_per_batch = {{1, 2}};
  log.context_len = 1000, log.context_from = "#token";  // else a note says the context is assumed
  diagnose::Figures f;
  f.speculative = true, f.steps = 3, f.model_step_us = 10000, f.model_cycle_us = 15000;
  f.overhead_us = 2900;  // under 30% of the step
  CHECK(diagnose::find_disagreements(log, f).empty());
  f.overhead_us = 3100;
  auto fs = diagnose::find_disagreements(log, f);
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].id == "overhead-out-of-range");
  CHECK(*fs[0].range_lo == Approx(-1500));
  CHECK(*fs[0].range_hi == Approx(3000));
  CHECK(fs[0].line().find("3100") != std::string::npos);
  f.overhead_us = -1600;  // the model overstates the step by more than 15%
  CHECK(diagnose::find_disagreements(log, f).size() == 1);
  f.overhead_us = 100, f.model_step_us = 1000;  // small steps: 500 us of host work is still plausible
  CHECK(diagnose::find_disagreements(log, f).empty());
}

TEST_CASE("every server log under traces/sglang-logs and traces/vllm-logs goes through ingest and diagnose") {
  // A new log is covered by dropping it in the folder: ingest reads it, diagnose gives a scenario
  // or one error line (exit 2) and no file. The hardware each post states, where it is modelled.
  const std::map<std::string, std::string> hardware = {
      {"sglang-nextn-deepseek-v3-tp8-h200-synthetic-from-real-format.log", "h200:nvswitch"},
      {"vllm-eagle3-qwen3-8b-h20-synthetic-from-real-format.log", "h20:nvswitch"},
      {"vllm-baseline-qwen3-8b-h20-synthetic-from-real-format.log", "h20:nvswitch"},
  };
  const std::map<std::string, std::string> refused = {
      // No server_args line and no model the zoo holds (Qwen3-8B; a model the post does not name).
      {"real-eagle3-idle-gap-sglang-11948.log", "no server_args line to name the model: give --model"},
      {"real-gpu-token-hisparse-sglang-22331.log", "no server_args line to name the model: give --model"},
      {"real-token-hisparse-before-sglang-22331.log", "no server_args line to name the model: give --model"},
      // vLLM excerpts without their start-up lines (traces/vllm-logs/README.md)
      {"real-mtp-steady-qwen38-27b-rtx3090-68.log", "no non-default args line to name the model: give --model"},
      {"real-mtp-prompt-club-3090-105.log", "no non-default args line to name the model: give --model"},
      {"real-plain-qwen3-30b-a3b-vllm-30599.log", "no non-default args line to name the model: give --model"},
      {"real-dp-engines-vllm-ascend-12521.log", "no non-default args line to name the model: give --model"},
      {"real-plain-journald-vllm-40630.log", "no non-default args line to name the model: give --model"},
  };
  const std::string dir = fresh_dir();
  int logs = 0, real = 0, vllm = 0;
  for (const auto& path : server_log_files()) {
    const std::filesystem::directory_entry e(path);
    if (e.path().extension() != ".log") continue;
    vllm += e.path().parent_path().filename() == "vllm-logs";
    const std::string name = e.path().filename().string(), file = e.path().string();
    INFO(name);
    ++logs, real += name.rfind("real-", 0) == 0;
    const CliResult in = run_specsim({"ingest", "--sglang-log", file});
    CHECK(in.exit_code == 0);
    const CliResult in_json = run_specsim({"ingest", "--sglang-log", file, "--json"});
    REQUIRE(in_json.exit_code == 0);
    CHECK(json::parse(in_json.out).at("decode_lines").get<std::size_t>() ==
          ingest::parse_server_log(slurp(file), file).decode.size());
    const std::string out = dir + "/" + name + ".yaml";
    const auto hw = hardware.count(name) ? hardware.at(name) : "h100-sxm:nvswitch";
    const CliResult d = run_specsim({"diagnose", file, "--hardware", hw, "-o", out});
    INFO(d.err);
    if (refused.count(name)) {
      CHECK(d.exit_code == 2);
      CHECK(d.err.find(refused.at(name)) != std::string::npos);
    }
    if (d.exit_code == 0) {
      CHECK(exists(out));
    } else {
      CHECK(d.exit_code == 2);
      CHECK(d.err.rfind("error: ", 0) == 0);
      CHECK(std::count(d.err.begin(), d.err.end(), '\n') == 1);
      CHECK_FALSE(exists(out));
    }
  }
  CHECK(logs >= 13);
  CHECK(real >= 8);
  CHECK(vllm >= 7);
}

TEST_CASE("idle gap: the real EAGLE-3 excerpt's median is its steady figure, and the run is not unstable") {
  // sgl-project/sglang#11948: the first decode line (0.39 tok/s) divides its tokens by the idle
  // time before the request; the four after it decode at 165..189 tok/s.
  const auto lines = tok_s_of_lines(kIdleGap);
  REQUIRE(lines.size() >= 3);
  const std::vector<double> steady(lines.begin() + 1, lines.end());
  const auto log = ingest::parse_sglang_log(slurp(kIdleGap), kIdleGap);
  const ingest::LogSummary s = ingest::summarize_log(log, kIdleGap, std::nullopt);
  CHECK(s.tok_s == median_of(steady));
  CHECK(s.tok_s != median_of(lines));  // what it read before: the gap line pulled the median down
  REQUIRE(s.idle_gap_lines.size() == 1);
  CHECK(s.idle_gap_lines[0].line == log.decode[0].line);
  CHECK(s.idle_gap_lines[0].why.find("first decode line") != std::string::npos);
  CHECK(s.line_numbers.size() == steady.size());
  CHECK(s.tok_s_cv < 0.10);
  CHECK(s.tok_s_min == *std::min_element(steady.begin(), steady.end()));
  // The gap line's accept len still counts (it counts tokens, not time).
  double accept = 0;
  for (const auto& d : log.decode) accept += *d.accept_len;
  CHECK(*s.accept_len == Approx(accept / static_cast<double>(log.decode.size())));

  // Through the command line: Qwen3-8B is not in the zoo, so a stand-in zoo model with the
  // post's launch settings (the lines' summary does not depend on the model).
  const std::vector<std::string> flags = {"--hardware",
                                          "a100-sxm:nvswitch",
                                          "--model",
                                          "llama-3.1-8b",
                                          "--tp-size",
                                          "2",
                                          "--speculative-algorithm",
                                          "EAGLE3",
                                          "--speculative-num-steps",
                                          "3",
                                          "--speculative-eagle-topk",
                                          "1",
                                          "--speculative-num-draft-tokens",
                                          "4"};
  std::vector<std::string> args = {"diagnose", kIdleGap, "--json"};
  args.insert(args.end(), flags.begin(), flags.end());
  const json d = run_json(args);
  CHECK(d.at("measured").at("tok_s").get<double>() == median_of(steady));
  CHECK(d.at("idle_gap_lines") == json::array({log.decode[0].line}));
  CHECK(d.at("lines_used").size() == steady.size());
  CHECK_FALSE(has_finding(d, "throughput-unstable"));
  CHECK(finding(d, "idle-gap-lines").at("figure") == 1.0);
  CHECK(finding(d, "idle-gap-lines").at("warning") == false);
  // the threshold's median is of every line, the gap line with them: said so, not "the run's median"
  // (the figure above leaves it out)
  CHECK(finding(d, "idle-gap-lines").at("message").get<std::string>().find("the median of all 5 lines with it") !=
        std::string::npos);
  // The same log without the gap line: the same figure, nothing left out.
  const std::string dir = fresh_dir();
  std::string cut;
  const std::string excerpt = slurp(kIdleGap);
  for (const auto l : ingest::split_lines(excerpt))
    if (std::string(l).find("(token/s): 0.39,") == std::string::npos) cut += std::string(l) + "\n";
  write_text(dir + "/cut.log", cut);
  args[1] = dir + "/cut.log";
  const json c = run_json(args);
  CHECK(c.at("measured").at("tok_s") == d.at("measured").at("tok_s"));
  CHECK(c.at("idle_gap_lines").empty());
  CHECK_FALSE(has_finding(c, "idle-gap-lines"));
  // every setting stated by a flag: the missing server_args line is only said
  CHECK(finding(d, "no-server-args").at("warning") == false);
  // settings neither the log nor a flag gave are SGLang's defaults, said as a warning naming the flags
  const json guessed = run_json({"diagnose", kIdleGap, "--json", "--hardware", "a100-sxm:nvswitch", "--model",
                                 "llama-3.1-8b", "--speculative-algorithm", "EAGLE3", "--speculative-num-steps", "3"});
  CHECK(finding(guessed, "no-server-args").at("warning") == true);
  const std::string m = finding(guessed, "no-server-args").at("message");
  CHECK(m.find("no flag gave tp 1, topk 4, 8 draft tokens") != std::string::npos);

  // A second request 10 minutes later, from the timestamps: its first line is the gap, not the
  // first line of the log. The same slow line 1 s after the previous one is kept (not idle).
  std::string text = slurp(kIdleGap), later = text;
  for (std::size_t p; (p = later.find("2025-10-22 10:27:5")) != std::string::npos;)
    later.replace(p, 18, "2025-10-22 10:37:5");
  write_text(dir + "/two.log", text + later.substr(later.find('\n') + 1));
  args[1] = dir + "/two.log";
  const json two = run_json(args);
  CHECK(two.at("idle_gap_lines").size() == 2);
  CHECK(finding(two, "idle-gap-lines").at("message").get<std::string>().find("first decode line") != std::string::npos);
  const auto parsed = ingest::parse_sglang_log(slurp(dir + "/two.log"), "two");
  const auto& second_gap = parsed.decode[lines.size()];
  CHECK(*second_gap.since_previous_s > 5 * 60);
  const auto gaps = ingest::summarize_log(parsed, "two", std::nullopt).idle_gap_lines;
  REQUIRE(gaps.size() == 2);
  CHECK(gaps[1].why.find("s after the previous decode line") != std::string::npos);
  // The repeat 1 s after the last line: its slow first line is a prefill's, not an idle gap's.
  std::string repeat;
  for (const auto l : ingest::split_lines(text)) {
    std::string line(l);
    if (const auto at = line.find("2025-10-22 10:27:5"); at != std::string::npos) line[at + 18] = '9';
    if (line.rfind("#", 0) != 0) repeat += line + "\n";
  }
  write_text(dir + "/near.log", text + repeat);
  args[1] = dir + "/near.log";
  CHECK(run_json(args).at("idle_gap_lines").size() == 1);  // only the log's first line
}

TEST_CASE("the context: #gpu-token read as #token, and a log without a count says what it assumes") {
  // sgl-project/sglang#22331: 5 requests, 20800 KV tokens, logged as #token before, #gpu-token after.
  const auto after = ingest::parse_sglang_log(slurp(kGpuToken), kGpuToken);
  const auto before = ingest::parse_sglang_log(slurp(kTokenBefore), kTokenBefore);
  const auto sa = ingest::summarize_log(after, kGpuToken, std::nullopt);
  const auto sb = ingest::summarize_log(before, kTokenBefore, std::nullopt);
  REQUIRE(sa.context_len);
  CHECK(*sa.context_len == after.decode[0].tokens / after.decode[0].running_req);
  CHECK(sa.context_len == sb.context_len);
  CHECK(sa.context_from == "#gpu-token");
  CHECK(sb.context_from == "#token");
  CHECK(sa.idle_gap_lines.empty());
  CHECK(sb.idle_gap_lines.empty());

  // Through the command line with a stand-in zoo model (the post names none): the scenario runs
  // at the logged context, and says where it was read.
  const std::vector<std::string> flags = {"--hardware", "h100-sxm:nvswitch", "--model", "llama-3.1-8b", "--json"};
  auto diag = [&](const std::string& file) {
    std::vector<std::string> a = {"diagnose", file};
    a.insert(a.end(), flags.begin(), flags.end());
    return run_json(a);
  };
  const json ja = diag(kGpuToken), jb = diag(kTokenBefore);
  CHECK(ja.at("scenario").at("settings").at("context_len") == *sa.context_len);
  CHECK(jb.at("scenario").at("settings").at("context_len") == *sa.context_len);
  CHECK(ja.at("measured").at("context_from") == "#gpu-token");
  CHECK(finding(ja, "context-from").at("figure") == static_cast<double>(*sa.context_len));
  CHECK_FALSE(has_finding(jb, "context-from"));
  CHECK_FALSE(has_finding(ja, "context-assumed"));
  // Without any token count the context is the default, stated as an assumption.
  std::string none;
  const std::string gpu_text = slurp(kGpuToken);
  for (const auto l : ingest::split_lines(gpu_text)) {
    std::string line(l);
    if (const auto at = line.find("#gpu-token: "); at != std::string::npos)
      line.erase(at, line.find(", ", at) + 2 - at);
    none += line + "\n";
  }
  const std::string dir = fresh_dir();
  write_text(dir + "/none.log", none);
  const json jn = diag(dir + "/none.log");
  CHECK(jn.at("measured").at("context_len").is_null());
  const json& assumed = finding(jn, "context-assumed");
  CHECK(assumed.at("figure") == jn.at("scenario").at("settings").at("context_len"));
  CHECK(assumed.at("message").get<std::string>().find("assumes") != std::string::npos);
  const CliResult text =
      run_specsim({"diagnose", dir + "/none.log", "--hardware", "h100-sxm:nvswitch", "--model", "llama-3.1-8b"});
  CHECK(text.out.find("context-assumed") != std::string::npos);
}

TEST_CASE("an EAGLE-3 log on a target without a zoo draft: a true hint, and the flag it names works") {
  // Llama-3.3-70B has no EAGLE-3 draft in the zoo. The sample's lines on that target, 4x H100, at
  // a quarter of the sample's tok/s (a figure the model can reach).
  const std::string dir = fresh_dir();
  std::string text = slurp(kEagle3);
  for (std::size_t p; (p = text.find("meta-llama/Llama-3.1-8B-Instruct")) != std::string::npos;)
    text.replace(p, 32, "meta-llama/Llama-3.3-70B-Instruct");
  text = scale_tok_s(edit(text, "tp_size=1,", "tp_size=4,"), 0.25);
  write_text(dir + "/l33.log", text);
  const std::string out = dir + "/l33.yaml";
  const CliResult r = run_specsim({"diagnose", dir + "/l33.log", "--hardware", "h100-sxm:nvswitch", "-o", out});
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("the zoo has no EAGLE-3 draft for llama-3.3-70b") != std::string::npos);
  CHECK(r.err.find("give --speculative-draft-model-path") != std::string::npos);
  CHECK(r.err.find("the log's draft: 'jamesliu1/sglang-EAGLE3-Llama-3.1-Instruct-8B', " + dir + "/l33.log:2") !=
        std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK_FALSE(exists(out));
  // The flag the hint names: a zoo draft of the same shape, or a draft's config.json.
  for (const std::string draft :
       {std::string("llama-3.1-70b/eagle3"), models_path("llama-3.1-70b/eagle3/config.json")}) {
    INFO(draft);
    const json d = run_json({"diagnose", dir + "/l33.log", "--hardware", "h100-sxm:nvswitch",
                             "--speculative-draft-model-path", draft, "-o", out});
    CHECK(d.at("model") == "llama-3.3-70b");
    CHECK(d.at("speculative_algorithm") == "EAGLE3");
    CHECK(d.at("reproduction").at("reproduces") == true);
    CHECK(d.at("scenario").at("draft") == draft);
    CHECK(run_tok_s(out, true) == Approx(median_tok_s(dir + "/l33.log")).epsilon(0.01));
  }
  // A zoo model with a draft of another kind: the hint lists it.
  std::string l2 = slurp(kEagle3);
  for (std::size_t p; (p = l2.find("meta-llama/Llama-3.1-8B-Instruct")) != std::string::npos;)
    l2.replace(p, 32, "meta-llama/Llama-2-7b-chat-hf");
  write_text(dir + "/l2.log", edit(l2, "speculative_algorithm='EAGLE3'", "speculative_algorithm='EAGLE'"));
  const CliResult r2 = run_specsim({"diagnose", dir + "/l2.log", "--hardware", "h100-sxm:nvswitch"});
  CHECK(r2.exit_code == 2);
  CHECK(r2.err.find("or a zoo draft of llama-2-7b (llama-2-7b/eagle1)") != std::string::npos);
  // A bad draft path is the flag's own error.
  const CliResult bad = run_specsim({"diagnose", dir + "/l33.log", "--hardware", "h100-sxm:nvswitch",
                                     "--speculative-draft-model-path", dir + "/missing.json"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--speculative-draft-model-path") != std::string::npos);
}

TEST_CASE("scenario YAML: block form, strings quoted") {
  const json j = {{"format", "specsim-scenario-1"},
                  {"notes", {"a: b", "it's \"quoted\""}},
                  {"settings", {{"tp_size", 8}, {"accept_len", 2.5}, {"on", true}, {"none", json::object()}}},
                  {"measured", {{{"origin", "x"}, {"settings", {{"batch_size", 1}}}}}}};
  const std::string y = diagnose::to_yaml(j, "line one\nline two");
  CHECK(y.rfind("# line one\n# line two\n", 0) == 0);
  CHECK(y.find("format: \"specsim-scenario-1\"\n") != std::string::npos);
  CHECK(y.find("  - \"a: b\"\n") != std::string::npos);
  CHECK(y.find("  tp_size: 8\n") != std::string::npos);
  CHECK(y.find("  on: true\n") != std::string::npos);
  CHECK(y.find("  none: {}\n") != std::string::npos);
  CHECK(y.find("  - origin: \"x\"\n    settings:\n      batch_size: 1\n") != std::string::npos);
}

TEST_CASE("diagnose anchors a tp > 1 log with the all-reduce its server ran: SGLang's own, or NCCL when disabled") {
  // disable_custom_all_reduce=False: SGLang's custom kernel ran the verify's all-reduces. Anchored as
  // NCCL, `run --allreduce sglang` on the scenario read 99.6 tok/s against the log's 96.1.
  const std::string dir = fresh_dir(), on = dir + "/on.json", off = dir + "/off.json", off_log = dir + "/off.log";
  const json d = run_json({"diagnose", kNextn, "--hardware", "h200:nvswitch", "-o", on});
  CHECK(d.at("reproduction").at("reproduces") == true);
  const json r = run_json({"run", "--scenario", on});
  REQUIRE(r.at("scenarios").size() == 1);
  CHECK(r.at("scenarios").at(0).at("allreduce") == "sglang");
  CHECK(r.at("scenarios").at(0).at("spec").at("tok_per_s").get<double>() == Approx(median_tok_s(kNextn)).epsilon(0.01));
  // the custom all-reduce off: SGLang's NCCL path, and the scenario says so
  write_text(off_log, edit(slurp(kNextn), "disable_custom_all_reduce=False", "disable_custom_all_reduce=True"));
  run_json({"diagnose", off_log, "--hardware", "h200:nvswitch", "-o", off});
  const json n = run_json({"run", "--scenario", off});
  CHECK(n.at("scenarios").at(0).at("label") == "sglang:disable-custom");
  CHECK(n.at("scenarios").at(0).at("detail").get<std::string>().find("SGLang falls back to NCCL") == 0);
  CHECK(n.at("scenarios").at(0).at("spec").at("tok_per_s").get<double>() ==
        Approx(median_tok_s(off_log)).epsilon(0.01));
}

TEST_CASE("server_args read as run reads the same flags: an fp8 KV cache priced, another attention backend said") {
  const std::string dir = fresh_dir();
  std::string text = slurp(traces_path("sglang-logs/sglang-eagle3-llama3.1-8b-h100-synthetic-from-real-format.log"));
  for (const auto& [from, to] :
       std::vector<std::pair<std::string, std::string>>{{"kv_cache_dtype='auto'", "kv_cache_dtype='fp8_e4m3'"},
                                                        {"attention_backend='fa3'", "attention_backend='triton'"}}) {
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
  }
  write_text(dir + "/m.log", text);
  const json d = run_json({"diagnose", dir + "/m.log", "--json", "--hardware", "h100-sxm:nvswitch"});
  const std::string off = finding(d, "settings-not-modelled").at("message");
  CHECK(off.find("attention_backend=triton") != std::string::npos);
  CHECK(off.find("kv_cache_dtype") == std::string::npos);  // priced, as `run --kv-cache-dtype fp8_e4m3` does
  CHECK(d.at("scenario").dump().find("\"kv_cache_dtype\":\"fp8_e4m3\"") != std::string::npos);
}

TEST_CASE("an nccl-tests log of another GPU than --hardware's is named in a warning") {
  const std::string a100 = traces_path("nccl-tests/a100-sxm4-80gb-x8-nvlink-mpi-thanos.txt");
  const json d = run_json({"diagnose", kNextn, "--json", "--hardware", "h200:nvswitch", "--nccl-tests", a100});
  REQUIRE(has_finding(d, "allreduce-other-gpu"));
  CHECK(finding(d, "allreduce-other-gpu").at("warning") == true);
  CHECK(finding(d, "allreduce-other-gpu").at("message").get<std::string>().find("NVIDIA A100-SXM4-80GB") !=
        std::string::npos);
  // the log's own GPU: no warning
  CHECK(diagnose::nccl_tests_other_gpu(a100, "a100-sxm").empty());
  CHECK(diagnose::nccl_tests_other_gpu(a100, "h200") == "NVIDIA A100-SXM4-80GB");
  using diagnose::nccl_tests_same_gpu;
  CHECK(nccl_tests_same_gpu("NVIDIA H100 80GB HBM3", "h100-sxm"));
  CHECK_FALSE(nccl_tests_same_gpu("NVIDIA H100 PCIe", "h100-sxm"));
  CHECK_FALSE(nccl_tests_same_gpu("NVIDIA H100 NVL", "h100-sxm"));
  CHECK_FALSE(nccl_tests_same_gpu("NVIDIA H200", "h20"));
  CHECK(nccl_tests_same_gpu("NVIDIA H20", "h20"));
  CHECK_FALSE(nccl_tests_same_gpu("NVIDIA GB200", "b200"));
  CHECK(nccl_tests_same_gpu("NVIDIA GeForce RTX 4090", "rtx-4090"));
  CHECK_FALSE(nccl_tests_same_gpu("NVIDIA GeForce RTX 5090", "rtx-4090"));
  CHECK_FALSE(nccl_tests_same_gpu("NVIDIA GeForce RTX 4090", "rtx-pro-6000"));
  CHECK(nccl_tests_same_gpu("NVIDIA RTX PRO 6000 Blackwell Server Edition", "rtx-pro-6000"));
  CHECK(nccl_tests_same_gpu("AMD Instinct MI300X", "mi300x"));
}
