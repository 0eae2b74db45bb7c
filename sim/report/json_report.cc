#include <cmath>

#include "report/error_band.h"
#include "report/report.h"
#include "scenario/scenario_file.h"
#include "scenario/sglang_attention.h"

namespace specsim {
using nlohmann::json;

namespace {

json model_json(const ModelSpec& m) {
  return {{"name", m.name},
          {"architecture", m.architecture},
          {"source", m.source},
          {"hidden_size", m.hidden},
          {"num_layers", m.layers},
          {"num_attention_heads", m.heads},
          {"num_key_value_heads", m.kv_heads},
          {"vocab_size", m.is_draft() ? m.draft_vocab : m.vocab},
          {"moe", m.has_moe},
          {"mla", m.has_mla},
          {"weight_dtype", std::string(dtype_name(m.weight_dtype))},
          {"params_billion", m.param_count() / 1e9}};
}

json settings_json(const Scenario& s, const ScenarioResult& r) {
  const RunSpec& run = s.run;
  json eager = json::array();
  for (int i = 0; i < kNumPhaseKinds; ++i)
    if (run.force_eager[i]) eager.push_back(std::string(phase_name(static_cast<PhaseKind>(i))));
  json j = run_settings_json(run);
  j["eager_phases"] = eager;
  j["dtype"] = std::string(dtype_name(run.dtype.value_or(s.target.weight_dtype)));
  j["runtime"] = s.runtime ? json(s.runtime->name) : json(nullptr);
  j["runtime_profile"] = s.runtime ? json(s.runtime->file) : json(nullptr);  // vllm.json or vllm-0.10.json
  const bool sglang = s.runtime && s.runtime->name == "sglang";
  const std::string tree_backend = sglang ? sglang_tree_backend(run, s.target, s.hw) : "";
  j["tree_attention_backend"] = tree_backend.empty() ? json(nullptr) : json(tree_backend);
  j["verify_custom_mask"] = !sglang || !run.speculative() ? json(nullptr) : json(run.verify_custom_mask());
  j["runtime_applies_to"] = s.runtime && !s.runtime->applies_to.empty() ? json(s.runtime->applies_to) : json(nullptr);
  if (run.speculative()) {
    j["accept_len"] = r.accept_len;
    j["accept_len_source"] = r.accept_source;
    j["accept_rate"] = r.accept_rate >= 0 ? json(r.accept_rate) : json(nullptr);
  }
  json anchors = json::array();
  for (const auto& e : r.anchor_report.entries) {
    json t = {{"phase", std::string(phase_name(e.phase))},
              {"mode", e.graph ? "graph" : "eager"},
              {"batch_size", e.batch_size},
              {"backend", "nccl"},
              {"box", e.box}};
    json x = {{"kind", std::string(anchor_kind_name(e.kind))},
              {"origin", e.origin},
              {"source", e.source},
              {"measured", e.measured},
              {"unit", e.kind == AnchorKind::AllReduce ? "us" : "tok_per_s"},
              {"taken_at", t},
              {"model", e.model},
              {"used", e.used},
              {"applies", e.applies},
              {"does_not_apply", e.not_applies}};
    if (!e.conflict.empty()) x["conflict"] = e.conflict;
    if (!e.caution.empty()) x["caution"] = e.caution;
    if (e.kind == AnchorKind::AllReduce) {
      t["bytes"] = e.bytes;
      x["taken_at"] = t;
      x["extra_us_per_nccl_allreduce"] = e.derived;
    } else if (e.kind == AnchorKind::Baseline) {
      x["measured_step_us"] = e.batch_size * 1e6 / e.measured;
      x["overhead_us_per_target_forward"] = e.derived;
    } else if (e.kind == AnchorKind::Cycle) {
      t["speculative_num_steps"] = e.steps, t["speculative_eagle_topk"] = e.topk;
      t["speculative_num_draft_tokens"] = e.draft_tokens;
      t["accept_len"] = e.accept_len;
      x["taken_at"] = t;
      x["measured_cycle_us"] = e.model + e.derived;
      x["unexplained_us_per_cycle"] = e.derived;
      x["extra_us_per_draft_forward"] = e.step_extra_us;
      x["extra_us_per_draft_extend"] = e.extend_extra_us;
      x["extra_us_per_verify"] = e.verify_extra_us;
    } else {
      t["speculative_num_steps"] = e.steps, t["speculative_eagle_topk"] = e.topk;
      t["speculative_num_draft_tokens"] = e.draft_tokens;
      x["taken_at"] = t;
      x["implied_accept_len"] = e.derived;
      x["implied_accept_rate"] = e.accept_rate;
    }
    anchors.push_back(x);
  }
  j["anchors"] = anchors;
  return j;
}

// A pasted launch command: its stack and each flag with its class (null without one).
json pasted_command_json(const Scenario& s) {
  if (s.pasted_stack.empty()) return nullptr;
  json flags = json::array();
  for (const auto& f : s.pasted_flags)
    flags.push_back({{"flag", f.flag}, {"value", f.value}, {"class", f.cls}, {"what", f.what}});
  return {{"stack", s.pasted_stack}, {"flags", flags}};
}

}  // namespace

json phase_json(const PhaseTiming& t) {
  return {{"name", std::string(phase_name(t.kind))},
          {"count", t.count},
          {"tokens", t.tokens},
          {"mode", t.graph ? "graph" : "eager"},
          {"kernels", t.kernels},
          {"us", t.us},
          {"gemm_us", t.gemm_us},
          {"attention_us", t.attention_us},
          {"allreduce_us", t.allreduce_us},
          {"allreduce_count", t.allreduce_count},
          {"allreduce_bytes", t.allreduce_bytes},
          {"allgather_us", t.allgather_us},
          {"allgather_count", t.allgather_count},
          {"allgather_bytes", t.allgather_bytes},
          {"alltoall_us", t.alltoall_us},
          {"alltoall_count", t.alltoall_count},
          {"alltoall_bytes", t.alltoall_bytes},
          {"p2p_us", t.p2p_us},
          {"p2p_count", t.p2p_count},
          {"p2p_bytes", t.p2p_bytes},
          {"other_us", t.other_us},
          {"launch_us", t.launch_us},
          {"switch_us", t.switch_us},
          {"overhead_us", t.overhead_us},
          {"spec_overhead_us", t.spec_overhead_us},
          {"runtime_host_us", t.runtime_host_us},
          {"runtime_gpu_us", t.runtime_gpu_us}};
}

json report_json(const Scenario& s, const ScenarioResult& r) {
  json model = model_json(s.target);
  if (s.draft) model["draft"] = model_json(*s.draft);
  json scenarios = json::array();
  for (const auto& c : r.results) {
    json sc = {{"allreduce", c.backend.kind_name()}, {"label", c.backend.label()}, {"detail", c.backend_detail}};
    if (!c.refused.empty()) {
      sc["refused"] = c.refused;
      sc["baseline"] = nullptr;
      sc["spec"] = nullptr;
      sc["phases"] = json::array();
      scenarios.push_back(sc);
      continue;
    }
    if (c.backend.kind == AllReduceChoice::Kind::Fixed) sc["fixed_us"] = c.backend.fixed_us;
    const RunBands bands = run_bands(s, r, c);
    sc["baseline"] = {{"step_us", c.baseline_step_us},
                      {"tok_per_s", c.baseline_tok_s},
                      {"tok_per_s_band", band_json(bands.baseline, bands.baseline_measured, c.baseline_tok_s)}};
    if (s.run.speculative())
      sc["spec"] = {
          {"cycle_us", c.cycle_us},
          {"tok_per_s", c.spec_tok_s},
          {"tok_per_s_band", band_json(bands.spec, bands.spec_measured, c.spec_tok_s)},
          {"speedup_band", band_json(bands.speedup, bands.spec_measured && bands.baseline_measured, c.speedup)},
          {"accept_len", c.accept_len},
          {"speedup", c.speedup},
          {"speedup_vs_reference_baseline", c.spec_tok_s / r.reference_baseline_tok_s},
          {"breakeven_accept_len", c.breakeven_accept_len},
          {"allreduce_share", c.allreduce_share}};
    else
      sc["spec"] = nullptr;
    json phases = json::array();
    for (const auto& p : c.phases) phases.push_back(phase_json(p));
    sc["phases"] = phases;
    scenarios.push_back(sc);
  }
  return {{"specsim_version", kSpecsimVersion},
          {"title", s.title},
          {"model", model},
          {"hardware",
           {{"spec", s.hw.spec},
            {"gpu", s.hw.gpu.name},
            {"topology", s.hw.topo.name},
            {"num_gpus", s.hw.num_gpus},
            {"num_nodes", s.hw.num_nodes},
            {"link", s.hw.topo.link == LinkKind::NVLink ? "nvlink"
                     : s.hw.topo.link == LinkKind::XGMI ? "xgmi"
                                                        : "pcie"},
            {"nccl_path", std::string(path_type_name(s.hw.topo.nccl_path))},
            {"defaulted", s.hardware_defaulted}}},
          {"settings", settings_json(s, r)},
          {"reference_baseline",
           {{"tok_per_s", r.reference_baseline_tok_s},
            {"kind", r.reference_measured  ? "measured"
                     : r.reference_implied ? "implied"
                                           : "modelled"},
            {"what", "plain decoding with NCCL in every phase at these settings, anchored"}}},
          {"notes", s.notes},
          {"runtime_fitted",
           {{"share_of_cycle", r.fitted_host_share},
            {"terms", r.runtime.fitted_terms},
            {"sources", r.runtime.fitted_sources},
            {"caution", r.fitted_host_caution.empty() ? json(nullptr) : json(r.fitted_host_caution)}}},
          {"pasted_command", pasted_command_json(s)},
          {"scenarios", scenarios}};
}

}  // namespace specsim
