// Traces out: the per-op timeline agrees with the phase totals, the Chrome trace and CSV hold what
// they promise, and the multi-cycle draws repeat for a seed.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "accept/accept_len.h"
#include "engine/op_cost.h"
#include "evaluate/evaluate_scenario.h"
#include "scenario/resolve.h"
#include "test_util.h"
#include "timeline/accept_sampler.h"
#include "timeline/multi_cycle.h"
#include "timeline/op_timeline.h"

using namespace specsim;
using namespace specsim::test;
using nlohmann::json;

namespace {

/// Checks every phase's op timeline against time_phase; returns the ops left off it as fused
/// into another kernel (repeats counted).
int check_timeline_matches(const RunArgs& args) {
  const Scenario s = resolve_scenario(args);
  const ScenarioResult r = run_scenario(s);
  int checked = 0, skipped = 0;
  for (const auto& res : r.results) {
    if (!res.refused.empty()) continue;
    const CostContext ctx = cost_context(s, r, res.backend);
    for (const auto& p : r.plan.phases) {
      const PhaseTiming t = time_phase(p, ctx);
      const ForwardTimeline f = expand_forward(p, ctx);
      INFO(phase_name(p.kind) << " " << res.backend.label() << (p.graph ? " graph" : " eager"));
      CHECK(std::abs(f.total_us - t.us) <= 1e-6 * t.us);
      CHECK(static_cast<int>(f.ops.size()) == t.kernels);
      double gpu = 0, prev_end = f.graph ? f.graph_launch_us : 0, host_end = 0;
      std::size_t k = 0;
      // an op fused into another kernel (fused_away, in the phase's own context) is not launched
      const CostContext pctx = res.backend.applies_to(p.kind) ? ctx : in_phase(ctx, p.kind);
      for (const auto& blk : p.blocks)
        for (int r = 0; r < blk.repeat; ++r) {
          // A kernel after one of another class in the repeated layer (the block's last op
          // precedes its first) starts kernel_switch_us later when back to back.
          OpClass before = op_class(blk.ops.back().kind);
          for (std::size_t i = 0; i < blk.ops.size(); ++i) {
            if (fused_away(blk.ops[i], pctx)) {
              ++skipped;
              continue;
            }
            REQUIRE(k < f.ops.size());
            const OpEvent& e = f.ops[k++];
            CHECK(e.op == &blk.ops[i]);
            gpu += e.dur_us;
            const bool change = blk.ops.size() > 1 && op_class(blk.ops[i].kind) != before;
            before = op_class(blk.ops[i].kind);
            const double gap = change ? s.hw.gpu.kernel_switch_us : 0.0;
            if (f.graph) {
              CHECK(e.start_us == Approx(prev_end + gap));  // back to back
            } else {
              CHECK(e.host_start_us == Approx(host_end));  // the host launches one after another
              host_end = e.host_start_us + e.host_dur_us;
              CHECK(e.start_us == Approx(std::max(host_end, prev_end + gap)));  // its launch and the stream
            }
            prev_end = e.start_us + e.dur_us;
          }
        }
      CHECK(k == f.ops.size());
      const double parts = t.gemm_us + t.attention_us + t.allreduce_us + t.allgather_us + t.other_us;
      CHECK(std::abs(gpu - parts) <= 1e-6 * parts);
      ++checked;
    }
  }
  CHECK(checked >= 4);
  return skipped;
}

}  // namespace

