#include "ingest/sglang_log_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "util/error.h"

namespace specsim::ingest {

using ingest::median_of;

LogSummary summarize_log(const SglangLog& log, const std::string& file, std::optional<int> batch_size,
                         const std::string& batch_where) {
  LogSummary s;
  s.file = file;
  s.launches = log.server_args.size();
  s.cut_last_line = log.cut_last_line;
  s.stack = log.stack, s.engines = log.engines, s.vllm_version = log.vllm_version;
  // The launch with the most decode lines (a log may hold several server starts).
  std::map<std::ptrdiff_t, std::size_t> per_launch;
  for (const auto& d : log.decode)
    if (d.gen_tok_s > 0) ++per_launch[d.server_args_index ? static_cast<std::ptrdiff_t>(*d.server_args_index) : -1];
  if (per_launch.empty()) throw InputError("no decode line with a positive gen throughput: nothing to diagnose", file);
  std::ptrdiff_t launch = per_launch.begin()->first;
  for (const auto& [k, n] : per_launch)
    if (n > per_launch[launch]) launch = k;
  if (launch >= 0) s.launch = log.server_args[static_cast<std::size_t>(launch)];
  auto in_launch = [&](const DecodeLine& d) {
    const std::ptrdiff_t k = d.server_args_index ? static_cast<std::ptrdiff_t>(*d.server_args_index) : -1;
    return k == launch && d.gen_tok_s > 0;
  };
  std::map<int, std::size_t> steady_per_batch;  // lines whose interval decoded at one batch
  for (const auto& d : log.decode)
    if (in_launch(d))
      ++s.lines_per_batch[d.running_req], ++s.decode_lines, steady_per_batch[d.running_req] += d.unsteady.empty();
  if (batch_size) {
    if (!s.lines_per_batch.count(*batch_size)) {
      std::string have;
      for (const auto& [b, n] : s.lines_per_batch)
        have += fmt::format("{}{} ({} lines)", have.empty() ? "" : ", ", b, n);
      throw InputError(fmt::format("no decode line of {} at #running-req {}; the log has {}", file, *batch_size, have),
                       batch_where);
    }
    s.batch_size = *batch_size;
  } else {
    std::size_t best = 0;
    for (const auto& [b, n] : steady_per_batch)
      if (n > best) best = n, s.batch_size = b;  // ties: the smaller batch (the map is ordered)
    if (best == 0)
      throw InputError(
          fmt::format("every stats line follows a change of the batch ({} lines): no interval decoded at one "
                      "batch size; log a run at a steady batch for longer than two logging intervals",
                      s.decode_lines),
          file);
  }
  if (s.batch_size < 1) throw InputError("the decode lines used report #running-req 0: no request was decoding", file);

  std::vector<const ingest::DecodeLine*> at_batch, steady;
  for (const auto& d : log.decode)
    if (in_launch(d) && d.running_req == s.batch_size) {
      at_batch.push_back(&d);
      if (d.unsteady.empty())
        steady.push_back(&d);
      else
        s.unsteady_lines.push_back({d.line, d.gen_tok_s, d.unsteady});
    }
  if (steady.empty()) {
    std::string have;
    for (const auto& [b, n] : steady_per_batch)
      if (n) have += fmt::format("{}{} ({} lines)", have.empty() ? "" : ", ", b, n);
    throw InputError(fmt::format("every stats line at #running-req {} follows a change of the batch: no interval "
                                 "decoded at that batch size; steady lines are at {}",
                                 s.batch_size, have),
                     batch_where);
  }
  // The throughput figures leave out lines that average over idle time or over a changing batch;
  // the accept len and the token count of every line count (they do not depend on time).
  const ingest::ThroughputLines split = ingest::split_idle_gaps(steady);
  s.idle_gap_lines = split.idle;
  std::vector<double> tps, ctx;
  for (const ingest::DecodeLine* d : split.kept) {
    s.line_numbers.push_back(d->line), tps.push_back(d->gen_tok_s);
    if (d->prompt_tok_s && *d->prompt_tok_s > 0)
      ++s.prefill_interval_lines, s.prompt_tok_s_max = std::max(s.prompt_tok_s_max, *d->prompt_tok_s);
  }
  double accept_sum = 0;
  std::size_t accept_n = 0;
  std::map<std::string, std::size_t> ctx_keys;
  for (const ingest::DecodeLine* d : at_batch) {
    if (d->accept_len)
      accept_sum += *d->accept_len, ++accept_n, s.accept_len_max = std::max(s.accept_len_max, *d->accept_len);
    if (d->cuda_graph) ++(*d->cuda_graph ? s.graph_lines : s.eager_lines);
    if (d->tokens > 0) ctx.push_back(static_cast<double>(d->tokens) / d->running_req), ++ctx_keys[d->tokens_key];
  }
  s.tok_s = median_of(tps);
  double mean = 0, var = 0;
  for (double v : tps) mean += v;
  mean /= static_cast<double>(tps.size());
  for (double v : tps) var += (v - mean) * (v - mean);
  s.tok_s_cv = tps.size() > 1 ? std::sqrt(var / static_cast<double>(tps.size() - 1)) / mean : 0;
  s.tok_s_min = *std::min_element(tps.begin(), tps.end());
  s.tok_s_max = *std::max_element(tps.begin(), tps.end());
  if (accept_n) s.accept_len = accept_sum / static_cast<double>(accept_n);
  s.speculative = accept_n > 0 || log.spec_lines > 0;
  if (!ctx.empty()) {
    s.context_len = std::max(1LL, std::llround(median_of(ctx)));
    std::size_t most = 0;
    for (const auto& [key, n] : ctx_keys)
      if (n > most) most = n, s.context_from = key;
  }
  return s;
}

}  // namespace specsim::ingest
