#include "diagnose/findings.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ingest/python_literal.h"
#include "ingest/server_log.h"
#include "ingest/text_lines.h"
#include "scenario/dtype.h"
#include "scenario/sglang_spec_worker.h"
#include "scenario/stack_flag_table.h"
#include "util/text.h"

namespace specsim::diagnose {

namespace {

// The plausible ranges (docs/diagnose.md#ranges). A per-forward overhead beyond them is more
// than scheduling and sampling: a wrong GPU, dtype or graph mode, or a cost the model lacks.
constexpr double kOverheadLowShare = 0.15;   // the model may overstate a step by this share
constexpr double kOverheadHighShare = 0.30;  // host work per step beyond this share of the step
constexpr double kOverheadHighUs = 500;      // ... or this many us, whichever is larger
constexpr double kAllReduceShare = 0.5;      // a measured all-reduce this far from the model
constexpr double kAllReduceUs = 10;          // ... and this many us
constexpr double kAcceptGapShare = 0.10;     // implied accept len vs logged
constexpr double kUnstableCv = 0.10;         // gen throughput across the lines used
constexpr double kMixedShare = 0.60;         // lines at the batch used, of all decode lines
constexpr double kLowAcceptLen = 1.05;       // the draft is hardly accepted

std::string g(double v) { return fmt::format("{:.4g}", v); }

// A Python literal as the source or a repr writes it, as JSON (ingest::read_python_literal);
// nullopt for an expression (`field(default_factory=...)`, `sys.maxsize`): text that is not one
// whole literal, or that becomes a JSON string without being quoted.
std::optional<nlohmann::json> python_value(const std::string& text) {
  const std::string t(ingest::trim(text));
  const auto lit = ingest::read_python_literal(t);
  if (!lit || lit->end != t.size()) return std::nullopt;
  // a word outside quotes other than None, True, False is an expression or a repr ((suppressed),
  // ServerArgs.x, Foo(...)), at any depth
  char quote = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const char ch = t[i];
    if (quote) {
      if (ch == '\\')
        ++i;
      else if (ch == quote)
        quote = 0;
    } else if (ch == '\'' || ch == '"') {
      quote = ch;
    } else if (std::isalpha(static_cast<unsigned char>(ch)) || ch == '_') {
      std::size_t j = i;
      while (j < t.size() && (std::isalnum(static_cast<unsigned char>(t[j])) || t[j] == '_')) ++j;
      const std::string word = t.substr(i, j - i);
      const bool exponent =
          (word[0] == 'e' || word[0] == 'E') && i > 0 && std::isdigit(static_cast<unsigned char>(t[i - 1]));
      if (word != "None" && word != "True" && word != "False" && !exponent) return std::nullopt;
      i = j - 1;
    }
  }
  return lit->value;
}

}  // namespace

LaterKeys later_release_keys(const ingest::ServerArgs& sa) {
  const StackFlagTable& table = stack_flag_table("sglang");
  LaterKeys out;
  for (const auto& [key, value] : sa.raw) {
    std::string flag = "--" + key;
    std::replace(flag.begin() + 2, flag.end(), '_', '-');
    const StackFlagTable::NewerFlag* later = table.newer_flag(flag);
    const StackFlagTable::OlderSpelling* spelling = later ? nullptr : table.older_spelling(flag);
    const std::string since = later ? later->since : spelling ? spelling->since : "";
    if (since.empty()) continue;
    if (out.release.empty() || !release_at_least(out.release, since)) out.release = since, out.by = key;
    if (!later) continue;
    std::string bare = value;  // 'full' -> full, for a class of its own
    if (bare.size() >= 2 && (bare.front() == '\'' || bare.front() == '"') && bare.back() == bare.front())
      bare = bare.substr(1, bare.size() - 2);
    const FlagValueClass* own = later->row.for_value(bare);
    if ((own ? own->cls : later->row.cls) != FlagClass::Refused) continue;
    // a value that is not a literal (an object's repr) is off a literal default
    const auto fallback = python_value(later->default_value);
    if (!fallback) continue;
    const auto given = python_value(value);
    if (!given || *given != *fallback) out.off_default.push_back(key + "=" + value);
  }
  return out;
}

