#include "diagnose/diagnose.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "cost/harness_launch.h"
#include "diagnose/dp_rank_windows.h"
#include "diagnose/findings.h"
#include "diagnose/model_match.h"
#include "diagnose/nccl_tests_gpu.h"
#include "evaluate/evaluate_scenario.h"
#include "ingest/baseline_log.h"
#include "ingest/nccl_tests.h"
#include "ingest/server_log.h"
#include "ingest/text_lines.h"
#include "ingest/torch_trace.h"
#include "scenario/command_flags.h"
#include "scenario/dtype.h"
#include "scenario/load_scenario.h"
#include "scenario/model_spec.h"
#include "scenario/pasted_command.h"
#include "scenario/scenario_file.h"
#include "scenario/sglang_spec_worker.h"
#include "scenario/stack_flag_table.h"
#include "util/error.h"
#include "util/text.h"

namespace specsim::diagnose {

namespace {

std::string lines_text(const LogSummary& s) {
  const auto& l = s.line_numbers;
  return l.size() == 1 ? fmt::format("line {}", l.front()) : fmt::format("lines {}-{}", l.front(), l.back());
}

// A -g N eager table's time is read as the collective's only when it is this many times the
// launching thread's modelled cost: that cost was measured on another CPU (models/nccl/tuning.json),
// and the thanos A100 host's -g 8 and one-process-per-GPU logs (traces/nccl-tests/) put its own
// launch about 1.2x that figure.
constexpr double kHostBoundMargin = 1.5;

// The time nccl-tests printed at one size, with how its table was run.
struct TableTime {
  double us = 0;
  int gpus_per_thread = 1, iters = 20;
  bool graph = false;
};

// The NCCL all-reduce time at `bytes` in the nccl-tests table of `world` ranks (out of place,
// log-log between the two rows around it).
TableTime nccl_tests_us_at(const std::string& file, int world, double bytes) {
  const auto log = ingest::parse_nccl_tests(ingest::read_text(file, "--nccl-tests"), file);
  for (const auto& t : log.tables) {
    if (t.world() != world || (!t.collective.empty() && t.collective.find("all_reduce") == std::string::npos)) continue;
    std::vector<std::pair<double, double>> rows;
    for (const auto& r : t.rows)
      if (r.bytes > 0 && r.oop_us > 0) rows.emplace_back(r.bytes, r.oop_us);
    std::sort(rows.begin(), rows.end());
    if (rows.empty()) continue;
    // Outside the table no row measures the payload: a latency row is not a 32 KB all-reduce.
    if (bytes < rows.front().first || bytes > rows.back().first)
      throw InputError(fmt::format("the all-reduce table of {} ranks covers {:g}..{:g} B and the verify moves {:g} B: "
                                   "give a log whose table spans it (all_reduce_perf -b 8 -e 1M), or diagnose without "
                                   "it and anchor the all-reduce with `specsim run --scenario OUT "
                                   "--measured-allreduce-us US`",
                                   world, rows.front().first, rows.back().first, bytes),
                       "--nccl-tests " + file);
    TableTime out{0, t.gpus_per_thread, t.iters, t.graph};
    if (bytes == rows.front().first) return out.us = rows.front().second, out;
    for (std::size_t i = 1; i < rows.size(); ++i)
      if (bytes <= rows[i].first) {
        const auto [b0, t0] = rows[i - 1];
        const auto [b1, t1] = rows[i];
        const double w = std::log(bytes / b0) / std::log(b1 / b0);
        out.us = std::exp(std::log(t0) + w * (std::log(t1) - std::log(t0)));
        return out;
      }
  }
  throw InputError(fmt::format("no all-reduce table of {} ranks (the deployment's tp size)", world),
                   "--nccl-tests " + file);
}

const CycleResult& nccl_result(const ScenarioResult& r) {
  for (const auto& c : r.results)
    if (c.backend.kind == AllReduceChoice::Kind::Nccl && c.refused.empty()) return c;
  return r.results.front();
}

double tok_s_of(const Scenario& s, const ScenarioResult& r) {
  const CycleResult& c = nccl_result(r);
  return s.run.speculative() ? c.spec_tok_s : c.baseline_tok_s;
}

// The scenario as `specsim run --scenario FILE` reads it back, evaluated.
double round_trip_tok_s(const nlohmann::json& file) {
  RunArgs a;
  const Scenario s = load_scenario(ScenarioFile{"scenario", file}, a);
  return tok_s_of(s, run_scenario(s));
}

// A speculative log needs the draft: the zoo's for the model, else --speculative-draft-model-path.
void require_zoo_draft(const std::string& model, bool nextn, const LogSummary& sum) {
  if (!zoo_draft_config(resolve_model_config(model, "--model"), nextn).empty()) return;
  std::string drafts;
  for (const auto& z : zoo_names())
    if (z.rfind(model + "/", 0) == 0) drafts += (drafts.empty() ? "" : ", ") + z;
  const ingest::ServerArgs* sa = sum.launch ? &*sum.launch : nullptr;
  throw InputError(
      fmt::format(
          "the zoo has no {} draft for {}{}: give --speculative-draft-model-path with the draft's config.json "
          "(or its folder){}",
          nextn ? "NextN or EAGLE-3" : "EAGLE-3", model,
          sa && sa->speculative_draft_model_path
              ? fmt::format(" (the log's draft: '{}', {}:{})", *sa->speculative_draft_model_path, sum.file, sa->line)
              : "",
          drafts.empty() ? "" : fmt::format(", or a zoo draft of {} ({})", model, drafts)),
      "--speculative-draft-model-path");
}

// The runtime profile of the vLLM release a log names: vllm-0.10 (fitted on 0.9-0.10 runs) before
// 0.11, vllm (0.11's) from it on and when the log names none.
std::string vllm_runtime_of(const std::string& version) {
  int major = 0, minor = 0;
  if (std::sscanf(version.c_str(), "%d.%d", &major, &minor) == 2 && major == 0 && minor < 11) return "vllm-0.10";
  return "vllm";
}

// The launch's arguments the model prices, as a `vllm serve` command. The others (a flag vLLM's
// table refuses, one v0.11.0 does not have) ran in the measured deployment: they are left out and
// listed, their cost in the overhead the log implies (as for an SGLang launch's).
std::vector<std::string> vllm_command_of(const ingest::ServerArgs& sa, const std::string& where,
                                         std::vector<std::string>& left_out) {
  std::vector<std::string> cmd{"vllm", "serve"};
  for (const auto& g : sa.vllm_flags) {
    std::vector<std::string> one{"vllm", "serve"};
    one.insert(one.end(), g.begin(), g.end());
    std::string why;
    try {
      for (const auto& f : read_command_flags(one, where).flags)
        if (f.cls == FlagClass::Refused) why = "it changes " + f.what;
    } catch (const InputError&) {
      const StackFlagTable& table = stack_flag_table("vllm");
      why = "not a flag of vLLM v0.11.0, the release whose flags specsim reads" +
            (table.newer_release.empty() ? std::string() : ", nor of " + table.newer_source);
    }
    if (why.empty()) {
      cmd.insert(cmd.end(), g.begin(), g.end());
      continue;
    }
    std::string shown;
    for (const auto& t : g) shown += (shown.empty() ? "" : " ") + t;
    left_out.push_back(fmt::format("{} ({})", shown.size() > 80 ? shown.substr(0, 77) + "..." : shown, why));
  }
  return cmd;
}

// A vLLM log's launch: its `non-default args` rebuilt as the `vllm serve` command and read as
// `specsim run -- COMMAND` reads one (every flag classed by vLLM's table, a refused one refused),
// under the flags given to diagnose; priced on the profile of the release the log names.
RunArgs vllm_run_args(const DiagnoseInput& in, const LogSummary& sum, const std::string& model,
                      std::vector<std::string>& notes, std::vector<std::string>& left_out) {
  const ingest::ServerArgs& sa = *sum.launch;
  RunArgs a;
  a.model_path = model;
  a.hardware = in.hardware;
  a.tp_size = in.tp_size;
  if (in.algorithm) a.algorithm = ascii_upper(*in.algorithm);
  a.num_steps = in.num_steps, a.topk = in.topk, a.num_draft_tokens = in.num_draft_tokens;
  a.draft_model_path = in.draft_model;
  a.batch_size = sum.batch_size;
  a.context_len = sum.context_len;
  a.runtime = vllm_runtime_of(sa.vllm_version);
  notes.push_back(fmt::format("{}: {}, priced on the {} runtime profile",
                              sa.vllm_version.empty() ? "the log names no vLLM release"
                                                      : fmt::format("vLLM {} (the log's release)", sa.vllm_version),
                              sa.vllm_version.empty() ? "taken as 0.11" : "its launch", *a.runtime));
  const std::string where = fmt::format("{}:{} (the launch's non-default args)", sum.file, sa.line);
  const PastedCommand c = args_from_command(vllm_command_of(sa, where, left_out), a, where);
  notes.insert(notes.end(), c.notes.begin(), c.notes.end());
  if (!a.algorithm) a.algorithm = "NONE";
  if (*a.algorithm == "NONE" && sum.speculative)
    throw InputError("the stats lines are followed by SpecDecoding lines but the launch has no speculative_config",
                     fmt::format("{}:{}", sum.file, sa.line));
  if (a.tp_size.value_or(1) > 1 && a.allreduce.empty()) a.allreduce = {"vllm"};
  return a;
}

// What an SGLang log's server_args say of the defaults that follow the release: the release its
// later keys date it to, the speculative worker the server ran (spec v2 with overlap has a runtime
// profile of its own) and FlashInfer's all-reduce fusion as the server settled it (its default
// included), where the line shows it: the backend field from v0.5.14, the switch before.
void sglang_release_defaults(const ingest::ServerArgs& sa, const std::string& upper, RunArgs& a) {
  const std::string release = later_release_keys(sa).release;
  if (!release.empty()) a.sglang_release = release, a.sglang_release_dated = true;
  if (upper != "NONE" && sa.speculative() && sglang_log_spec_worker(release, sa).worker == SglangSpecWorker::V2Overlap)
    a.runtime = kSglangSpecV2Runtime;
  const auto backend = sa.raw.find("flashinfer_allreduce_fusion_backend");
  const auto fusion = sa.raw.find("enable_flashinfer_allreduce_fusion");
  if (backend != sa.raw.end() || fusion != sa.raw.end()) a.fusion_from = "the log's server_args";
  if (backend != sa.raw.end())
    (backend->second == "None" ? a.enforce_disable_flashinfer_allreduce_fusion : a.enable_flashinfer_allreduce_fusion) =
        true;
  else if (fusion != sa.raw.end())
    (fusion->second == "True" ? a.enable_flashinfer_allreduce_fusion : a.enforce_disable_flashinfer_allreduce_fusion) =
        true;
}

RunArgs run_args(const DiagnoseInput& in, const LogSummary& sum, const std::string& model,
                 std::vector<std::string>& notes, std::vector<std::string>& left_out) {
  if (sum.launch && sum.launch->stack == "vllm") return vllm_run_args(in, sum, model, notes, left_out);
  const ingest::ServerArgs* sa = sum.launch ? &*sum.launch : nullptr;
  RunArgs a;
  a.model_path = model;
  a.hardware = in.hardware;
  a.tp_size = in.tp_size ? in.tp_size : sa ? std::optional<int>(sa->tp_size) : std::nullopt;
  std::string algo = in.algorithm.value_or(sa ? sa->speculative_algorithm.value_or("NONE") : "");
  if (algo.empty()) {
    if (sum.speculative)
      throw InputError("the log has no " + ingest::launch_line_name(sum.stack) +
                           " and its decode lines report an accept len: give "
                           "--speculative-algorithm and --speculative-num-steps as the server ran",
                       "--speculative-algorithm");
    algo = "NONE";
  }
  const std::string upper = ascii_upper(algo);
  if (upper != "NONE" && upper != "EAGLE" && upper != "EAGLE3" && upper != "NEXTN")
    throw InputError(fmt::format("speculative_algorithm {} is not modelled (EAGLE, EAGLE3, NEXTN or none)", algo),
                     sa ? fmt::format("{}:{}", sum.file, sa->line) : "--speculative-algorithm");
  if (upper == "NONE" && sum.speculative)
    throw InputError("the decode lines report an accept len but the launch has no speculative_algorithm",
                     in.algorithm ? "--speculative-algorithm" : sum.file);
  a.algorithm = upper;
  if (upper != "NONE") {
    a.num_steps = in.num_steps ? in.num_steps : sa ? sa->speculative_num_steps : std::nullopt;
    a.topk = in.topk ? in.topk : sa ? sa->speculative_eagle_topk : std::nullopt;
    a.num_draft_tokens = in.num_draft_tokens ? in.num_draft_tokens
                         : sa                ? sa->speculative_num_draft_tokens
                                             : std::nullopt;
    if (!a.num_steps)
      throw InputError("the launch does not say speculative_num_steps: give --speculative-num-steps",
                       "--speculative-num-steps");
    a.draft_model_path = in.draft_model;
    if (!in.draft_model) require_zoo_draft(model, upper == "EAGLE" || upper == "NEXTN", sum);
  }
  a.batch_size = sum.batch_size;
  a.context_len = sum.context_len;
  if (sa) {
    a.cuda_graph_max_bs = sa->cuda_graph_max_bs;
    a.disable_cuda_graph = sa->disable_cuda_graph;
    a.disable_overlap_schedule = sa->disable_overlap_schedule;
    if (sum.stack != "vllm") sglang_release_defaults(*sa, upper, a);
    a.mem_fraction_static = sa->mem_fraction_static;
    // The backends specsim prices a tree's attention with (docs/model.md#tree-attention).
    if (sa->attention_backend && (*sa->attention_backend == "fa3" || *sa->attention_backend == "flashinfer"))
      a.attention_backend = sa->attention_backend;
    // the KV-cache dtypes `run --kv-cache-dtype` prices (the others are findings)
    if (kv_cache_dtype_modelled(sa->kv_cache_dtype) && sa->kv_cache_dtype != "auto")
      a.kv_cache_dtype = sa->kv_cache_dtype;
    if (sa->quantization && (*sa->quantization == "fp8" || *sa->quantization == "w8a8_fp8"))
      a.dtype = "fp8";
    else if (!sa->quantization && (sa->dtype == "bfloat16" || sa->dtype == "float16"))
      a.dtype = sa->dtype;
  }
  // The all-reduce the server ran: SGLang's own (its custom kernel where its gates allow it, NCCL
  // elsewhere; on unless server_args say disable_custom_all_reduce=True), so that the log's tok/s
  // anchor the cycle with the collective they were measured with.
  const std::string stack_ar = sum.stack == "vllm" ? "vllm" : "sglang";
  if (a.tp_size.value_or(1) > 1)
    a.allreduce = {sa && sa->disable_custom_all_reduce ? stack_ar + ":disable-custom" : stack_ar};
  if (sum.stack == "vllm") {  // a vLLM log without its launch line: the release it names, if any
    a.runtime = vllm_runtime_of(sum.vllm_version);
    notes.push_back(fmt::format("{}, priced on the {} runtime profile",
                                sum.vllm_version.empty() ? "the log names no vLLM release: taken as 0.11"
                                                         : fmt::format("vLLM {} (the log's release)", sum.vllm_version),
                                *a.runtime));
  }
  // Decode lines that ran without CUDA graphs although graphs were on: the phase the log times
  // (verify with speculation, the decode step without) ran eagerly.
  if (!a.disable_cuda_graph && sum.eager_lines > sum.graph_lines)
    a.eager_phases = upper == "NONE" ? "baseline_decode" : "verify";
  return a;
}

// Model figures without any measurement (the accept len as logged, or 1).
Figures model_figures(const RunArgs& args, const LogSummary& sum, std::optional<double> accept_len) {
  RunArgs a = args;
  const bool spec = *a.algorithm != "NONE";
  if (spec) a.accept_len = accept_len.value_or(1.0);
  // NCCL beside the stack's all-reduce, in the same evaluation: a measured all-reduce (nccl-tests, a
  // trace's NCCL kernels) is NCCL's, compared with NCCL's model
  if (!a.allreduce.empty()) a.allreduce.push_back("nccl");
  const Scenario s = resolve_scenario(a);
  const ScenarioResult r = run_scenario(s);
  const CycleResult& c = r.results.front();  // what the server ran (NCCL when none is named)
  Figures f;
  f.speculative = spec;
  f.steps = s.run.num_steps, f.topk = s.run.topk, f.draft_tokens = s.run.num_draft_tokens;
  f.tp_size = s.run.tp_size, f.cuda_graph_max_bs = s.run.cuda_graph_max_bs;
  f.disable_cuda_graph = s.run.disable_cuda_graph;
  f.context_len = s.run.context_len;
  if (!args.tp_size) f.defaulted.push_back(fmt::format("tp {} (--tp-size)", f.tp_size));
  if (spec && !args.topk) f.defaulted.push_back(fmt::format("topk {} (--speculative-eagle-topk)", f.topk));
  if (spec && !args.num_draft_tokens)
    f.defaulted.push_back(fmt::format("{} draft tokens (--speculative-num-draft-tokens)", f.draft_tokens));
  f.model_step_us = c.baseline_step_us;
  f.model_cycle_us = spec ? c.cycle_us : c.baseline_step_us;
  // one all-reduce of the verify (the decode step without speculation), as `c` runs it
  auto one_allreduce_us = [&](const CycleResult& cr) {
    double us = 0;
    for (const auto& p : cr.phases)
      if ((p.kind == PhaseKind::Verify || (!spec && p.kind == PhaseKind::BaselineDecode)) && p.allreduce_count > 0)
        us = p.allreduce_us / p.allreduce_count;
    return us;
  };
  for (const auto& p : c.phases) {
    const bool in_cycle = spec ? p.kind != PhaseKind::BaselineDecode : p.kind == PhaseKind::BaselineDecode;
    if (in_cycle) f.allreduces_per_cycle += p.count * p.allreduce_count;
  }
  f.allreduce_model_us = one_allreduce_us(c);
  f.nccl_allreduce_model_us = one_allreduce_us(nccl_result(r));
  if (spec && accept_len) f.measured_cycle_us = *accept_len * sum.batch_size * 1e6 / sum.tok_s;
  if (!spec) f.measured_step_us = sum.batch_size * 1e6 / sum.tok_s;
  return f;
}

struct Baseline {
  double tok_s = 0;
  int batch = 0;
  std::optional<long long> context_len;
  std::string source;
};

Baseline baseline_from(const std::string& file, int tp_size, const std::string& stack) {
  const ingest::BaselineLog log = ingest::read_baseline_log(file, std::nullopt);
  log.check_tp(tp_size, "the log");
  if (log.lines.stack != stack)
    throw InputError(fmt::format("the baseline log is {}'s and LOG is {}'s: give a plain log of the same server",
                                 ingest::engine_name(log.lines.stack), ingest::engine_name(stack)),
                     "--baseline-from " + file);
  const LogSummary& b = log.lines;
  return {b.tok_s, b.batch_size, b.context_len,
          fmt::format("{}: median gen throughput of {} decode lines at #running-req {} ({})", file,
                      b.line_numbers.size(), b.batch_size, lines_text(b))};
}

}  // namespace

std::string_view reproduction_name(Reproduction r) {
  switch (r) {
    case Reproduction::Baseline: return "measured-baseline";
    case Reproduction::ImpliedOverhead: return "logged-accept-len-implied-overhead";
    case Reproduction::ImpliedAccept: return "measured-baseline-implied-accept-len";
    default: return "not-reproduced";
  }
}

Diagnosis diagnose(const DiagnoseInput& in) {
  Diagnosis d;
  // A DP-attention server's lines are per rank: one window of them is the server's interval.
  const auto per_rank = ingest::parse_server_log(ingest::read_text(in.log, "LOG"), in.log);
  const int dp_ranks = dp_ranks_in(per_rank);
  const auto log = sum_dp_ranks(per_rank);
  d.log = ingest::summarize_log(log, in.log, in.batch_size);
  const LogSummary& sum = d.log;
  if (!in.hardware)
    throw InputError(
        "the log does not say the GPU: give --hardware GPU:TOPOLOGY (e.g. h100-sxm:nvswitch, "
        "rtx-pro-6000:pcie-numa; models/hardware/ lists them)",
        "--hardware");
  if (in.nccl_tests && in.trace)
    throw InputError("give one all-reduce measurement: --trace or --nccl-tests", "--trace");
  const ModelMatch m = match_model(in.model, sum);
  d.model = m.name, d.model_from = m.how;

  std::vector<std::string> launch_notes, launch_left_out;
  RunArgs a = run_args(in, sum, d.model, launch_notes, launch_left_out);
  if (dp_ranks > 1 && !a.parallel.given()) {
    // the lines' DP rank tags say the layout the server ran: DP attention over that many ranks
    a.parallel.enable_dp_attention = true;
    a.parallel.dp_size = dp_ranks;
  }
  // A logged accept len above steps + 1 cannot be modelled: it is capped there (and reported).
  std::optional<double> accept = sum.accept_len;
  if (accept && a.num_steps && *accept > *a.num_steps + 1) accept = *a.num_steps + 1.0;
  d.figures = model_figures(a, sum, accept);
  Figures& f = d.figures;
  const bool spec = f.speculative;

  // The all-reduce measurement, at the verify payload (the decode step's without speculation).
  std::string host_bound;  // why an nccl-tests time bounds the all-reduce from above only
  if (in.trace || in.nccl_tests) {
    if (f.tp_size <= 1) throw InputError("tp 1 runs no all-reduce to measure", in.trace ? "--trace" : "--nccl-tests");
    if (in.trace) {
      const auto tr = ingest::parse_torch_trace(ingest::read_text(*in.trace, "--trace"), *in.trace);
      if (tr.mean_nccl_allreduce_us() <= 0)
        throw InputError("the trace holds no NCCL all-reduce kernel", "--trace " + *in.trace);
      a.measured_allreduce_us = tr.mean_nccl_allreduce_us();
      a.measured_allreduce_source = fmt::format("{}: mean of {} NCCL all-reduce kernels", *in.trace,
                                                tr.count[static_cast<int>(ingest::KernelKind::NcclAllReduce)]);
    } else {
      RunArgs a0 = a;  // the payload does not depend on acceptance
      if (spec) a0.accept_len = 1.0;
      const Scenario s0 = resolve_scenario(a0);
      const double bytes = typical_allreduce_bytes(run_scenario(s0).plan);
      const TableTime t = nccl_tests_us_at(*in.nccl_tests, f.tp_size, bytes);
      a.measured_allreduce_us = t.us;
      a.measured_allreduce_source = fmt::format(
          "{}: all_reduce_perf out-of-place time at {:.0f} bytes (the verify payload)", *in.nccl_tests, bytes);
      if (t.gpus_per_thread > 1 && !t.graph) {
        // One thread launched every GPU's collective (-g N, eager): nccl-tests printed
        // max(host, collective) + min(host, collective) / iters (cost/harness_launch.h). A serving
        // engine runs one process per GPU and never pays that thread's launch.
        const double host = load_single_thread_launch().host_us(t.gpus_per_thread);
        const double collective = t.us - host / t.iters;
        if (t.us >= kHostBoundMargin * host) {
          a.measured_allreduce_us = collective;
          *a.measured_allreduce_source += fmt::format(
              ", less {:.1f} us: the one launching thread's fill of {} iterations (-g {}, eager; its launch "
              "about {:.1f} us an iteration, overlapped by the collective)",
              host / t.iters, t.iters, t.gpus_per_thread, host);
        } else {
          // The launching thread may have set the time: the figure bounds the collective from above.
          host_bound = fmt::format(
              "the nccl-tests time at the verify payload ({:.1f} us at {:.0f} B) is within {:.1f}x of the {:.1f} us "
              "one "
              "thread takes to launch {} GPUs' collectives (-g {}, eager; measured on another host's CPU): it may be "
              "the harness's host work, so the all-reduce is at most that",
              t.us, bytes, kHostBoundMargin, host, t.gpus_per_thread, t.gpus_per_thread);
          *a.measured_allreduce_source += ", an upper bound (one thread launched every GPU's collective)";
        }
      }
    }
    f.allreduce_measured_us = a.measured_allreduce_us;
    f.allreduce_source = *a.measured_allreduce_source;
    if (in.nccl_tests) f.allreduce_other_gpu = nccl_tests_other_gpu(*in.nccl_tests, resolve_scenario(a).hw.gpu.name);
    f.allreduce_upper_bound = !host_bound.empty();
  }

  const std::string where = fmt::format("{}: median gen throughput of {} decode lines at #running-req {} ({})", in.log,
                                        sum.line_numbers.size(), sum.batch_size, lines_text(sum));
  d.measured_tok_s = sum.tok_s;
  std::optional<Baseline> base;
  if (in.baseline_log) base = baseline_from(*in.baseline_log, f.tp_size, sum.stack);

  auto build = [&](const RunArgs& args, std::optional<double> spec_tok_s, std::optional<Baseline> b,
                   const std::string& baseline_source) {
    Scenario s = resolve_scenario(args);
    for (auto& mr : s.measured) {
      mr.origin = "diagnose";
      if (args.measured_baseline_tok_s) mr.baseline_source = baseline_source;
      if (spec_tok_s) mr.run.measured_spec_tok_s = spec_tok_s, mr.spec_source = where;
    }
    if (s.measured.empty() && spec_tok_s) {
      MeasuredRun mr;
      mr.origin = "diagnose", mr.run = s.run, mr.hw = s.hw;
      mr.run.accept_len.reset(), mr.run.accept_rate.reset();
      mr.run.measured_spec_tok_s = spec_tok_s, mr.spec_source = where;
      s.measured.push_back(mr);
    }
    if (b) {  // the plain-decode measurement of another log, at its own batch size
      MeasuredRun mr;
      mr.origin = "diagnose", mr.run = s.run, mr.hw = s.hw;
      mr.run.accept_len.reset(), mr.run.accept_rate.reset();
      mr.run.measured_spec_tok_s.reset(), mr.run.measured_allreduce_us.reset();
      mr.run.batch_size = b->batch;
      if (b->context_len) mr.run.context_len = *b->context_len;
      mr.run.measured_baseline_tok_s = b->tok_s, mr.baseline_source = b->source;
      s.measured.push_back(mr);
    }
    return s;
  };
  auto predicted = [&](const Scenario& s) { return tok_s_of(s, run_scenario(s)); };

  Scenario s;
  if (!spec) {
    a.measured_baseline_tok_s = sum.tok_s;
    s = build(a, std::nullopt, std::nullopt, where);
    d.how = Reproduction::Baseline;
  } else if (base || !sum.accept_len) {
    // The measured terms and the tok/s: the accept len is what they imply.
    try {
      s = build(a, sum.tok_s, base, "");
      const ScenarioResult r = run_scenario(s);
      if (const AnchorEntry* e = r.anchor_report.acceptance()) f.implied_accept_len = e->derived;
      d.how = Reproduction::ImpliedAccept;
    } catch (const InputError&) {
      if (!sum.accept_len) throw;
      RunArgs b = a;
      b.accept_len = accept;
      s = build(b, std::nullopt, base, "");
      d.how = Reproduction::NotReproduced;
    }
  } else {
    // The logged accept len, and the per-forward overhead that closes the measured cycle: the
    // plain-decode figure with that overhead, found by bisection through the whole model.
    RunArgs b = a;
    b.accept_len = accept;
    const std::string implied_source = fmt::format(
        "implied, not measured: the plain decode step whose per-forward overhead makes the modelled cycle give {} "
        "at the logged accept len {:.3f}",
        where, *accept);
    auto at = [&](double baseline_tok_s, std::optional<double> spec_tok_s) {
      RunArgs t = b;
      t.measured_baseline_tok_s = baseline_tok_s;
      return build(t, spec_tok_s, std::nullopt, implied_source);
    };
    // nullopt: the anchors refuse that baseline (a step under half the modelled one).
    auto tok_s_at = [&](double baseline_tok_s) -> std::optional<double> {
      try {
        return predicted(at(baseline_tok_s, std::nullopt));
      } catch (const InputError&) {
        return std::nullopt;
      }
    };
    const double model_base = sum.batch_size * 1e6 / f.model_step_us;
    double lo = model_base * 1e-4, hi = model_base * 1.99;
    for (int i = 0; i < 40 && !tok_s_at(hi); ++i) hi *= 0.97;
    const auto top = tok_s_at(hi);
    if (!top || *top < sum.tok_s) {
      f.model_too_slow = true;
      s = build(b, std::nullopt, std::nullopt, "");
      d.how = Reproduction::NotReproduced;
    } else {
      for (int i = 0; i < 200 && hi / lo > 1 + 1e-12; ++i) {
        const double mid = std::sqrt(lo * hi);
        const auto v = tok_s_at(mid);
        (v && *v < sum.tok_s ? lo : hi) = mid;
      }
      s = at(hi, sum.tok_s);
      d.how = Reproduction::ImpliedOverhead;
    }
  }
  {
    const ScenarioResult r = run_scenario(s);
    for (const auto& e : r.anchor_report.entries)
      if (e.kind == AnchorKind::Baseline && e.used) f.overhead_us = e.derived;
    if (base) f.measured_step_us = base->batch * 1e6 / base->tok_s;
  }
  s.title = fmt::format("{} from the {} log {} (specsim diagnose)", d.model, ingest::engine_name(sum.stack), in.log);
  s.notes.insert(s.notes.end(), launch_notes.begin(), launch_notes.end());
  s.notes.push_back(fmt::format("decode lines used: {} ({} at #running-req {}); gen throughput median {:.2f} tok/s",
                                lines_text(sum), sum.line_numbers.size(), sum.batch_size, sum.tok_s));
  if (sum.accept_len)
    s.notes.push_back(fmt::format("logged accept len: mean {:.3f} over those lines", *sum.accept_len));
  s.notes.push_back(fmt::format("model: {} ({})", d.model, d.model_from));
  s.notes.push_back(fmt::format("reproduced by: {}", reproduction_name(d.how)));
  d.scenario = s;
  d.scenario_file = scenario_file_json(s, d.model, in.draft_model.value_or(""), a.runtime.value_or(""));
  d.predicted_tok_s = round_trip_tok_s(d.scenario_file);
  d.reproduces = std::abs(d.predicted_tok_s / d.measured_tok_s - 1) <= kReproduceShare;
  d.findings = find_disagreements(sum, f);
  if (!launch_left_out.empty()) {
    std::string list;
    for (const auto& l : launch_left_out) list += (list.empty() ? "" : "; ") + l;
    d.findings.push_back(Finding{"settings-not-modelled", false,
                                 "launch settings the model does not take into account: " + list, std::nullopt, "",
                                 std::nullopt, std::nullopt, "their cost is in the implied overhead"});
  }
  if (!host_bound.empty())
    d.findings.push_back(Finding{"allreduce-host-bound", true, host_bound, std::nullopt, "", std::nullopt, std::nullopt,
                                 "measure with one process per GPU (mpirun -np N all_reduce_perf ... -g 1) or in a "
                                 "CUDA graph (-G 1), or anchor the all-reduce with `specsim run --scenario OUT "
                                 "--measured-allreduce-us US`"});
  if (dp_ranks > 1)
    d.findings.push_back(Finding{"dp-ranks-summed", false,
                                 fmt::format("the decode lines carry {} DP ranks' tags: each window of them is summed "
                                             "into the server's batch and throughput, and the scenario runs DP "
                                             "attention over {} ranks",
                                             dp_ranks, dp_ranks),
                                 double(dp_ranks), "DP ranks", std::nullopt, std::nullopt, ""});
  if (!d.reproduces)
    d.findings.insert(
        d.findings.begin(),
        Finding{"not-reproduced", true,
                fmt::format("the scenario gives {:.1f} tok/s against the measured {:.1f}", d.predicted_tok_s,
                            d.measured_tok_s),
                d.predicted_tok_s / d.measured_tok_s, "x measured", 1 - kReproduceShare, 1 + kReproduceShare,
                !f.model_too_slow ? "check --hardware and the launch settings; the findings below say which term is off"
                : f.allreduce_measured_us
                    ? "the measured all-reduce alone makes the cycle slower than the log: check that it was taken on "
                      "this deployment, and --hardware"
                    : "the model is slower than the log even with half a step less per forward: check --hardware "
                      "and the dtype"});
  return d;
}

}  // namespace specsim::diagnose
