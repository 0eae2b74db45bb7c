// `specsim ingest`: read a measurement file and print what specsim takes from it. One mode per
// kind of file: --torch-trace, --sglang-log, --nccl-tests, --replay-report.
#include <fmt/format.h>

#include <iostream>

#include "cli_common.h"
#include "commands.h"
#include "ingest/nccl_tests.h"
#include "ingest/sglang_log.h"
#include "ingest/text_lines.h"
#include "ingest/torch_trace.h"
#include "timeline/replay_trace.h"
#include "util/error.h"
#include "util/json_io.h"
#include "util/output_files.h"

namespace specsim::cli {

namespace {
using nlohmann::json;

int torch_mode(const std::string& file, int steps_flag, bool as_json) {
  const auto s = ingest::parse_torch_trace(ingest::read_text(file, "--torch-trace"), file);
  const int steps = s.steps > 0 ? s.steps : std::max(1, steps_flag);
  const std::string step_source = s.steps > 0      ? "ProfilerStep# markers"
                                  : steps_flag > 0 ? "--steps"
                                                   : "no step markers and no --steps: totals";
  double total = 0;
  for (double v : s.us) total += v;
  if (as_json) {
    json kinds = json::object();
    for (int k = 0; k < ingest::kNumKernelKinds; ++k)
      kinds[std::string(ingest::kernel_kind_name(static_cast<ingest::KernelKind>(k)))] = {
          {"count", s.count[k]}, {"us", s.us[k]}, {"us_per_step", s.us[k] / steps}};
    std::cout << json{{"file", file},
                      {"steps", steps},
                      {"steps_source", step_source},
                      {"kinds", kinds},
                      {"events", s.events},
                      {"kernels", s.kernels},
                      {"memcpy_memset", s.memcpy_memset},
                      {"skipped_known", s.skipped_known},
                      {"unknown", s.unknown},
                      {"mean_nccl_allreduce_us", s.mean_nccl_allreduce_us()}}
                     .dump(2)
              << "\n";
    return kExitOk;
  }
  fmt::print(
      "torch trace {}: {} events, {} kernels, {} memcpy/memset; {} other known events and {} unknown events skipped\n",
      file, s.events, s.kernels, s.memcpy_memset, s.skipped_known, s.unknown);
  fmt::print("steps: {} ({})\n", steps, step_source);
  fmt::print("  {:<18} {:>8} {:>12} {:>12} {:>10} {:>7}\n", "kind", "count", "total_us", "us/step", "mean_us", "share");
  for (int k = 0; k < ingest::kNumKernelKinds; ++k)
    fmt::print("  {:<18} {:>8} {:>12.1f} {:>12.1f} {:>10.2f} {:>6.1f}%\n",
               ingest::kernel_kind_name(static_cast<ingest::KernelKind>(k)), s.count[k], s.us[k], s.us[k] / steps,
               s.count[k] ? s.us[k] / static_cast<double>(s.count[k]) : 0.0, total > 0 ? 100 * s.us[k] / total : 0.0);
  if (s.mean_nccl_allreduce_us() > 0)
    fmt::print(
        "mean NCCL all-reduce {:.2f} us (what `specsim run --anchor-trace {}` uses as --measured-allreduce-us)\n",
        s.mean_nccl_allreduce_us(), file);
  return kExitOk;
}

int sglang_mode(const std::string& file, bool as_json) {
  const auto log = ingest::parse_sglang_log(ingest::read_text(file, "--sglang-log"), file);
  const auto lens = log.accept_lens();
  double mean = 0, lo = 0, hi = 0;
  if (!lens.empty()) {
    lo = hi = lens.front();
    for (double v : lens) mean += v, lo = std::min(lo, v), hi = std::max(hi, v);
    mean /= static_cast<double>(lens.size());
  }
  const auto base = log.baseline_tok_s();
  if (as_json) {
    std::cout << json{{"file", file},
                      {"lines", log.lines},
                      {"decode_lines", log.decode.size()},
                      {"prefill_lines", log.prefill_lines},
                      {"unknown_lines", log.unknown_lines},
                      {"speculative", log.speculative()},
                      {"accept_len_lines", lens.size()},
                      {"accept_len_mean", lens.empty() ? json(nullptr) : json(mean)},
                      {"baseline_tok_s", base ? json(*base) : json(nullptr)},
                      {"baseline_idle_gap_lines", log.baseline_idle_lines()}}
                     .dump(2)
              << "\n";
    return kExitOk;
  }
  fmt::print("SGLang log {}: {} lines, {} decode lines, {} prefill lines, {} unknown lines skipped\n", file, log.lines,
             log.decode.size(), log.prefill_lines, log.unknown_lines);
  if (!lens.empty())
    fmt::print("speculation: {} lines with accept len, mean {:.3f} (min {:.2f}, max {:.2f}) -> `--accept-from {}`\n",
               lens.size(), mean, lo, hi, file);
  if (base)
    fmt::print(
        "no speculation at 1 running request: median gen throughput {:.1f} tok/s over {} lines{} -> `--baseline-from "
        "{}`\n",
        *base, log.baseline_lines(),
        log.baseline_idle_lines() ? fmt::format(" ({} after idle gaps left out)", log.baseline_idle_lines()) : "",
        file);
  return kExitOk;
}

int nccl_mode(const std::string& file, bool as_json) {
  const auto log = ingest::parse_nccl_tests(ingest::read_text(file, "--nccl-tests"), file);
  if (as_json) {
    json tables = json::array();
    for (const auto& t : log.tables) {
      json rows = json::array();
      for (const auto& r : t.rows) {
        json row = {{"line", r.line},   {"bytes", r.bytes},   {"type", r.type},
                    {"redop", r.redop}, {"oop_us", r.oop_us}, {"oop_busbw_gbps", r.oop_busbw_gbps}};
        if (r.has_in_place) row["ip_us"] = r.ip_us, row["ip_busbw_gbps"] = r.ip_busbw_gbps;
        rows.push_back(std::move(row));
      }
      tables.push_back({{"line", t.line},
                        {"collective", t.collective},
                        {"world", t.world()},
                        {"threads", t.threads},
                        {"gpus_per_thread", t.gpus_per_thread},
                        {"rank_lines", t.rank_lines},
                        {"graph", t.graph},
                        {"rows", std::move(rows)}});
    }
    std::cout << json{{"file", file},
                      {"lines", log.lines},
                      {"data_lines", log.data_lines},
                      {"comment_lines", log.comment_lines},
                      {"unknown_lines", log.unknown_lines},
                      {"tables", std::move(tables)}}
                     .dump(2, ' ', false, json::error_handler_t::replace)
              << "\n";
    return kExitOk;
  }
  fmt::print("nccl-tests log {}: {} tables, {} rows, {} comment lines, {} unknown lines skipped\n", file,
             log.tables.size(), log.data_lines, log.comment_lines, log.unknown_lines);
  for (const auto& t : log.tables) {
    fmt::print("table at line {}: {} world {} ({} threads x {} GPUs, {} rank lines){}\n", t.line,
               t.collective.empty() ? "(collective not named)" : t.collective, t.world(), t.threads, t.gpus_per_thread,
               t.rank_lines, t.graph ? ", CUDA graphs" : "");
    fmt::print("  {:>12} {:>10} {:>10} {:>10} {:>10}\n", "bytes", "oop_us", "oop_busbw", "ip_us", "ip_busbw");
    for (const auto& r : t.rows)
      fmt::print("  {:>12.0f} {:>10.2f} {:>10.2f} {:>10.2f} {:>10.2f}\n", r.bytes, r.oop_us, r.oop_busbw_gbps, r.ip_us,
                 r.ip_busbw_gbps);
  }
  return kExitOk;
}

// A saved replay report -> the analytic run's trace formats (measured beside predicted).
int replay_mode(const std::string& file, const std::string& trace_path, const std::string& csv_path, bool as_json) {
  const json report = read_json_file(file);
  const ReplayTrace t = replay_trace_from_report(report, file);
  write_replay_trace_files(report, file, trace_path, csv_path);
  if (as_json) {
    json phases = json::array();
    for (const auto& p : t.phases)
      phases.push_back({{"phase", p.name},
                        {"graph", p.graph},
                        {"calls", p.events.size()},
                        {"measured_us", p.measured_us},
                        {"events_us", p.event_sum_us},
                        {"scale", p.scale},
                        {"predicted_us", p.predicted_us}});
    json out = {{"file", file}, {"model", t.model}, {"device", t.device}, {"op_calls", t.events()}, {"phases", phases}};
    if (!trace_path.empty()) out["wrote_trace"] = trace_path;
    if (!csv_path.empty()) out["wrote_csv"] = csv_path;
    std::cout << out.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
    return kExitOk;
  }
  fmt::print("replay report {}: {} on {}, {} op calls\n", file, t.model, t.device, t.events());
  fmt::print("  {:<16} {:>5} {:>6} {:>12} {:>12} {:>8} {:>12}\n", "phase", "mode", "calls", "measured_us", "events_us",
             "scale", "predicted_us");
  for (const auto& p : t.phases)
    fmt::print("  {:<16} {:>5} {:>6} {:>12.1f} {:>12.1f} {:>8.4f} {:>12.1f}\n", p.name, p.graph ? "graph" : "eager",
               p.events.size(), p.measured_us, p.event_sum_us, p.scale, p.predicted_us);
  if (!trace_path.empty()) fmt::print("wrote {}\n", trace_path);
  if (!csv_path.empty()) fmt::print("wrote {}\n", csv_path);
  return kExitOk;
}

}  // namespace

int cmd_ingest(int argc, char** argv) {
  CLI::App app{"specsim ingest: read a measurement file and print what specsim takes from it"};
  app.name("specsim ingest");
  std::string torch, sglang, nccl, replay, trace_path, csv_path;
  int steps = 0;
  bool as_json = false;
  app.add_option("--torch-trace", torch,
                 "torch profiler Chrome trace (SGLang --profile): kernel time per kind per step");
  app.add_option("--sglang-log", sglang, "SGLang server log: accept len and throughput");
  app.add_option("--nccl-tests", nccl, "nccl-tests output: the parsed tables");
  app.add_option("--replay-report", replay,
                 "specsim replay -o report: per-op measured vs predicted (with --trace/--csv)");
  app.add_option("--trace", trace_path, "with --replay-report: write a Chrome trace (measured beside predicted)");
  app.add_option("--csv", csv_path, "with --replay-report: write one CSV row per replayed op call");
  app.add_option("--steps", steps, "decode steps or cycles in the torch trace when it has no ProfilerStep markers");
  app.add_flag("--json", as_json, "print what was read as one JSON object (every kind of file)");
  return guarded(app, argc, argv, [&] {
    const int modes = !torch.empty() + !sglang.empty() + !nccl.empty() + !replay.empty();
    if (modes != 1)
      throw InputError("give exactly one of --torch-trace, --sglang-log, --nccl-tests, --replay-report",
                       "specsim ingest");
    if (replay.empty() && !(trace_path.empty() && csv_path.empty()))
      throw InputError("only with --replay-report", trace_path.empty() ? "--csv" : "--trace");
    check_outputs({{trace_path, "--trace"}, {csv_path, "--csv"}}, {replay});
    if (!replay.empty()) return replay_mode(replay, trace_path, csv_path, as_json);
    if (steps < 0) throw InputError("must be positive", "--steps");
    if (!torch.empty()) return torch_mode(torch, steps, as_json);
    if (!sglang.empty()) return sglang_mode(sglang, as_json);
    return nccl_mode(nccl, as_json);
  });
}

}  // namespace specsim::cli
