#include "scenario/measurement_files.h"

#include <fmt/format.h>

#include "ingest/server_log.h"
#include "ingest/text_lines.h"
#include "ingest/torch_trace.h"
#include "scenario/command_values.h"
#include "scenario/runtime_profile.h"
#include "util/error.h"

namespace specsim {

namespace {

// --accept-from: the mean of the logged accept lens becomes the accept len.
void read_accept_log(const std::string& file, RunArgs& args, Measurements& m) {
  if (args.accept_len || args.accept_rate)
    throw InputError("give either --accept-from or --accept-len/--accept-rate", "--accept-from");
  m.accept_file = file;
  m.accept_log = ingest::parse_server_log(ingest::read_text(file, "--accept-from"), file);
  const auto lens = m.accept_log->accept_lens();
  if (lens.empty())
    throw InputError(fmt::format("the log has no {} (speculation was off): use it with --baseline-from",
                                 m.accept_log->stack == "vllm" ? "SpecDecoding line" : "'accept len'"),
                     "--accept-from " + file);
  double sum = 0;
  for (double v : lens) sum += v;
  args.accept_len = sum / static_cast<double>(lens.size());
  args.accept_source = ingest::engine_name(m.accept_log->stack) + " log " + file;
  m.notes.push_back(
      fmt::format("accept len {:.3f} = mean of {} logged intervals in {} ({} other line{} skipped{})", *args.accept_len,
                  lens.size(), file, m.accept_log->unknown_lines, m.accept_log->unknown_lines == 1 ? "" : "s",
                  m.accept_log->cut_last_line
                      ? fmt::format("; its last line, {}, cut off without its newline", *m.accept_log->cut_last_line)
                      : std::string()));
}

// --baseline-from: the median gen throughput at the run's batch size (--batch-size, else 1) of
// running requests becomes the measured baseline (SGLang's figure is the whole batch's, as the
// run's baseline tok/s is).
void read_baseline(const std::string& file, RunArgs& args, Measurements& m) {
  if (args.measured_baseline_tok_s)
    throw InputError("give either --baseline-from or --measured-baseline-tok-s", "--baseline-from");
  const int batch = args.batch_size.value_or(1);
  m.baseline = ingest::read_baseline_log(file, batch);
  const double tps = m.baseline->lines.tok_s;
  args.measured_baseline_tok_s = tps;
  args.measured_baseline_source = "--baseline-from " + file;
  m.notes.push_back(fmt::format(
      "measured baseline {:.1f} tok/s = median gen throughput of {} lines at {} running "
      "request{} in {}{}",
      tps, m.baseline->lines.line_numbers.size(), batch, batch == 1 ? "" : "s", file,
      m.baseline->lines.cut_last_line
          ? fmt::format(" (its last line, {}, cut off without its newline: left out)", *m.baseline->lines.cut_last_line)
          : std::string()));
}

// --anchor-trace: the mean NCCL all-reduce kernel becomes the measured all-reduce time.
void read_anchor_trace(const std::string& file, RunArgs& args, Measurements& m) {
  if (args.measured_allreduce_us)
    throw InputError("give either --anchor-trace or --measured-allreduce-us", "--anchor-trace");
  const auto tr = ingest::parse_torch_trace(ingest::read_text(file, "--anchor-trace"), file);
  const double us = tr.mean_nccl_allreduce_us();
  if (us <= 0) throw InputError("the trace holds no NCCL all-reduce kernel", "--anchor-trace " + file);
  args.measured_allreduce_us = us;
  args.measured_allreduce_source = "--anchor-trace " + file;
  m.notes.push_back(
      fmt::format("measured NCCL all-reduce {:.1f} us = mean of {} NCCL all-reduce kernels in {} (all "
                  "phases)",
                  us, tr.count[static_cast<int>(ingest::KernelKind::NcclAllReduce)], file));
}

}  // namespace

Measurements read_measurement_files(const MeasurementFiles& f, RunArgs& args) {
  Measurements m;
  if (!f.accept_from.empty()) read_accept_log(f.accept_from, args, m);
  if (!f.baseline_from.empty()) read_baseline(f.baseline_from, args, m);
  if (!f.anchor_trace.empty()) read_anchor_trace(f.anchor_trace, args, m);
  return m;
}

std::string adopt_accept_log_shape(const Measurements& m, RunArgs& args) {
  if (!m.accept_log || m.accept_log->server_args.empty()) return "";
  if (args.num_steps || args.topk || args.num_draft_tokens) return "";
  const ingest::ServerArgs& a = m.accept_log->server_args.back();
  if (!a.speculative() || !a.speculative_num_steps || !a.speculative_eagle_topk || !a.speculative_num_draft_tokens)
    return "";
  args.num_steps = *a.speculative_num_steps, args.topk = *a.speculative_eagle_topk;
  args.num_draft_tokens = *a.speculative_num_draft_tokens;
  return fmt::format(
      "--accept-from {}: the run takes the draft shape its accept len was measured at, steps {}, topk {}, {} draft "
      "tokens (its {}, line {}; give --speculative-num-steps, --speculative-eagle-topk and "
      "--speculative-num-draft-tokens to run others)",
      m.accept_file, *args.num_steps, *args.topk, *args.num_draft_tokens, ingest::launch_line_name(a.stack), a.line);
}

std::string adopt_baseline_log_context(const Measurements& m, RunArgs& args) {
  if (!m.baseline || args.context_len || !m.baseline->lines.context_len) return "";
  args.context_len = *m.baseline->lines.context_len;
  return fmt::format(
      "--baseline-from {}: the run takes the context its lines decoded at, {} tokens a request (median {} / "
      "#running-req; give --context-len to run another)",
      m.baseline->file, *args.context_len, m.baseline->lines.context_from);
}

void check_accept_depth(const ingest::SglangLog& log, const std::string& file, int steps) {
  const int most = steps + 1;
  for (const auto& d : log.decode)
    if (d.accept_len && *d.accept_len > most)
      throw InputError(fmt::format("accept len {:g} above --speculative-num-steps + 1 = {}: the log ran a deeper "
                                   "draft (give its --speculative-num-steps)",
                                   *d.accept_len, most),
                       fmt::format("{}:{}", file, d.line));
}

std::vector<std::string> Measurements::mismatches(const Scenario& s) const {
  std::vector<std::string> out;
  if (!accept_log) return out;
  if (accept_log->server_args.empty()) {
    if (s.run.speculative())
      out.push_back(fmt::format(
          "--accept-from {} has no {} to say the settings it ran: its accept len is used at this run's steps {}, "
          "topk {}, {} draft tokens (give the settings the log ran if they differ)",
          accept_file, ingest::launch_line_name(accept_log->stack), s.run.num_steps, s.run.topk,
          s.run.num_draft_tokens));
    return out;
  }
  const ingest::ServerArgs& a = accept_log->server_args.back();
  if (!a.model_path.empty() && !names_target(a.model_path, s.target.name))
    out.push_back(
        fmt::format("--accept-from {} ran {}, and this run's target is {}: a draft's accept length belongs to "
                    "its target and the text, so the logged mean holds here only if they accept alike",
                    accept_file, a.model_path, s.target.name));
  const RunSpec& r = s.run;
  const bool differs = (a.speculative_num_steps && *a.speculative_num_steps != r.num_steps) ||
                       (a.speculative_eagle_topk && *a.speculative_eagle_topk != r.topk) ||
                       (a.speculative_num_draft_tokens && *a.speculative_num_draft_tokens != r.num_draft_tokens);
  if (differs && r.speculative()) {
    auto v = [](const std::optional<int>& x) { return x ? std::to_string(*x) : std::string("?"); };
    out.push_back(fmt::format(
        "--accept-from {} ran steps {}, topk {}, {} draft tokens and this run has {}, {}, {}: its accept len is used "
        "as measured (give the log's settings to match it, or `specsim tune --accept-from` to carry it to others)",
        accept_file, v(a.speculative_num_steps), v(a.speculative_eagle_topk), v(a.speculative_num_draft_tokens),
        r.num_steps, r.topk, r.num_draft_tokens));
  }
  return out;
}

void Measurements::check(const Scenario& s) const {
  if (accept_log && s.run.speculative()) check_accept_depth(*accept_log, accept_file, s.run.num_steps);
  if (baseline) baseline->check_tp(s.run.tp_size, "the scenario");
  // the measured step anchors the runtime's own work: the log's server must be the one priced
  if (baseline) {
    const bool log_vllm = baseline->lines.stack == "vllm";
    const bool run_vllm = s.runtime && is_vllm_runtime(s.runtime->name);
    if (log_vllm != run_vllm)
      throw InputError(
          fmt::format("the baseline log is {}'s and this run prices {}: give {}",
                      ingest::engine_name(baseline->lines.stack), s.runtime ? s.runtime->name : "no runtime",
                      log_vllm ? "--runtime vllm (or paste the server's `vllm serve` command after --)"
                               : "--runtime sglang, or a plain log of the vLLM server"),
          "--baseline-from " + baseline->file);
  }
  // read at the flag's batch (else 1) before a scenario file could set another
  if (baseline && baseline->lines.batch_size != s.run.batch_size)
    throw InputError(fmt::format("the baseline log's lines are at #running-req {} and this run decodes a batch of {}: "
                                 "give --batch-size {}",
                                 baseline->lines.batch_size, s.run.batch_size, baseline->lines.batch_size),
                     "--baseline-from " + baseline->file);
}

}  // namespace specsim