TEST_CASE("op timeline sums equal time_phase totals (graph and eager phases)") {
  check_timeline_matches(RunArgs{});  // built-in: verify eager, the rest graph; nccl and custom
  RunArgs eager;
  eager.model_path = "llama-3.1-70b";
  eager.hardware = "h200:nvswitch";
  eager.tp_size = 8;
  eager.accept_len = 2.5;
  eager.disable_cuda_graph = true;
  check_timeline_matches(eager);
  RunArgs graph = eager;
  graph.disable_cuda_graph = false;
  graph.batch_size = 4;
  CHECK(check_timeline_matches(graph) == 0);
  // ops fused into another kernel are left off the timeline, and the rest keep their own costs:
  // the boundary add-norms under FlashInfer's all-reduce fusion, the MLA split merge inside FA3's
  // call (DeepSeek-V3 on Hopper under SGLang)
  RunArgs fusion = graph;
  fusion.enable_flashinfer_allreduce_fusion = true;
  CHECK(check_timeline_matches(fusion) > 0);
  RunArgs mla;
  mla.model_path = "deepseek-v3";
  mla.hardware = "h200:nvswitch";
  mla.tp_size = 8;
  mla.accept_len = 2.5;
  CHECK(check_timeline_matches(mla) > 0);
}

TEST_CASE("chain sampler: a seed repeats, its mean is the chain formula") {
  auto a = AcceptSampler::chain(0.6, 3, 42), b = AcceptSampler::chain(0.6, 3, 42), c = AcceptSampler::chain(0.6, 3, 43);
  std::vector<int> da, db, dc;
  for (int i = 0; i < 1000; ++i) da.push_back(a.draw()), db.push_back(b.draw()), dc.push_back(c.draw());
  CHECK(da == db);
  CHECK(da != dc);
  auto big = AcceptSampler::chain(0.6, 3, 7);
  double sum = 0;
  int lo = 99, hi = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const int d = big.draw();
    sum += d, lo = std::min(lo, d), hi = std::max(hi, d);
  }
  CHECK(lo == 1);
  CHECK(hi == 4);
  CHECK(sum / n == Approx(chain_accept_len(0.6, 3)).epsilon(0.01));
  // The first draws are fixed by mt19937_64 and our own arithmetic: the same on every platform.
  auto fixed = AcceptSampler::chain(0.5, 2, 1);
  std::vector<int> first;
  for (int i = 0; i < 8; ++i) first.push_back(fixed.draw());
  auto again = AcceptSampler::chain(0.5, 2, 1);
  for (int i = 0; i < 8; ++i) CHECK(again.draw() == first[static_cast<std::size_t>(i)]);
}

TEST_CASE("empirical sampler: mean of the logged means, draws in range") {
  auto s = AcceptSampler::empirical({1.5, 2.0, 2.5}, 2, 3);
  double sum = 0;
  const int n = 100000;
  for (int i = 0; i < n; ++i) {
    const int d = s.draw();
    REQUIRE(d >= 1);
    REQUIRE(d <= 3);
    sum += d;
  }
  CHECK(sum / n == Approx(2.0).epsilon(0.02));
}

TEST_CASE("multi-cycle: KV growth makes later cycles slower, percentiles ordered") {
  RunArgs args;
  args.model_path = "llama-3.1-8b";
  args.hardware = "h200:nvswitch";
  args.tp_size = 2;
  args.accept_rate = 0.7;
  args.context_len = 100000;
  const Scenario s = resolve_scenario(args);
  const ScenarioResult r = run_scenario(s);
  auto sampler = AcceptSampler::chain(0.7, s.run.num_steps, 9);
  const auto v = simulate_cycles(s, r, r.results.front().backend, sampler, 400);
  REQUIRE(v.size() == 400);
  CHECK(v.back().context_len > v.front().context_len);
  CHECK(v.back().cycle_us > v.front().cycle_us);
  const auto st = cycle_stats(v, 1);
  CHECK(st.p50_us <= st.p90_us);
  CHECK(st.p90_us <= st.p99_us);
  CHECK(st.tok_s_p99 <= st.tok_s_p90);  // latency convention: p99 is the slow tail
  CHECK(st.tok_s_p90 <= st.tok_s_p50);
  CHECK(st.mean_accept_len == Approx(chain_accept_len(0.7, s.run.num_steps)).epsilon(0.06));
}

