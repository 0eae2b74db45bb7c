#include "report/ingest_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "ingest/nccl_tests.h"
#include "ingest/server_log.h"
#include "ingest/text_lines.h"
#include "ingest/torch_trace.h"
#include "util/error.h"

namespace specsim {

using nlohmann::json;

std::string torch_trace_summary(const std::string& file, int steps_flag, bool as_json) {
  const auto s = ingest::parse_torch_trace(ingest::read_text(file, "--torch-trace"), file);
  if (s.steps > 0 && steps_flag > 0 && steps_flag != s.steps)
    throw InputError(
        fmt::format("the trace marks its own {} steps (ProfilerStep#), not {}: drop --steps", s.steps, steps_flag),
        "--steps");
  const int steps = s.steps > 0 ? s.steps : std::max(1, steps_flag);
  const std::string step_source = s.steps > 0      ? "ProfilerStep# markers"
                                  : steps_flag > 0 ? "--steps"
                                                   : "no step markers and no --steps: totals";
  double total = 0;
  for (double v : s.us) total += v;
  // Kernel names by time, most first: the names a predicted trace (run --trace) matches in Perfetto.
  std::vector<std::pair<std::string, ingest::KernelNameStat>> names(s.by_name.begin(), s.by_name.end());
  std::stable_sort(names.begin(), names.end(), [](const auto& a, const auto& b) { return a.second.us > b.second.us; });
  if (as_json) {
    json by_name = json::array();
    for (const auto& [n, st] : names)
      by_name.push_back(
          {{"name", n}, {"kind", std::string(ingest::kernel_kind_name(st.kind))}, {"count", st.count}, {"us", st.us}});
    json kinds = json::object();
    for (int k = 0; k < ingest::kNumKernelKinds; ++k)
      kinds[std::string(ingest::kernel_kind_name(static_cast<ingest::KernelKind>(k)))] = {
          {"count", s.count[k]}, {"us", s.us[k]}, {"us_per_step", s.us[k] / steps}};
    return json{{"file", file},
                {"steps", steps},
                {"steps_source", step_source},
                {"kinds", kinds},
                {"events", s.events},
                {"kernels", s.kernels},
                {"memcpy_memset", s.memcpy_memset},
                {"skipped_known", s.skipped_known},
                {"unknown", s.unknown},
                {"mean_nccl_allreduce_us", s.mean_nccl_allreduce_us()},
                {"kernel_names", by_name}}
               .dump(2, ' ', false, json::error_handler_t::replace) +
           "\n";
  }
  std::string out;
  out += fmt::format(
      "torch trace {}: {} events, {} kernels, {} memcpy/memset; {} other known events and {} unknown events skipped\n",
      file, s.events, s.kernels, s.memcpy_memset, s.skipped_known, s.unknown);
  out += fmt::format("steps: {} ({})\n", steps, step_source);
  out += fmt::format("  {:<18} {:>8} {:>12} {:>12} {:>10} {:>7}\n", "kind", "count", "total_us", "us/step", "mean_us",
                     "share");
  for (int k = 0; k < ingest::kNumKernelKinds; ++k)
    out += fmt::format("  {:<18} {:>8} {:>12.1f} {:>12.1f} {:>10.2f} {:>6.1f}%\n",
                       ingest::kernel_kind_name(static_cast<ingest::KernelKind>(k)), s.count[k], s.us[k],
                       s.us[k] / steps, s.count[k] ? s.us[k] / static_cast<double>(s.count[k]) : 0.0,
                       total > 0 ? 100 * s.us[k] / total : 0.0);
  constexpr std::size_t kShownNames = 10;
  out += fmt::format("kernels by time ({} of {} names; `run --trace` names its op slices the same way):\n",
                     std::min(kShownNames, names.size()), names.size());
  for (std::size_t i = 0; i < names.size() && i < kShownNames; ++i)
    out += fmt::format("  {:>10.1f} us {:>6}x  {:<16} {}\n", names[i].second.us, names[i].second.count,
                       ingest::kernel_kind_name(names[i].second.kind), names[i].first);
  if (s.mean_nccl_allreduce_us() > 0)
    out += fmt::format(
        "mean NCCL all-reduce {:.2f} us (what `specsim run --anchor-trace {}` uses as --measured-allreduce-us)\n",
        s.mean_nccl_allreduce_us(), file);
  return out;
}

std::string sglang_log_summary(const std::string& file, bool as_json) {
  const auto log = ingest::parse_server_log(ingest::read_text(file, "--sglang-log"), file);
  const auto lens = log.accept_lens();
  double mean = 0, lo = 0, hi = 0;
  if (!lens.empty()) {
    lo = hi = lens.front();
    for (double v : lens) mean += v, lo = std::min(lo, v), hi = std::max(hi, v);
    mean /= static_cast<double>(lens.size());
  }
  const auto base = log.baseline_tok_s();
  const auto batches = log.by_batch();
  if (as_json) {
    json by_batch = json::array();
    for (const auto& b : batches)
      by_batch.push_back({{"running_req", b.running_req},
                          {"lines", b.lines},
                          {"idle_gap_lines", b.idle_lines},
                          {"unsteady_lines", b.unsteady_lines},
                          {"median_tok_s", b.median_tok_s},
                          {"accept_len", b.accept_len ? json(*b.accept_len) : json(nullptr)}});
    return json{{"file", file},
                {"engine", log.stack},
                {"lines", log.lines},
                {"decode_lines", log.decode.size()},
                {"prefill_lines", log.prefill_lines},
                {"unknown_lines", log.unknown_lines},
                {"speculative", log.speculative()},
                {"accept_len_lines", lens.size()},
                {"accept_len_mean", lens.empty() ? json(nullptr) : json(mean)},
                {"baseline_tok_s", base ? json(*base) : json(nullptr)},
                {"baseline_idle_gap_lines", log.baseline_idle_lines()},
                {"by_batch", std::move(by_batch)},
                {"cut_last_line", log.cut_last_line ? json(*log.cut_last_line) : json(nullptr)}}
               .dump(2, ' ', false, json::error_handler_t::replace) +
           "\n";
  }
  std::string out;
  // "other": lines that are not decode, prefill or server_args lines (requests, warnings, ...)
  out += fmt::format("{} log {}: {} lines, {} decode lines, {} prefill lines, {} other lines skipped\n",
                     ingest::engine_name(log.stack), file, log.lines, log.decode.size(), log.prefill_lines,
                     log.unknown_lines);
  if (log.cut_last_line)
    out += fmt::format("its last line, {}, ends without a newline and is cut off: left out\n", *log.cut_last_line);
  // Every batch size the lines ran at, not only the one-request baseline below.
  for (const auto& b : batches)
    out += fmt::format(
        "#running-req {}: {}{}{}{}\n", b.running_req,
        b.lines ? fmt::format("{} lines, median gen throughput {:.2f} tok/s", b.lines, b.median_tok_s)
                : std::string("no line that decoded at this batch for its whole interval"),
        b.accept_len ? fmt::format(", mean accept len {:.3f}", *b.accept_len) : "",
        b.idle_lines ? fmt::format(" ({} after idle gaps left out)", b.idle_lines) : "",
        b.unsteady_lines ? fmt::format(" ({} whose batch changed in the interval left out)", b.unsteady_lines) : "");
  if (!lens.empty())
    out += fmt::format(
        "speculation: {} lines with accept len, mean {:.3f} (min {:.2f}, max {:.2f}) -> `--accept-from {}`\n",
        lens.size(), mean, lo, hi, file);
  if (base)
    out += fmt::format(
        "no speculation at 1 running request: median gen throughput {:.1f} tok/s over {} lines{} -> `--baseline-from "
        "{}`\n",
        *base, log.baseline_lines(),
        log.baseline_idle_lines() ? fmt::format(" ({} after idle gaps left out)", log.baseline_idle_lines()) : "",
        file);
  return out;
}

std::string nccl_tests_summary(const std::string& file, bool as_json) {
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
    return json{{"file", file},
                {"lines", log.lines},
                {"data_lines", log.data_lines},
                {"comment_lines", log.comment_lines},
                {"unknown_lines", log.unknown_lines},
                {"cut_lines", log.cut_lines},
                {"tables", std::move(tables)}}
               .dump(2, ' ', false, json::error_handler_t::replace) +
           "\n";
  }
  std::string out;
  out += fmt::format("nccl-tests log {}: {} tables, {} rows, {} comment lines, {} unknown lines skipped\n", file,
                     log.tables.size(), log.data_lines, log.comment_lines, log.unknown_lines);
  if (!log.cut_lines.empty())
    out += fmt::format("  rows cut mid-line, read without their in-place columns: line {}\n",
                       fmt::join(log.cut_lines, ", "));
  for (const auto& t : log.tables) {
    out += fmt::format("table at line {}: {} world {} ({} threads x {} GPUs, {} rank lines){}\n", t.line,
                       t.collective.empty() ? "(collective not named)" : t.collective, t.world(), t.threads,
                       t.gpus_per_thread, t.rank_lines, t.graph ? ", CUDA graphs" : "");
    out += fmt::format("  {:>12} {:>10} {:>10} {:>10} {:>10}\n", "bytes", "oop_us", "oop_busbw", "ip_us", "ip_busbw");
    for (const auto& r : t.rows)
      out += fmt::format("  {:>12.0f} {:>10.2f} {:>10.2f} {:>10.2f} {:>10.2f}\n", r.bytes, r.oop_us, r.oop_busbw_gbps,
                         r.ip_us, r.ip_busbw_gbps);
  }
  return out;
}

}  // namespace specsim
