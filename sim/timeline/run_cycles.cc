#include "timeline/run_cycles.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "accept/accept_len.h"
#include "scenario/measurement_files.h"
#include "timeline/trace_writer.h"
#include "util/error.h"
#include "util/output_files.h"

namespace specsim {

namespace {
constexpr int kMaxTraceRanks = 8;       // all ranks are identical in the analytic engine
constexpr double kLargeTraceMb = 50.0;  // from this size the size is said before writing
}  // namespace

CycleOutcome run_cycles(const CycleRequest& t, const Scenario& s, const ScenarioResult& r) {
  CycleOutcome o;
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
    if (t.accept_log) {
      // A logged length above steps + 1 comes from a deeper draft than this scenario's: refused,
      // not clamped into a distribution it cannot produce.
      check_accept_depth(*t.accept_log, t.accept_file, depth);
      return AcceptSampler::empirical(t.accept_log->accept_lens(), depth, t.seed);
    }
    // A draft whose acceptance falls with depth reports its depth-1 rate: the sampler draws a
    // chain at one rate, so it takes the one with the same mean accept len.
    const bool one_rate = r.accept_rate >= 0 && s.run.accept_decay == 1.0;
    const double a = one_rate ? r.accept_rate : chain_accept_rate(r.accept_len, depth);
    return AcceptSampler::chain(a, depth, t.seed);
  };
  TraceInput in;
  const std::vector<int> traced =
      files ? traced_cycle_indices(n,
                                   trace_slices_per_cycle(s) * std::min(s.run.tp_size, kMaxTraceRanks) *
                                       std::max<long long>(1, static_cast<long long>(r.results.size())),
                                   kTraceSliceBudget, t.trace_cycles)
            : std::vector<int>{};
  for (const auto& c : r.results) {
    if (!c.refused.empty()) continue;
    AcceptSampler sampler = make_sampler();  // same draws for every backend: a fair comparison
    if (o.accept_source.empty())
      o.accept_source = s.run.speculative() ? sampler.describe() : "no speculation: one token per request per step";
    auto samples = simulate_cycles(s, r, c.backend, sampler, n);
    CycleStats st = cycle_stats(samples, s.run.batch_size);
    st.seed = t.seed;
    o.stats.emplace_back(c.backend.label(), st);
    if (files) {
      TracedBackend tb{c.backend, {}};
      for (int i : traced) tb.cycles.push_back(samples[static_cast<std::size_t>(i)]);
      in.backends.push_back(std::move(tb));
    }
  }
  if (!files || in.backends.empty()) return o;
  in.scenario = &s;
  in.result = &r;
  in.runtime = s.runtime ? s.runtime->name : "sglang";
  in.ranks = std::min(s.run.tp_size, kMaxTraceRanks);
  if (s.run.tp_size > kMaxTraceRanks)
    in.notes.push_back(
        fmt::format("ranks capped at {} of {}: every rank runs the same timeline", kMaxTraceRanks, s.run.tp_size));
  in.notes.push_back("accept lengths: " + o.accept_source);
  in.notes.push_back(
      "per cycle only the emitted tokens and the KV length they add change: draft/verify/extend token counts are "
      "padded "
      "to the draft-token count as in SGLang's CUDA graphs");
  if (!s.runtime) in.notes.push_back("kernel names: sglang's (no --runtime given)");
  const int drawn = static_cast<int>(traced.size());
  if (drawn < n)
    o.notes.push_back(
        fmt::format("{} of the {} simulated cycles drawn, evenly spaced from the first to the last; the "
                    "statistics use all {}",
                    drawn, n, n));
  if (drawn < n) in.notes.push_back(o.notes.back());  // in the trace too
  const long long slices = trace_slice_count(in);
  if (slices > kMaxTraceSlices)
    throw InputError(
        fmt::format("the files would hold {} op slices (> {}): ask for fewer --trace-cycles", slices, kMaxTraceSlices),
        "--trace-cycles");
  const std::string trace_text = t.trace.empty() ? "" : chrome_trace_json(in),
                    csv_text = t.csv.empty() ? "" : trace_csv(in);
  const double mb = static_cast<double>(trace_text.size() + csv_text.size()) / 1e6;
  // Said before the write: a large file should not surprise the user's disk or Perfetto.
  if (mb >= kLargeTraceMb) fmt::print(stderr, "note: writing {:.0f} MB of trace/CSV\n", mb);
  write_outputs_atomic({{OutputFile{t.trace, "--trace"}, trace_text}, {OutputFile{t.csv, "--csv"}, csv_text}});
  std::string labels;
  for (const auto& tb : in.backends) labels += (labels.empty() ? "" : ", ") + tb.backend.label();
  o.notes.push_back(
      fmt::format("trace/CSV: {} of {} cycles x {} ranks x all-reduce {} ({} op slices, {:.1f} MB; "
                  "kernel names: {})",
                  drawn, n, in.ranks, labels, slices, mb, in.runtime));
  return o;
}

void add_cycles_json(nlohmann::json& report, const CycleOutcome& o) {
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

std::string cycles_text(const CycleOutcome& o) {
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

}  // namespace specsim