TEST_CASE("cycle_stats: tok/s percentiles named as latency ones (p99 the slow tail)") {
  // 100 cycles of one token each taking 1..100 ms: tok/s 1000/k, the slowest 10.
  std::vector<CycleSample> v;
  for (int k = 1; k <= 100; ++k) v.push_back({k, 0, 1, 1000.0 * k, 1e6 / (1000.0 * k)});
  const auto st = cycle_stats(v, 1);
  CHECK(st.p99_us == Approx(99000));
  CHECK(st.tok_s_p50 == Approx(1e6 / 51000.0));  // the 50th slowest of 100 rates
  CHECK(st.tok_s_p90 == Approx(1e6 / 91000.0));  // 90% of cycles reach it or beat it
  CHECK(st.tok_s_p99 == Approx(1e6 / 100000.0));
}

TEST_CASE("run --cycles --seed: repeatable report with p50/p90/p99") {
  const auto a = run_specsim({"--json", "--cycles", "50", "--seed", "7"});
  const auto b = run_specsim({"--json", "--cycles", "50", "--seed", "7"});
  const auto c = run_specsim({"--json", "--cycles", "50", "--seed", "8"});
  REQUIRE(a.exit_code == 0);
  CHECK(a.out == b.out);
  const auto ja = json::parse(a.out);
  const auto& cy = ja["scenarios"][0]["cycles"];
  CHECK(cy["n"] == 50);
  CHECK(cy["seed"] == 7);
  CHECK(cy["p50_us"].get<double>() <= cy["p99_us"].get<double>());
  CHECK(cy["tok_per_s_p99"].get<double>() <= cy["tok_per_s_p50"].get<double>());
  CHECK(cy["tok_per_s"].get<double>() > 0);
  CHECK(a.out != c.out);  // another seed, other draws (50 cycles: the means may still tie)
  const auto t = run_specsim({"--cycles", "20"});
  REQUIRE(t.exit_code == 0);
  CHECK(t.out.find("p99_us") != std::string::npos);
  CHECK(t.out.find("chain model") != std::string::npos);
}

TEST_CASE("--trace and --csv: valid Chrome trace, one CSV row per op x rank x cycle x backend") {
  const std::string dir = fresh_dir();
  const auto r = run_specsim({"--trace", dir + "/t.json", "--csv", dir + "/t.csv", "--cycles", "3"});
  REQUIRE(r.exit_code == 0);
  const json tr = json::parse(slurp(dir + "/t.json"));
  REQUIRE(tr["traceEvents"].is_array());
  std::set<int> rank_pids;
  std::set<std::string> phases, spans;
  long long op_slices = 0;
  std::map<std::pair<int, int>, std::vector<std::pair<long long, long long>>> tracks;
  for (const auto& e : tr["traceEvents"]) {
    REQUIRE(e.contains("ph"));
    REQUIRE(e.contains("pid"));
    if (e["ph"] != "X") continue;
    REQUIRE(e["dur"].get<double>() >= 0);
    if (e["tid"] == 1 && e["pid"].get<int>() < 1000 && e["cat"] != "wait") {
      ++op_slices;
      rank_pids.insert(e["pid"].get<int>());
      for (const char* k : {"phase", "shape", "bytes", "flops", "comm_bytes"}) REQUIRE(e["args"].contains(k));
      for (const char* k : {"m", "n", "k"}) REQUIRE(e["args"]["shape"].contains(k));
      phases.insert(e["args"]["phase"].get<std::string>());
    }
    if (e["tid"] == 0 || e["tid"] == 3) spans.insert(e["cat"].get<std::string>());
    tracks[{e["pid"].get<int>(), e["tid"].get<int>()}].push_back(
        {std::llround(e["ts"].get<double>() * 1e3),
         std::llround((e["ts"].get<double>() + e["dur"].get<double>()) * 1e3)});
  }
  // Perfetto needs the slices of one track to nest or be disjoint, never to overlap partly.
  for (auto& [track, v] : tracks) {
    std::sort(v.begin(), v.end(),
              [](auto& a, auto& b) { return a.first != b.first ? a.first < b.first : a.second > b.second; });
    std::vector<long long> open;
    for (const auto& [b, e] : v) {
      while (!open.empty() && open.back() <= b) open.pop_back();
      INFO("pid " << track.first << " tid " << track.second << " at " << b);
      if (!open.empty()) REQUIRE(e <= open.back());
      open.push_back(e);
    }
  }
  CHECK(rank_pids.size() == 8 * 2);  // the built-in scenario is TP 8, drawn with NCCL and custom
  CHECK(phases == std::set<std::string>{"draft_decode", "verify", "draft_extend"});
  CHECK(spans.count("cycle"));
  CHECK(spans.count("phase"));

  // Kernels per cycle from the plan itself.
  const Scenario s = resolve_scenario(RunArgs{});
  const ScenarioResult res = run_scenario(s);
  long long ops = 0;
  for (const auto& p : res.plan.phases)
    if (p.kind != PhaseKind::BaselineDecode) ops += static_cast<long long>(p.count) * p.kernels();
  CHECK(op_slices == ops * 8 * 3 * 2);
  std::istringstream csv(slurp(dir + "/t.csv"));
  std::string line;
  std::getline(csv, line);
  CHECK(line.rfind("cycle,phase,rank,op,shape,bytes,start_us,dur_us", 0) == 0);
  long long rows = 0;
  while (std::getline(csv, line)) ++rows;
  CHECK(rows == ops * 8 * 3 * 2);
}