std::string Finding::line() const {
  std::string s = message;
  if (range_lo && range_hi)
    s += fmt::format(" (expected {}..{}{}{})", g(*range_lo), g(*range_hi), unit.empty() ? "" : " ", unit);
  if (!advice.empty()) s += "; try: " + advice;
  return s;
}

std::vector<Finding> find_disagreements(const LogSummary& log, const Figures& f) {
  std::vector<Finding> out;
  auto add = [&](Finding x) { out.push_back(std::move(x)); };
  const ingest::ServerArgs* sa = log.launch ? &*log.launch : nullptr;
  const bool vllm = log.stack == "vllm";
  const std::string engine = ingest::engine_name(log.stack), launch_line = ingest::launch_line_name(log.stack);

  if (f.overhead_us) {
    const double lo = -kOverheadLowShare * f.model_step_us;
    const double hi = std::max(kOverheadHighUs, kOverheadHighShare * f.model_step_us);
    if (*f.overhead_us < lo || *f.overhead_us > hi) {
      std::string as_ar;
      if (f.allreduces_per_cycle > 0 && f.measured_cycle_us)
        as_ar = fmt::format(
            "; were the gap all-reduce time, each of the {} all-reduces per cycle would take {:.1f} us "
            "(modelled {:.1f} us)",
            f.allreduces_per_cycle,
            f.allreduce_model_us + (*f.measured_cycle_us - f.model_cycle_us) / f.allreduces_per_cycle,
            f.allreduce_model_us);
      add({"overhead-out-of-range", true,
           fmt::format("the log implies {:.0f} us per target forward beyond the model (modelled step {:.0f} us){}",
                       *f.overhead_us, f.model_step_us, as_ar),
           *f.overhead_us, "us", lo, hi,
           *f.overhead_us > 0 ? "check --hardware (the log does not say the GPU) and the dtype; measure the all-reduce "
                                "with --trace or "
                                "--nccl-tests; an eager verify (cuda graph: False) or a slow interconnect shows here"
                              : "the model is slower than the log: check --hardware and the dtype (fp8 weights?)"});
    }
  }
  if (!f.allreduce_other_gpu.empty())
    add({"allreduce-other-gpu", true,
         fmt::format("the nccl-tests log ran on {}, not this --hardware's GPU: its all-reduce times are another "
                     "GPU's and interconnect's ({})",
                     f.allreduce_other_gpu, f.allreduce_source),
         std::nullopt, "", std::nullopt, std::nullopt,
         "run all_reduce_perf on the serving machine, or give the --hardware it ran on"});
  if (f.allreduce_measured_us) {
    const double model = f.nccl_allreduce_model_us;
    const double extra = *f.allreduce_measured_us - model;
    const double band = std::max(kAllReduceUs, kAllReduceShare * model);
    // an upper bound above the model says nothing against it (allreduce-host-bound says why)
    if (std::abs(extra) > band && !(f.allreduce_upper_bound && extra > 0))
      add({"allreduce-out-of-range", true,
           fmt::format("the measured NCCL all-reduce takes {:.1f} us against a modelled {:.1f} us ({})",
                       *f.allreduce_measured_us, model, f.allreduce_source),
           *f.allreduce_measured_us, "us", model - band, model + band,
           extra > 0 ? "an eager NCCL call pays host synchronisation (CUDA graphs off?); check NCCL_P2P_LEVEL and the "
                       "topology; `specsim run --scenario FILE --allreduce custom` shows the custom all-reduce"
                     : "the model overstates this interconnect: check the topology in --hardware"});
  }
  if (f.disable_cuda_graph)
    add({"graphs-disabled", true,
         fmt::format("the launch disables CUDA graphs ({}): every phase runs eagerly",
                     vllm ? "enforce_eager" : "disable_cuda_graph=True"),
         std::nullopt, "", std::nullopt, std::nullopt,
         fmt::format("drop {}; `specsim run --scenario FILE --eager-phases none` shows the gain",
                     vllm ? "--enforce-eager" : "--disable-cuda-graph")});
  else if (log.eager_lines > 0) {
    const bool above = log.batch_size > f.cuda_graph_max_bs;
    add({"graphs-off", true,
         fmt::format(
             "{} of {} decode lines used ran without CUDA graphs (cuda graph: False){}", log.eager_lines,
             log.lines_at_batch(),
             above ? fmt::format(": #running-req {} is above cuda_graph_max_bs {}", log.batch_size, f.cuda_graph_max_bs)
                   : ""),
         static_cast<double>(log.eager_lines), "lines", std::nullopt, std::nullopt,
         above ? fmt::format("--cuda-graph-max-bs {} or more", log.batch_size)
               : "the scenario runs that phase eagerly (eager_phases); check SGLang's captured batch sizes "
                 "(--cuda-graph-bs) and the attention backend"});
  }
  if (f.speculative && log.accept_len_max > f.steps + 1 + 1e-9)
    add({"accept-len-above-steps", true,
         fmt::format("a logged accept len reaches {:.2f}, above steps + 1 = {}: the launch settings do not match these "
                     "lines",
                     log.accept_len_max, f.steps + 1),
         log.accept_len_max, "", 1.0, static_cast<double>(f.steps + 1),
         "check that the " + launch_line +
             " above the decode lines is the launch that logged them, or give "
             "--speculative-num-steps"});
  if (f.speculative && log.accept_len && *log.accept_len <= kLowAcceptLen)
    add({"accept-len-low", true,
         fmt::format("the logged accept len is {:.3f}: the draft is hardly ever accepted", *log.accept_len),
         *log.accept_len, "", kLowAcceptLen, static_cast<double>(f.steps + 1),
         "check that the draft belongs to the target and the algorithm matches it (EAGLE3 for an EAGLE-3 draft)"});
  if (f.implied_accept_len && log.accept_len && std::abs(*f.implied_accept_len / *log.accept_len - 1) > kAcceptGapShare)
    add({"accept-len-gap", true,
         fmt::format(
             "with the measured plain-decode overhead the tok/s implies accept len {:.3f}, the log says {:.3f}: "
             "the speculative phases cost {} than modelled",
             *f.implied_accept_len, *log.accept_len, *f.implied_accept_len < *log.accept_len ? "more" : "less"),
         *f.implied_accept_len, "", *log.accept_len * (1 - kAcceptGapShare), *log.accept_len * (1 + kAcceptGapShare),
         "measure the verify with --trace; draft phases running eagerly or a slow draft show here"});
  const double share = log.decode_lines ? double(log.lines_at_batch()) / double(log.decode_lines) : 1;
  if (log.lines_per_batch.size() > 1)
    add({"batch-mixed", share < kMixedShare,
         fmt::format("the decode lines span #running-req {}..{}: the {} of {} lines at #running-req {} are used, the "
                     "tok/s of the others is left out",
                     log.lines_per_batch.begin()->first, log.lines_per_batch.rbegin()->first, log.lines_at_batch(),
                     log.decode_lines, log.batch_size),
         share, "of the lines", kMixedShare, 1.0,
         "--batch-size N picks another #running-req; a benchmark at fixed concurrency gives one batch size"});
  if (log.tok_s_cv > kUnstableCv)
    add({"throughput-unstable", true,
         fmt::format("gen throughput varies {:.0f}% across the lines used ({:.1f}..{:.1f} tok/s)", 100 * log.tok_s_cv,
                     log.tok_s_min, log.tok_s_max),
         log.tok_s_cv, "cv", 0.0, kUnstableCv,
         "prefills between decode lines and a growing context lower some lines: use a longer steady run"});
  if (!log.idle_gap_lines.empty()) {
    const auto& first = log.idle_gap_lines.front();
    add({"idle-gap-lines", false,
         fmt::format("{} decode line{} left out of the gen throughput median and spread: {} divides a line's tokens "
                     "by the time since the previous decode line, idle time included (line {}: {}{})",
                     log.idle_gap_lines.size(), log.idle_gap_lines.size() > 1 ? "s" : "", engine, first.line, first.why,
                     log.idle_gap_lines.size() > 1 ? "; ..." : ""),
         static_cast<double>(log.idle_gap_lines.size()), "lines", std::nullopt, std::nullopt,
         "nothing to do: their accept len and token count still count; a longer steady run gives more lines"});
  }
  if (!log.unsteady_lines.empty()) {
    const auto& first = log.unsteady_lines.front();
    add({"unsteady-lines", false,
         fmt::format("{} stats line{} left out of the gen throughput median and spread: the interval did not decode at "
                     "one batch size (line {}: {}{})",
                     log.unsteady_lines.size(), log.unsteady_lines.size() > 1 ? "s" : "", first.line, first.why,
                     log.unsteady_lines.size() > 1 ? "; ..." : ""),
         static_cast<double>(log.unsteady_lines.size()), "lines", std::nullopt, std::nullopt,
         "nothing to do: their accept len still counts; a longer steady run gives more lines"});
  }
  if (log.prefill_interval_lines > 0)
    add({"prefill-in-intervals", log.prefill_interval_lines * 2 > log.line_numbers.size(),
         fmt::format("{} of the {} stats lines used also prefilled (prompt throughput up to {:.1f} tokens/s): their "
                     "generation throughput counts the prefill time, which the scenario prices as decoding",
                     log.prefill_interval_lines, log.line_numbers.size(), log.prompt_tok_s_max),
         static_cast<double>(log.prefill_interval_lines), "lines", std::nullopt, std::nullopt,
         "measure with long outputs, so that most intervals only decode"});
  if (log.engines > 1)
    add({"vllm-engines", false,
         fmt::format(
             "stats lines of {} vLLM engines (data parallel): the first one shown decoding is read, each decoding "
             "its own batch",
             log.engines),
         static_cast<double>(log.engines), "engines", std::nullopt, std::nullopt,
         "--hardware and the tp size are one engine's"});
  if (!log.context_len)
    add({"context-assumed", false,
         fmt::format("{}: the scenario assumes {} tokens of context per request",
                     vllm ? "the stats lines give no token count (their GPU KV cache usage needs the engine's start-up "
                            "line `GPU KV cache size: N tokens`, not in the log)"
                          : "the decode lines give no token count (#token, #gpu-token or #full token)",
                     f.context_len),
         static_cast<double>(f.context_len), "tokens", std::nullopt, std::nullopt,
         "set settings.context_len in the written scenario to the deployment's context"});
  else if (log.context_from != "#token")
    add({"context-from", false,
         vllm ? fmt::format("the context ({} tokens per request) is the GPU KV cache usage times the KV cache size the "
                            "engine logged at start, over the running requests: to the 0.1% the usage is printed with",
                            *log.context_len)
              : fmt::format("the context ({} tokens per request) is read from {}: the field newer SGLang logs instead "
                            "of #token",
                            *log.context_len, log.context_from),
         static_cast<double>(*log.context_len), "tokens", std::nullopt, std::nullopt, ""});
  if (!f.speculative)
    add({"speculation-off", false,
         fmt::format("speculation is off: the scenario is plain decoding at {:.1f} tok/s (bs {})", log.tok_s,
                     log.batch_size),
         std::nullopt, "", std::nullopt, std::nullopt,
         "`specsim run --scenario FILE --speculative-algorithm EAGLE3 --accept-len L` projects speculation on this "
         "deployment"});
  if (log.cut_last_line)
    add({"last-line-cut", false,
         fmt::format("the log's last line ({}) ends without a newline and is cut off: left out", *log.cut_last_line),
         std::nullopt, "", std::nullopt, std::nullopt, "copy the excerpt through its last line's end"});
  if (!sa && f.defaulted.empty())
    add({"no-server-args", false, "the log has no " + launch_line + ": the launch settings come from the flags",
         std::nullopt, "", std::nullopt, std::nullopt, "keep the server's startup lines in the log"});
  if (!sa && !f.defaulted.empty()) {  // a guess the figures rest on: a warning
    std::string what, flags;
    for (const auto& d : f.defaulted) {
      what += (what.empty() ? "" : ", ") + d.substr(0, d.find(" ("));
      flags += (flags.empty() ? "" : ", ") + d.substr(d.find('(') + 1, d.size() - d.find('(') - 2);
    }
    add({"no-server-args", true,
         fmt::format("the log has no {} and no flag gave {}: {}'s defaults are assumed", launch_line, what, engine),
         std::nullopt, "", std::nullopt, std::nullopt,
         fmt::format("give {} as the server ran (or keep the server's startup lines in the log)", flags)});
  }
  if (log.launches > 1 && sa)
    add({"several-launches", false,
         fmt::format("{} server starts in the log: the one at line {} (most decode lines) is used", log.launches,
                     sa->line),
         std::nullopt, "", std::nullopt, std::nullopt, "one log per launch"});
  if (sa && !vllm) {  // a vLLM launch is read as its command: diagnose lists the flags it does not price
    std::vector<std::string> off;
    if (sa->dp_size > 1) off.push_back(fmt::format("dp_size={}", sa->dp_size));
    if (sa->enable_dp_attention) off.push_back("enable_dp_attention");
    if (sa->enable_torch_compile) off.push_back("enable_torch_compile");
    if (sa->quantization && *sa->quantization != "fp8" && *sa->quantization != "w8a8_fp8")
      off.push_back("quantization=" + *sa->quantization);
    if (!kv_cache_dtype_modelled(sa->kv_cache_dtype)) off.push_back("kv_cache_dtype=" + sa->kv_cache_dtype);
    // the attention backends specsim prices (docs/model.md#tree-attention); another's kernels are not
    if (sa->attention_backend && *sa->attention_backend != "fa3" && *sa->attention_backend != "flashinfer")
      off.push_back("attention_backend=" + *sa->attention_backend);
    const LaterKeys later = later_release_keys(*sa);
    off.insert(off.end(), later.off_default.begin(), later.off_default.end());
    if (sa->speculative_algorithm) {
      const SglangWorkerChoice w = sglang_log_spec_worker(later.release, *sa);
      const std::string dated = later.release.empty() ? "" : fmt::format("; its server_args has {}", later.by);
      if (w.worker == SglangSpecWorker::V2Overlap)
        add({"spec-v2-worker", false,
             fmt::format("the server ran SGLang's spec-v2 worker with overlap scheduling ({}{}): priced with "
                         "models/runtime/sglang-spec-v2.json, whose overlap is counted from the code, not measured",
                         w.why, dated),
             std::nullopt, "", std::nullopt, std::nullopt,
             "read the implied overhead as what the counted overlap leaves out"});
      else if (w.worker == SglangSpecWorker::V2Sync)
        add({"spec-v2-worker", true,
             fmt::format("the server ran SGLang's spec-v2 worker without overlap scheduling ({}{}): priced on the "
                         "v1 worker's synchronous terms (models/runtime/sglang.json), no profile of its own",
                         w.why, dated),
             std::nullopt, "", std::nullopt, std::nullopt,
             "read the implied overhead as the two workers' difference, not as host work of the v1 cycle"});
    }
    if (!off.empty()) {
      std::string l;
      for (const auto& o : off) l += (l.empty() ? "" : ", ") + o;
      add({"settings-not-modelled", false, "launch settings the model does not take into account: " + l, std::nullopt,
           "", std::nullopt, std::nullopt, "their cost is in the implied overhead"});
    }
  }
  std::stable_partition(out.begin(), out.end(), [](const Finding& x) { return x.warning; });
  return out;
}

}  // namespace specsim::diagnose
