#include "scenario/resolve.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "scenario/fusion_support.h"
#include "scenario/load_scenario.h"
#include "scenario/memory_fit.h"
#include "scenario/paths.h"
#include "util/error.h"

namespace specsim {

std::string default_scenario_path() {
  return (std::filesystem::path(models_dir()) / "scenarios" / "default.json").string();
}

namespace {

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

SpecAlgo parse_algo(const std::string& s) {
  const std::string u = lower(s);
  if (u == "none") return SpecAlgo::None;
  if (u == "eagle") return SpecAlgo::Eagle;
  if (u == "eagle3") return SpecAlgo::Eagle3;
  if (u == "nextn") return SpecAlgo::NextN;
  throw InputError("unknown algorithm '" + s + "': use NONE, EAGLE, EAGLE3 or NEXTN", "--speculative-algorithm");
}

std::array<bool, kNumPhaseKinds> parse_eager(const std::string& s, const std::string& where) {
  std::array<bool, kNumPhaseKinds> e{};
  if (lower(s) == "none" || s.empty()) return e;
  for (const auto& p : split_list(s)) e[static_cast<int>(parse_phase(p, where))] = true;
  return e;
}

void apply_nccl_algo(NcclSettings& n, const std::string& s) {
  n.algo_enabled = {false, false};
  for (const auto& a : split_list(lower(s))) {
    if (a == "tree")
      n.algo_enabled[kTree] = true;
    else if (a == "ring")
      n.algo_enabled[kRing] = true;
    else
      throw InputError("unknown NCCL algorithm '" + a + "': the model knows ring and tree", "--nccl-algo");
  }
}

void apply_nccl_proto(NcclSettings& n, const std::string& s) {
  n.proto_enabled = {false, false, false};
  for (const auto& p : split_list(lower(s))) {
    if (p == "ll")
      n.proto_enabled[kLL] = true;
    else if (p == "ll128")
      n.proto_enabled[kLL128] = true;
    else if (p == "simple")
      n.proto_enabled[kSimple] = true;
    else
      throw InputError("unknown NCCL protocol '" + p + "': use LL, LL128 or Simple", "--nccl-proto");
  }
}

// SGLang's auto choice of (steps, topk, draft tokens): DeepSeek (3,1,4), others (5,4,8).
void sglang_draft_defaults(RunSpec& r, const ModelSpec& target) {
  if (target.arch == Arch::DeepseekV3)
    r.num_steps = 3, r.topk = 1, r.num_draft_tokens = 4;
  else
    r.num_steps = 5, r.topk = 4, r.num_draft_tokens = 8;
}

}  // namespace

namespace {
Scenario resolve_unfused(const RunArgs& a);
}

// The fused layer boundary (cost/allreduce_fusion.h): FlashInfer's where it runs, refused where
// it does not (as SGLang's JIT refuses it); custom:fused's caps said in a note.
Scenario resolve_scenario(const RunArgs& a) {
  Scenario s = resolve_unfused(a);
  if (a.enable_flashinfer_allreduce_fusion) {
    const std::string why = flashinfer_fusion_refusal(s.hw);
    if (!why.empty()) throw InputError(why, "--enable-flashinfer-allreduce-fusion");
    s.run.flashinfer_fusion = true;
    s.notes.push_back(
        "--enable-flashinfer-allreduce-fusion: every layer boundary (2 per layer) runs FlashInfer's fused "
        "all-reduce + residual add + RMSNorm in every --allreduce column; its price: "
        "models/kernels/allreduce_fusion.json");
  }
  for (const auto& c : s.run.allreduce)
    if (c.fused_norm) {
      s.notes.push_back(
          "custom:fused: the custom all-reduce fused with the residual add and RMSNorm at every layer boundary (2 per "
          "layer), priced as the all-reduce plus the fused kernel's extra time (models/kernels/allreduce_fusion.json, "
          "a "
          "guess until measured); boundaries over 1 MiB or hidden sizes over 16384 run the all-reduce and the norm "
          "apart");
      break;
    }
  return s;
}

namespace {
Scenario resolve_unfused(const RunArgs& a) {
  // Accepted by the command line, priced by the engine in a later step: refused until then.
  if (a.quantization) throw InputError("not modelled yet; drop it (the config's format is used)", "--quantization");
  if (a.kv_cache_dtype) throw InputError("not modelled yet; drop it (the KV cache is bf16)", "--kv-cache-dtype");
  if (a.disable_custom_all_reduce)
    throw InputError("not modelled yet; drop it and compare --allreduce nccl", "--disable-custom-all-reduce");
  if (!a.model_path) {  // the built-in scenario: a scenario file like any other
    RunArgs b = a;
    return load_scenario(default_scenario_path(), b);
  }
  Scenario s;
  const std::string target_cfg = resolve_model_config(*a.model_path, "--model-path");
  s.target = model_from_config(target_cfg, "--model-path");
  RunSpec base;
  base.tp_size = 1;
  sglang_draft_defaults(base, s.target);
  const bool have_draft = a.draft_model_path || !zoo_draft_config(target_cfg).empty();
  base.algo = have_draft ? SpecAlgo::Eagle3 : SpecAlgo::None;

  RunSpec run = base;
  run.measured_baseline_tok_s.reset(), run.measured_allreduce_us.reset(), run.measured_spec_tok_s.reset();
  run.accept_len.reset(), run.accept_rate.reset();
  if (a.algorithm) run.algo = parse_algo(*a.algorithm);
  if (a.tp_size) run.tp_size = *a.tp_size;
  run.num_gpus = a.num_gpus.value_or(run.tp_size);
  apply_draft_shape(run, a.topk, a.num_steps, a.num_draft_tokens);
  if (run.topk == 1 && a.num_steps && a.num_draft_tokens && run.num_draft_tokens != run.num_steps + 1) {
    // SGLang runs this, adjusting the draft tokens with a warning (server_args.py): mirrored, not refused.
    s.notes.push_back(
        "SGLang warns: speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 when "
        "speculative_eagle_topk == 1 (" +
        std::to_string(run.num_draft_tokens) + " -> " + std::to_string(run.num_steps + 1) + ")");
    run.num_draft_tokens = run.num_steps + 1;
  } else if (run.topk == 1 && a.num_draft_tokens && !a.num_steps) {
    s.notes.push_back("with --speculative-eagle-topk 1, " + std::to_string(run.num_draft_tokens) +
                      " draft tokens are a chain of " + std::to_string(run.num_steps) +
                      " steps: --speculative-num-steps set to " + std::to_string(run.num_steps) +
                      " (SGLang itself wants both flags)");
  }
  if (a.batch_size) run.batch_size = *a.batch_size;
  if (a.context_len) run.context_len = *a.context_len;
  if (a.cuda_graph_max_bs) run.cuda_graph_max_bs = *a.cuda_graph_max_bs;
  run.disable_cuda_graph = a.disable_cuda_graph;
  if (a.eager_phases) run.force_eager = parse_eager(*a.eager_phases, "--eager-phases");
  if (a.dtype) run.dtype = parse_dtype(*a.dtype, "--dtype");
  run.accept_len = a.accept_len;
  run.accept_rate = a.accept_rate;
  run.accept_source = a.accept_source.value_or("");
  run.mem_fraction_static = a.mem_fraction_static;
  if (a.nccl_p2p_level) run.nccl.p2p_level = *a.nccl_p2p_level;
  if (a.nccl_algo) apply_nccl_algo(run.nccl, *a.nccl_algo);
  if (a.nccl_proto) apply_nccl_proto(run.nccl, *a.nccl_proto);
  for (const auto& ar : a.allreduce) run.allreduce.push_back(parse_allreduce(ar));
  s.backends_defaulted = run.allreduce.empty();
  if (s.backends_defaulted) run.allreduce = {parse_allreduce("nccl"), parse_allreduce("custom")};
  base.allreduce = run.allreduce;
  validate_run(run);

  const std::string hw_spec = a.hardware.value_or("h200:nvswitch");
  if (!a.hardware) s.notes.push_back("no --hardware given: assuming h200:nvswitch");
  s.hw = load_hardware(hw_spec, run.num_gpus);
  if (run.num_gpus > s.hw.topo.max_gpus)
    throw InputError(std::to_string(run.num_gpus) + " GPUs do not fit " + s.hw.topo.name + " (at most " +
                         std::to_string(s.hw.topo.max_gpus) + ")",
                     a.num_gpus ? "--num-gpus" : "--tp-size");

  // The draft is needed by the run, or by the built-in measured run it projects from.
  if (run.speculative()) {
    std::string draft_cfg;
    if (a.draft_model_path)
      draft_cfg = resolve_model_config(*a.draft_model_path, "--speculative-draft-model-path");
    else
      draft_cfg = zoo_draft_config(target_cfg, run.algo == SpecAlgo::Eagle || run.algo == SpecAlgo::NextN);
    if (draft_cfg.empty())
      throw InputError(
          "speculation needs an EAGLE-3 draft: give --speculative-draft-model-path, or "
          "--speculative-algorithm NONE",
          "--speculative-draft-model-path");
    s.draft = model_from_config(draft_cfg, "--speculative-draft-model-path");
  }

  if (s.target.max_position > 0 && run.context_len > s.target.max_position)
    throw InputError(fmt::format("{} tokens of context exceed {}'s max_position_embeddings ({})", run.context_len,
                                 s.target.name, s.target.max_position),
                     "--context-len");
  require_fit(memory_fit(s.target, s.draft ? &*s.draft : nullptr, s.hw, run, run.mem_fraction_static), s.target.name,
              s.hw, run);

  // Each set of measurements keeps the settings and box it was taken at (anchors/anchors.h).
  if (a.measured_baseline_tok_s || a.measured_allreduce_us || a.measured_spec_tok_s) {
    MeasuredRun m;
    m.origin = "command line";
    m.run = run;
    m.run.measured_baseline_tok_s = a.measured_baseline_tok_s;
    m.run.measured_allreduce_us = a.measured_allreduce_us;
    m.run.measured_spec_tok_s = a.measured_spec_tok_s;
    m.hw = s.hw;
    m.baseline_source = a.measured_baseline_source.value_or("--measured-baseline-tok-s");
    m.allreduce_source = a.measured_allreduce_source.value_or("--measured-allreduce-us");
    m.spec_source = "--measured-spec-tok-s";
    validate_run(m.run);
    s.measured.push_back(std::move(m));
  }
  const std::string rt = a.runtime.value_or("sglang");
  if (rt != "none") s.runtime = load_runtime_profile(rt, "--runtime");
  s.run = run;
  return s;
}

}  // namespace

}  // namespace specsim