TEST_CASE("--trace to a path that cannot be written: exit 2, no file, no report") {
  const std::string dir = fresh_dir();
  const auto r = run_specsim({"--trace", dir + "/missing/t.json", "--csv", dir + "/t.csv"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind("error: ", 0) == 0);
  CHECK(r.err.find("--trace") != std::string::npos);
  CHECK(r.out.empty());
  CHECK_FALSE(exists(dir + "/missing/t.json"));
  CHECK(run_specsim({"--cycles", "-3"}).exit_code == 2);
  CHECK(run_specsim({"--cycles", "0"}).exit_code == 2);
  CHECK(run_specsim({"--cycles", "99999999"}).exit_code == 2);
}

TEST_CASE("a negative anchored overhead: the forward's kernels are drawn shortened to fit it, none past its end") {
  // 190 tok/s is faster than the modelled plain step of Llama-3.1-8B on one H100: the anchor takes
  // time off every target forward.
  const std::string dir = specsim::test::fresh_dir(), trace = dir + "/t.json";
  const auto r = specsim::test::run_specsim({"run", "--model-path", "llama-3.1-8b", "--hardware", "h100-sxm:nvswitch",
                                             "--tp-size", "1", "--accept-len", "3", "--measured-baseline-tok-s", "190",
                                             "--allreduce", "nccl", "--trace", trace});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const nlohmann::json t = nlohmann::json::parse(specsim::test::slurp(trace));
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> gpu;  // (pid, tid) -> [start, end)
  std::map<std::pair<int, int>, std::string> names;
  for (const auto& e : t["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name") names[{e["pid"], e["tid"]}] = e["args"]["name"];
  int scaled = 0;
  for (const auto& e : t["traceEvents"]) {
    if (e["ph"] != "X") continue;
    if (e["cat"] == "phase" && e["args"].contains("kernels_scaled_to_measured")) {
      ++scaled;
      CHECK(e["args"]["kernels_scaled_to_measured"].get<double>() < 1.0);
    }
    const std::pair<int, int> k{e["pid"], e["tid"]};
    if (names[k].find("GPU") != std::string::npos && e["cat"] != "wait")
      gpu[k].push_back({e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>()});
  }
  CHECK(scaled >= 1);  // the verify (and the plain step) of the cycle drawn
  for (auto& [k, v] : gpu) {
    std::sort(v.begin(), v.end());
    for (std::size_t i = 1; i < v.size(); ++i) CHECK(v[i - 1].second <= v[i].first + 1e-3);
  }
}
