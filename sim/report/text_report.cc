#include <fmt/format.h>

#include <algorithm>

#include "report/error_band.h"
#include "report/report.h"
#include "scenario/measured_run.h"

namespace specsim {

namespace {

std::string model_line(const ModelSpec& m) {
  return fmt::format("{} ({}, {} layer{}, hidden {}, {} weights, {:.0f}B params)", m.name, m.architecture, m.layers,
                     m.layers == 1 ? "" : "s", m.hidden,
                     m.quant_format.empty() ? std::string(dtype_name(m.weight_dtype)) : m.quant_format,
                     m.param_count() / 1e9);
}

std::string anchor_line(const AnchorEntry& e) {
  const std::string where = fmt::format("bs {}, {}", e.batch_size, e.box);
  switch (e.kind) {
    case AnchorKind::AllReduce:
      return fmt::format(
          "NCCL all-reduce {:.1f} us in {} ({}, {:.0f} B; {}): model {:.1f} us -> {:+.1f} us per NCCL "
          "all-reduce in {} phases",
          e.measured, phase_name(e.phase), e.graph ? "graph" : "eager", e.bytes, where, e.model, e.derived,
          e.graph ? "graph" : "eager");
    case AnchorKind::Baseline:
      return fmt::format(
          "baseline {:.1f} tok/s {} at bs {} = {:.0f} us/step ({}): model {:.0f} us -> {:+.0f} us "
          "per target forward{}",
          e.measured, implied_source(e.source) ? "implied" : "measured", e.batch_size, e.batch_size * 1e6 / e.measured,
          e.box, e.model, e.derived,
          e.derived < 0 ? " (the model is slower than measured: its profile is pessimistic)" : "");
    case AnchorKind::Cycle:
      return fmt::format(
          "speculation {:.1f} tok/s at accept len {:.2f} (steps {}, topk {}, {} draft tokens; {}) = {:.0f} us per "
          "cycle: model {:.0f} us -> {:+.0f} us per cycle ({:+.1f} us per draft decode forward, {:+.1f} us per "
          "draft extend, {:+.1f} us per verify)",
          e.measured, e.accept_len, e.steps, e.topk, e.draft_tokens, where, e.model + e.derived, e.model, e.derived,
          e.step_extra_us, e.extend_extra_us, e.verify_extra_us);
    default:
      return fmt::format(
          "speculation {:.1f} tok/s (steps {}, topk {}, {} draft tokens; {}) with a modelled {:.0f} us "
          "cycle -> accept len {:.2f} (per-token acceptance {:.3f})",
          e.measured, e.steps, e.topk, e.draft_tokens, where, e.model, e.derived, e.accept_rate);
  }
}

void anchors_text(std::string& out, const ScenarioResult& r) {
  const auto& a = r.anchor_report;
  if (!a.any()) return;
  const bool all_nccl =
      std::all_of(a.entries.begin(), a.entries.end(), [](const AnchorEntry& e) { return e.taken_with == "NCCL"; });
  out += all_nccl ? "anchored to measurements (each where it was taken, with NCCL):\n"
                  : "anchored to measurements (each where it was taken, with the all-reduce it ran):\n";
  for (const auto& e : a.entries) {
    out += fmt::format("  [{}{}] {}\n", e.origin, e.used ? "" : ", not used", anchor_line(e));
    out += "      source: " + e.source + "\n";
    for (const auto& t : e.applies) out += "      applies: " + t + "\n";
    for (const auto& t : e.not_applies) out += "      not: " + t + "\n";
    if (e.used && !e.conflict.empty()) out += "      " + e.conflict + "\n";
    if (!e.caution.empty()) out += "      caution: " + e.caution + "\n";
  }
}

void phase_table(std::string& out, const CycleResult& c) {
  out += fmt::format("  {:<16} {:>5} {:>6} {:>5} {:>9} {:>9} {:>4} {:>8} {:>9} {:>8} {:>8} {:>8} {:>9} {:>10} {:>10}\n",
                     "phase", "count", "tokens", "mode", "gemm_us", "attn_us", "AR", "AR_KB", "AR_us", "AG_us",
                     "other_us", "launch_us", "overhd_us", "runtime_us", "total_us");
  for (const auto& p : c.phases) {
    const double kb = p.allreduce_count ? p.allreduce_bytes / p.allreduce_count / 1024.0 : 0.0;
    out += fmt::format(
        "  {:<16} {:>5} {:>6} {:>5} {:>9.1f} {:>9.1f} {:>4} {:>8.1f} {:>9.1f} {:>8.1f} {:>8.1f} {:>8.1f} {:>9.1f} "
        "{:>10.1f} {:>10.1f}\n",
        phase_name(p.kind), p.kind == PhaseKind::BaselineDecode ? std::string("-") : std::to_string(p.count), p.tokens,
        p.graph ? "graph" : "eager", p.gemm_us, p.attention_us, p.allreduce_count, kb, p.allreduce_us, p.allgather_us,
        p.other_us, p.launch_us, p.overhead_us, p.spec_overhead_us, p.us);
  }
}

// Under expert parallelism or DP attention: each phase's all-to-alls (MoE dispatch + combine) and
// its gathers/reduce-scatters, which the table's AG_us column holds with the logits all-gather.
void layout_lines(std::string& out, const CycleResult& c, const RunSpec& run) {
  const ParallelLayout& l = run.layout;
  out += fmt::format("  layout: tp {}{}{}{}{}\n", run.tp_size,
                     l.dp_attention ? fmt::format(", dp attention {} (attn tp {})", l.dp, l.attn_tp(run.tp_size)) : "",
                     l.ep > 1 ? fmt::format(", ep {}", l.ep) : "",
                     l.a2a != A2aBackend::None ? ", all-to-all " + a2a_backend_name(l.a2a) : "",
                     l.pp > 1 ? fmt::format(", pp {} (micro-batch {})", l.pp, l.micro_batch(run.batch_size)) : "");
  for (const auto& p : c.phases) {
    out += fmt::format(
        "    {:<16} all-to-all {:>4} ops {:>9.1f} KB {:>9.1f} us | all-gather+reduce-scatter {:>4} ops {:>9.1f} us",
        phase_name(p.kind), p.alltoall_count, p.alltoall_count ? p.alltoall_bytes / p.alltoall_count / 1024.0 : 0.0,
        p.alltoall_us, p.allgather_count, p.allgather_us);
    // pipeline stage hand-offs: the sends (their gathers are in the all-gather column)
    if (l.pp > 1)
      out += fmt::format(" | stage sends {:>3} ops {:>9.1f} KB {:>8.1f} us", p.p2p_count,
                         p.p2p_count ? p.p2p_bytes / p.p2p_count / 1024.0 : 0.0, p.p2p_us);
    out += "\n";
  }
}

}  // namespace

std::string report_text(const Scenario& s, const ScenarioResult& r) {
  std::string out;
  if (!s.title.empty()) out += s.title + "\n";
  out += "target:   " + model_line(s.target) + "\n";
  if (s.draft) out += "draft:    " + model_line(*s.draft) + "\n";
  const std::string nodes =
      s.hw.num_nodes > 1 ? fmt::format(" ({} nodes x {})", s.hw.num_nodes, s.hw.gpus_per_node()) : "";
  // RCCL on AMD GPUs is priced with NCCL's tuning model at the topology's path (a guess there)
  const std::string path =
      s.hw.gpu.amd ? fmt::format("RCCL priced as NCCL over path {}, a guess", path_type_name(s.hw.topo.nccl_path))
                   : fmt::format("NCCL path {}", path_type_name(s.hw.topo.nccl_path));
  out += fmt::format("hardware: {}x {}{} on {}{} ({}; {}), TP {}\n", s.hw.num_gpus, s.hw.gpu.name, nodes,
                     s.hw.topo.name, s.hardware_defaulted ? " (default: no --hardware given)" : "",
                     link_name(s.hw.topo.link), path, s.run.tp_size);
  const auto& run = s.run;
  out += fmt::format("settings: batch {}, context {}, cuda graphs {}{}\n", run.batch_size, run.context_len,
                     run.disable_cuda_graph      ? "off"
                     : run.graph_limit_in_tokens ? fmt::format("up to {} tokens a forward", run.cuda_graph_max_bs)
                                                 : fmt::format("up to bs {}", run.cuda_graph_max_bs),
                     [&] {
                       std::string e;
                       for (int i = 0; i < kNumPhaseKinds; ++i)
                         if (run.force_eager[i])
                           e += (e.empty() ? "" : ",") + std::string(phase_name(static_cast<PhaseKind>(i)));
                       std::string more = e.empty() ? std::string() : ", eager: " + e;
                       if (run.dtype) more += fmt::format(", weights {}", dtype_name(*run.dtype));
                       if (run.kv_cache_dtype != "auto") more += ", kv cache " + run.kv_cache_dtype;
                       return more;
                     }());
  if (run.speculative())
    out +=
        fmt::format("speculation: {} steps {}, topk {}, draft tokens {}; accept len {:.2f} ({})\n", algo_name(run.algo),
                    run.num_steps, run.topk, run.num_draft_tokens, r.accept_len, r.accept_source);
  else
    out += "speculation: off (plain decoding)\n";
  if (s.runtime) {
    out += fmt::format("runtime:  {} (its own work per phase in runtime_us; {})\n", s.runtime->name, s.runtime->file);
    // Which releases the terms were counted on: a run of another release is priced as these.
    if (!s.runtime->applies_to.empty()) out += fmt::format("          describes: {}\n", s.runtime->applies_to);
  } else
    out += "runtime:  none (forwards only, --runtime none)\n";
  anchors_text(out, r);
  for (const auto& n : s.notes) out += "note: " + n + "\n";
  if (!r.fitted_host_caution.empty()) out += "caution: " + r.fitted_host_caution + "\n";
  if (!s.pasted_stack.empty()) {  // each pasted flag with its class (models/stacks/)
    out += "pasted " + s.pasted_stack + " command:\n";
    for (const auto& f : s.pasted_flags)
      out += fmt::format("  {:<9} {}{}: {}\n", f.cls, f.flag, f.value.empty() ? "" : " " + f.value, f.what);
  }

  for (const auto& c : r.results) {
    out += fmt::format("\n== all-reduce: {}{}\n", c.backend.label(),
                       c.backend_detail.empty() ? "" : " (" + c.backend_detail + ")");
    if (!c.refused.empty()) {
      out += "  refused: " + c.refused + "\n";
      continue;
    }
    phase_table(out, c);
    if (run.layout.active()) layout_lines(out, c, run);
    if (run.speculative()) {
      out += fmt::format(
          "  speedup x{:.2f} against its own baseline ({:.1f} tok/s); x{:.2f} against the {} ({:.1f} tok/s)\n",
          c.speedup, c.baseline_tok_s, c.spec_tok_s / r.reference_baseline_tok_s,
          r.reference_measured  ? "measured baseline, NCCL"
          : r.reference_implied ? "implied baseline, NCCL"
                                : "NCCL baseline at these settings",
          r.reference_baseline_tok_s);
      out +=
          fmt::format("  cycle {:.0f} us | baseline step {:.0f} us | tok/s: baseline {:.1f}, {} {:.1f} (x{:.2f})\n",
                      c.cycle_us, c.baseline_step_us, c.baseline_tok_s, algo_name(run.algo), c.spec_tok_s, c.speedup);
      out += fmt::format("  break-even accept len {:.2f}{} | all-reduce share of the cycle {:.0f}%\n",
                         c.breakeven_accept_len,
                         c.breakeven_accept_len > run.num_steps + 1
                             ? fmt::format(" (> steps + 1 = {}: speculation cannot win)", run.num_steps + 1)
                             : "",
                         100 * c.allreduce_share);
    } else {
      out += fmt::format("  baseline step {:.0f} us | {:.1f} tok/s\n", c.baseline_step_us, c.baseline_tok_s);
    }
    out += bands_text(run_bands(s, r, c), std::string(algo_name(run.algo)));
  }

  if (r.results.size() > 1) {
    out += fmt::format("\n{:<22} {:>10} {:>14} {:>10} {:>8} {:>11} {:>9}\n", "all-reduce", "cycle_us", "spec_tok/s",
                       "base_tok/s", "speedup", "break-even", "AR_share");
    for (const auto& c : r.results) {
      if (!c.refused.empty()) {
        out += fmt::format("{:<22} refused\n", c.backend.label());
        continue;
      }
      if (run.speculative())
        out += fmt::format("{:<22} {:>10.0f} {:>14.1f} {:>10.1f} {:>8.2f} {:>11.2f} {:>8.0f}%\n", c.backend.label(),
                           c.cycle_us, c.spec_tok_s, c.baseline_tok_s, c.speedup, c.breakeven_accept_len,
                           100 * c.allreduce_share);
      else
        out += fmt::format("{:<22} {:>10} {:>14} {:>10.1f}\n", c.backend.label(), "-", "-", c.baseline_tok_s);
    }
    if (run.speculative()) {
      out += fmt::format("speedup against the {} ({:.1f} tok/s):",
                         r.reference_measured  ? "measured baseline, NCCL"
                         : r.reference_implied ? "implied baseline, NCCL"
                                               : "NCCL baseline at these settings",
                         r.reference_baseline_tok_s);
      for (const auto& c : r.results)
        if (c.refused.empty())
          out += fmt::format(" {} {:.2f}", c.backend.label(), c.spec_tok_s / r.reference_baseline_tok_s);
      out += "\n";
    }
  }
  return out;
}

}  // namespace specsim
