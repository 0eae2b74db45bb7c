// Not a subcommand: the trace/cycles/measurement-file flags of `specsim run` (see run_trace.h).
#include "run_trace.h"

#include <fmt/format.h>

#include "accept/accept_len.h"
#include "ingest/sglang_log.h"
#include "ingest/text_lines.h"
#include "ingest/torch_trace.h"
#include "timeline/trace_writer.h"
#include "util/error.h"
#include "util/json_io.h"
#include "util/output_files.h"

namespace specsim::cli {

namespace {
constexpr int kMaxTraceRanks = 8;  // all ranks are identical in the analytic engine
constexpr int kMaxCycles = 1'000'000;
}  // namespace

void add_trace_flags(CLI::App& app, TraceArgs& t) {
  app.add_option("--trace", t.trace, "write a Chrome/Perfetto trace (JSON) of the simulated cycles");
  app.add_option("--csv", t.csv, "write one CSV row per op per rank per cycle");
  app.add_option("--cycles", t.cycles, "simulate N cycles, each with its own accept length (p50/p90/p99 in the report)")
      ->check(CLI::Range(1, kMaxCycles));
  app.add_option("--seed", t.seed, "seed of the accept-length draws (default 1)")->check(whole_number);
  app.add_option("--accept-from", t.accept_from, "SGLang server log: draw accept lengths from its logged accept len");
  app.add_option(
      "--baseline-from", t.baseline_from,
      "SGLang server log without speculation: its gen throughput at 1 running request is the measured baseline");
  app.add_option("--anchor-trace", t.anchor_trace,
                 "torch profiler trace: its mean NCCL all-reduce kernel time becomes --measured-allreduce-us");
}

std::vector<std::string> apply_measurement_files(const TraceArgs& t, RunArgs& args) {
  std::vector<std::string> notes;
  if (!t.accept_from.empty()) {
    if (args.accept_len || args.accept_rate)
      throw InputError("give either --accept-from or --accept-len/--accept-rate", "--accept-from");
    const auto log = ingest::parse_sglang_log(ingest::read_text(t.accept_from, "--accept-from"), t.accept_from);
    const auto lens = log.accept_lens();
    if (lens.empty())
      throw InputError("the log has no 'accept len' (speculation was off): use it with --baseline-from",
                       "--accept-from " + t.accept_from);
    double sum = 0;
    for (double v : lens) sum += v;
    args.accept_len = sum / static_cast<double>(lens.size());
    notes.push_back(fmt::format("accept len {:.3f} = mean of {} logged intervals in {} ({} unknown lines skipped)",
                                *args.accept_len, lens.size(), t.accept_from, log.unknown_lines));
  }
  if (!t.baseline_from.empty()) {
    if (args.measured_baseline_tok_s)
      throw InputError("give either --baseline-from or --measured-baseline-tok-s", "--baseline-from");
    const auto log = ingest::parse_sglang_log(ingest::read_text(t.baseline_from, "--baseline-from"), t.baseline_from);
    const auto tps = log.baseline_tok_s();
    if (!tps)
      throw InputError("no decode line without speculation at #running-req 1 with a positive gen throughput",
                       "--baseline-from " + t.baseline_from);
    args.measured_baseline_tok_s = *tps;
    args.measured_baseline_source = "--baseline-from " + t.baseline_from;
    notes.push_back(
        fmt::format("measured baseline {:.1f} tok/s = median gen throughput of {} lines at 1 running request in {}",
                    *tps, log.baseline_lines(), t.baseline_from));
  }
  if (!t.anchor_trace.empty()) {
    if (args.measured_allreduce_us)
      throw InputError("give either --anchor-trace or --measured-allreduce-us", "--anchor-trace");
    const auto tr = ingest::parse_torch_trace(ingest::read_text(t.anchor_trace, "--anchor-trace"), t.anchor_trace);
    const double us = tr.mean_nccl_allreduce_us();
    if (us <= 0) throw InputError("the trace holds no NCCL all-reduce kernel", "--anchor-trace " + t.anchor_trace);
    args.measured_allreduce_us = us;
    args.measured_allreduce_source = "--anchor-trace " + t.anchor_trace;
    notes.push_back(
        fmt::format("measured NCCL all-reduce {:.1f} us = mean of {} NCCL all-reduce kernels in {} (all phases)", us,
                    tr.count[static_cast<int>(ingest::KernelKind::NcclAllReduce)], t.anchor_trace));
  }
  return notes;
}

void check_accept_log_depth(const TraceArgs& t, const Scenario& s) {
  if (t.accept_from.empty() || !s.run.speculative()) return;
  const auto log = ingest::parse_sglang_log(ingest::read_text(t.accept_from, "--accept-from"), t.accept_from);
  const int most = s.run.num_steps + 1;
  for (const auto& d : log.decode)
    if (d.accept_len && *d.accept_len > most)
      throw InputError(fmt::format("accept len {:g} above --speculative-num-steps + 1 = {}: the log ran a deeper "
                                   "draft (give its --speculative-num-steps)",
                                   *d.accept_len, most),
                       fmt::format("{}:{}", t.accept_from, d.line));
}

TraceOutcome run_trace_outputs(const TraceArgs& t, const Scenario& s, const ScenarioResult& r) {
  TraceOutcome o;
  const bool files = !t.trace.empty() || !t.csv.empty();
  if (t.cycles == 0 && !files) return o;
  const int n = t.cycles > 0 ? t.cycles : 1;
  o.ran = true;
  const int depth = s.run.num_steps;
  // Each cycle adds up to steps + 1 tokens per request to the context the next one attends over.
  const long long most = s.run.context_len + static_cast<long long>(n) * (s.run.speculative() ? depth + 1 : 1);
  if (s.target.max_position > 0 && most > s.target.max_position)
    throw InputError(fmt::format("{} cycles grow the context from {} to up to {} tokens, past {}'s "
                                 "max_position_embeddings ({}): ask for fewer cycles or a shorter --context-len",
                                 n, s.run.context_len, most, s.target.name, s.target.max_position),
                     "--cycles");
  auto make_sampler = [&]() {
    if (!t.accept_from.empty()) {
      const auto log = ingest::parse_sglang_log(ingest::read_text(t.accept_from, "--accept-from"), t.accept_from);
      // A logged length above steps + 1 comes from a deeper draft than this scenario's: refused,
      // not clamped into a distribution it cannot produce.
      for (const auto& d : log.decode)
        if (d.accept_len && *d.accept_len > depth + 1)
          throw InputError(fmt::format("accept len {:g} above --speculative-num-steps + 1 = {}: the log ran a deeper "
                                       "draft (give its --speculative-num-steps)",
                                       *d.accept_len, depth + 1),
                           fmt::format("{}:{}", t.accept_from, d.line));
      return AcceptSampler::empirical(log.accept_lens(), depth, t.seed);
    }
    const double a = r.accept_rate >= 0 ? r.accept_rate : chain_accept_rate(r.accept_len, depth);
    return AcceptSampler::chain(a, depth, t.seed);
  };
  std::vector<CycleSample> first;
  const AllReduceChoice* drawn = nullptr;
  for (const auto& c : r.results) {
    if (!c.refused.empty()) continue;
    AcceptSampler sampler = make_sampler();  // same draws for every backend: a fair comparison
    if (o.accept_source.empty())
      o.accept_source = s.run.speculative() ? sampler.describe() : "no speculation: one token per request per step";
    auto samples = simulate_cycles(s, r, c.backend, sampler, n);
    CycleStats st = cycle_stats(samples, s.run.batch_size);
    st.seed = t.seed;
    o.stats.emplace_back(c.backend.label(), st);
    if (!drawn) drawn = &c.backend, first = std::move(samples);
  }
  if (!files || !drawn) return o;
  TraceInput in;
  in.scenario = &s;
  in.result = &r;
  in.backend = *drawn;
  in.cycles = std::move(first);
  in.ranks = std::min(s.run.tp_size, kMaxTraceRanks);
  if (s.run.tp_size > kMaxTraceRanks)
    in.notes.push_back(
        fmt::format("ranks capped at {} of {}: every rank runs the same timeline", kMaxTraceRanks, s.run.tp_size));
  in.notes.push_back("accept lengths: " + o.accept_source);
  in.notes.push_back(
      "per cycle only the emitted tokens and the KV length they add change: draft/verify/extend token counts are "
      "padded "
      "to the draft-token count as in SGLang's CUDA graphs");
  const long long slices = trace_slice_count(in);
  if (slices > kMaxTraceSlices)
    throw InputError(
        fmt::format("the files would hold {} op slices (> {}): ask for fewer --cycles", slices, kMaxTraceSlices),
        "--cycles");
  write_outputs_atomic({{OutputFile{t.trace, "--trace"}, t.trace.empty() ? "" : chrome_trace_json(in)},
                        {OutputFile{t.csv, "--csv"}, t.csv.empty() ? "" : trace_csv(in)}});
  o.notes.push_back(fmt::format("trace/CSV: {} cycles x {} ranks with all-reduce {} ({} op slices)", in.cycles.size(),
                                in.ranks, drawn->label(), slices));
  return o;
}

void add_cycles_json(nlohmann::json& report, const TraceOutcome& o) {
  if (!o.ran) return;
  for (auto& sc : report["scenarios"]) {
    const std::string label = sc.value("label", "");
    for (const auto& [l, st] : o.stats)
      if (l == label)
        sc["cycles"] = {{"n", st.n},
                        {"seed", st.seed},
                        {"accept_source", o.accept_source},
                        {"mean_accept_len", st.mean_accept_len},
                        {"mean_us", st.mean_us},
                        {"p50_us", st.p50_us},
                        {"p90_us", st.p90_us},
                        {"p99_us", st.p99_us},
                        {"tok_per_s", st.tok_s},
                        {"tok_per_s_p50", st.tok_s_p50},
                        {"tok_per_s_p90", st.tok_s_p90},
                        {"tok_per_s_p99", st.tok_s_p99}};
  }
  report["cycles_notes"] = o.notes;
}

std::string cycles_text(const TraceOutcome& o) {
  if (!o.ran) return "";
  std::string out = fmt::format("\n{} simulated cycles per backend; accept lengths: {}\n",
                                o.stats.empty() ? 0 : o.stats.front().second.n, o.accept_source);
  out += fmt::format("{:<16} {:>10} {:>10} {:>10} {:>10} {:>11} {:>9} {:>9} {:>9}\n", "all-reduce", "accept", "p50_us",
                     "p90_us", "p99_us", "tok/s", "tok/s_p50", "p90", "p99");
  for (const auto& [label, st] : o.stats)
    out += fmt::format("{:<16} {:>10.3f} {:>10.0f} {:>10.0f} {:>10.0f} {:>11.1f} {:>9.1f} {:>9.1f} {:>9.1f}\n", label,
                       st.mean_accept_len, st.p50_us, st.p90_us, st.p99_us, st.tok_s, st.tok_s_p50, st.tok_s_p90,
                       st.tok_s_p99);
  for (const auto& n : o.notes) out += "note: " + n + "\n";
  return out;
}

}  // namespace specsim::cli
