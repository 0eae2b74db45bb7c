#include "scenario/resolve.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "scenario/draft_acceptance.h"
#include "scenario/draft_stand_in.h"
#include "scenario/fusion_support.h"
#include "scenario/load_scenario.h"
#include "scenario/memory_fit.h"
#include "scenario/paths.h"
#include "scenario/runtime_profile.h"
#include "scenario/sglang_attention.h"
#include "scenario/sglang_auto_draft.h"
#include "scenario/sglang_spec_worker.h"
#include "scenario/vllm_cmdline.h"
#include "util/error.h"
#include "util/text.h"

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

SpecAlgo parse_algo(const std::string& s) {
  const std::string u = ascii_lower(s);
  if (u == "none") return SpecAlgo::None;
  if (u == "eagle") return SpecAlgo::Eagle;
  if (u == "eagle3") return SpecAlgo::Eagle3;
  if (u == "nextn") return SpecAlgo::NextN;
  throw InputError("unknown algorithm '" + s + "': use NONE, EAGLE, EAGLE3 or NEXTN", "--speculative-algorithm");
}

std::array<bool, kNumPhaseKinds> parse_eager(const std::string& s, const std::string& where) {
  std::array<bool, kNumPhaseKinds> e{};
  if (ascii_lower(s) == "none" || s.empty()) return e;
  for (const auto& p : split_list(s)) e[static_cast<int>(parse_phase(p, where))] = true;
  return e;
}

void apply_nccl_algo(NcclSettings& n, const std::string& s) {
  n.algo_enabled = {false, false};
  for (const auto& a : split_list(ascii_lower(s))) {
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
  for (const auto& p : split_list(ascii_lower(s))) {
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

// SGLang's own choice of (steps, topk, draft tokens) for this target in the run's release.
void sglang_draft_defaults(RunSpec& r, const ModelSpec& target, const std::string& release) {
  const AutoDraftShape d = sglang_auto_draft_shape(target.architecture, release);
  r.num_steps = d.steps, r.topk = d.topk, r.num_draft_tokens = d.draft_tokens;
}

// SGLang's --quantization as a weight format: the checkpoint's own (a quantized config must match
// it, as SGLang checks), or fp8 quantized online from a 16-bit checkpoint.
std::optional<DType> quantization_dtype(const std::string& q, const ModelSpec& target, std::optional<DType> run_dtype,
                                        std::vector<std::string>& notes) {
  const std::string at = "--quantization";
  DType want;
  if (q == "fp8" || q == "w8a8_fp8")
    want = DType::FP8;
  else if (q == "mxfp4")
    want = DType::MXFP4;
  else if (q == "modelopt_fp4" || q == "nvfp4")
    want = DType::NVFP4;
  else if (q == "compressed-tensors") {
    if (target.quant_format.rfind("compressed-tensors", 0) != 0)
      throw InputError(target.name + "'s config holds no compressed-tensors quantization_config", at);
    return std::nullopt;  // the checkpoint's format
  } else if (q == "w4a16" || q == "int4" || q == "moe_wna16")
    want = DType::INT4;
  else
    throw InputError("not modelled: --quantization " + q +
                         " changes the weight format; modelled are fp8, w8a8_fp8, mxfp4, modelopt_fp4, "
                         "compressed-tensors and w4a16 (int4)",
                     at);
  // a pasted quantized release (DeepSeek-R1-FP4) already set the weights to this format
  if (run_dtype && *run_dtype == want) return std::nullopt;
  if (!target.quant_format.empty()) {
    if (target.weight_dtype != want && target.experts_dtype() != want)
      throw InputError(fmt::format("{}'s checkpoint is {}, not {}: SGLang refuses a --quantization that differs from "
                                   "the config's; drop the flag",
                                   target.name, target.quant_format, q),
                       at);
    return std::nullopt;
  }
  if (want != DType::FP8)
    throw InputError(fmt::format("{} needs a checkpoint in that format ({}'s config is {}); only fp8 is quantized "
                                 "online from 16-bit weights",
                                 q, target.name, dtype_name(target.weight_dtype)),
                     at);
  notes.push_back("--quantization fp8 on 16-bit weights: quantized online to fp8 (per-tensor), as SGLang does");
  return DType::FP8;
}

// The stack whose own all-reduce the user runs: vLLM under --runtime vllm, SGLang otherwise.
std::string stack_backend(const RunArgs& a) { return a.runtime && is_vllm_runtime(*a.runtime) ? "vllm" : "sglang"; }

// The formats and the stack's all-reduce switch, applied to a built scenario (flags or file).
void apply_stack_flags(Scenario& s, const RunArgs& a) {
  if (a.quantization) {
    if (auto d = quantization_dtype(*a.quantization, s.target, s.run.dtype, s.notes)) s.run.dtype = d;
    s.run.quantization = *a.quantization;
  }
  if (a.kv_cache_dtype) {
    s.run.kv_cache_bytes = kv_cache_bytes(*a.kv_cache_dtype, "--kv-cache-dtype");
    s.run.kv_cache_dtype = *a.kv_cache_dtype;
  }
  if (a.disable_custom_all_reduce) {
    bool any = false;
    for (auto& c : s.run.allreduce)
      if (c.kind_name() == "sglang" || c.kind_name() == "vllm") c.arg = "disable-custom", any = true;
    if (!any)
      s.notes.push_back(
          "--disable-custom-all-reduce: the stack's own all-reduce is off, so it runs NCCL: the nccl "
          "row (--allreduce " +
          stack_backend(a) + " prices the stack as configured)");
  }
}

// SGLang's --cuda-graph-bs (cuda_graph_runner.py, get_batch_sizes_to_capture, v0.5.2): the sizes
// up to cuda_graph_max_bs, topped up in steps of 16 to it; a batch up to the largest runs from a
// graph (padded to the next size), a larger one eagerly.
void apply_graph_sizes(RunSpec& run, const std::vector<int>& sizes, std::vector<std::string>& notes) {
  std::vector<int> capture;
  for (int b : sizes) {
    if (b < 1) throw InputError(fmt::format("batch size {} is below 1", b), "--cuda-graph-bs");
    if (b <= run.cuda_graph_max_bs) capture.push_back(b);
  }
  if (capture.empty())
    throw InputError(
        fmt::format("every size is above cuda-graph-max-bs {}: SGLang captures no graph", run.cuda_graph_max_bs),
        "--cuda-graph-bs");
  int most = *std::max_element(capture.begin(), capture.end());
  for (int b = most; b <= run.cuda_graph_max_bs; b += 16) most = b;
  notes.push_back(
      fmt::format("CUDA graphs at the sizes of --cuda-graph-bs up to {} (SGLang tops them up to "
                  "cuda-graph-max-bs {} in steps of 16): batches up to {} run from a graph",
                  most, run.cuda_graph_max_bs, most));
  run.cuda_graph_max_bs = most;
}

// What the layout changes beyond the plan: DeepEP's needs and its normal kernels' eager run.
void apply_layout_effects(Scenario& s) {
  const ParallelLayout& l = s.run.layout;
  if (!l.active()) return;
  if (l.a2a == A2aBackend::DeepEP && (s.hw.topo.link != LinkKind::NVLink || !s.hw.gpu.p2p))
    throw InputError("DeepEP needs NVLink peer access between every pair of GPUs; " + s.hw.topo.name +
                         " has none: use --moe-a2a-backend nccl or none",
                     "--moe-a2a-backend");
  if (l.a2a == A2aBackend::DeepEP && !l.low_latency() && !s.run.disable_cuda_graph) {
    // SGLang v0.5.2 server_args.py disables CUDA graphs with deepep_mode normal (its dispatch waits
    // on the host for the received token counts).
    s.run.disable_cuda_graph = true;
    s.notes.push_back("--deepep-mode normal: CUDA graphs off, every phase eager, as SGLang sets");
  }
  std::string what = fmt::format("parallel layout: tp {}", s.run.tp_size);
  if (l.pp > 1) {
    // The stack's split rule follows the runtime costed (vLLM's, else SGLang's).
    s.run.layout.pp_split = s.runtime && s.runtime->name == "vllm" ? PpSplitRule::VLLM : PpSplitRule::SGLang;
    const std::vector<int> st = pp_stage_layers(s.target.layers, l.pp, l.pp_split);
    what += fmt::format(
        " x pp {} stages ({} GPUs; target layers {} by {}'s rule; hidden states sent between stages; "
        "batch {} as {} micro-batch(es) of up to {})",
        l.pp, s.run.tp_size * l.pp, fmt::join(st, "/"), l.pp_split == PpSplitRule::VLLM ? "vLLM" : "SGLang",
        s.run.batch_size, std::min(l.pp, l.rank_batch(s.run.batch_size)), l.micro_batch(s.run.batch_size));
    if (s.run.num_gpus != s.run.tp_size * l.pp)
      throw InputError(fmt::format("{} GPUs for tp {} x pp {}: pipeline stages need tp x pp = {} GPUs", s.run.num_gpus,
                                   s.run.tp_size, l.pp, s.run.tp_size * l.pp),
                       "--num-gpus");
    if (s.run.speculative())
      s.notes.push_back(
          "SGLang v0.5.2 refuses speculative decoding with --pp-size > 1 (check_server_args); the cycle is priced as "
          "vLLM v0.11 runs it: the target's stages in sequence, the draft whole on the last stage");
  }
  if (l.dp_attention)
    what += fmt::format(", DP attention over {} ranks ({} GPU(s) each, batch {} per rank)", l.dp,
                        l.attn_tp(s.run.tp_size), l.rank_batch(s.run.batch_size));
  if (l.ep > 1) what += fmt::format(", experts over ep {}", l.ep);
  if (l.a2a != A2aBackend::None)
    what += ", MoE tokens by all-to-all (" + a2a_backend_name(l.a2a) +
            (l.a2a == A2aBackend::DeepEP ? " " + std::string(l.low_latency() ? "low_latency" : "normal") : "") + ")";
  if (l.ep_imbalance != 1.0) what += fmt::format(", ep imbalance {} (busiest rank / mean)", l.ep_imbalance);
  s.notes.push_back(what);
}

}  // namespace

namespace {

// " (it holds MODEL/DRAFT, ...: their algorithms)": the drafts the zoo holds for a target, for a
// refusal that names another algorithm's; "" when none.
std::string held_drafts(const std::string& target_cfg) {
  std::vector<std::string> held;
  const std::string model = std::filesystem::path(target_cfg).parent_path().filename().string();
  for (const auto& n : zoo_names())
    if (n.rfind(model + "/", 0) == 0) held.push_back(n);
  if (held.empty()) return "";
  std::string l;
  for (const auto& h : held) l += (l.empty() ? "" : ", ") + h;
  return " (it holds " + l + ": nextn runs under EAGLE or NEXTN, eagle1 under EAGLE, eagle3 under EAGLE3)";
}
Scenario resolve_unfused(const RunArgs& a);
}  // namespace

// What a note adds where the run's KV cache is narrower than the one FA3 was measured over.
std::string fa3_narrow_cache_note(double kv_cache_bytes) {
  if (kv_cache_bytes >= fa3_measured_kv_bytes()) return "";
  return fmt::format(
      " (assumption: over this run's {:g}-byte KV cache, the measured {:g}-byte call with the cache's own bytes; "
      "FA3's fp8-cache path was not measured)",
      kv_cache_bytes, fa3_measured_kv_bytes());
}

// The fused layer boundary (cost/allreduce_fusion.h): FlashInfer's where it runs, refused where
// it does not (as SGLang's JIT refuses it); custom:fused's caps said in a note.
Scenario resolve_scenario(const RunArgs& a) {
  Scenario s = resolve_unfused(a);
  apply_layout_effects(s);
  // SGLang's attention path, for the run and for each measurement at its own box
  // (scenario/sglang_attention.h); off SGLang none of it applies.
  const bool sglang = s.runtime && s.runtime->name == "sglang";
  if (sglang) {
    decide_sglang_attention(s.run, s.target, s.hw);
    for (auto& m : s.measured) decide_sglang_attention(m.run, s.target, m.hw);
  }
  if (sglang && s.run.speculative() && s.run.topk > 1 && !s.run.attention_backend)
    s.notes.push_back(std::string("a draft tree's attention runs ") +
                      (s.run.fa3_tree_attention ? "on FlashAttention-3 in two passes and a merge"
                       : s.run.custom_mask_tree ? "on FlashInfer in one pass with the tree as a custom mask"
                                                : "in one pass") +
                      ", SGLang's default for this model's trees on this GPU; --attention-backend fa3|flashinfer "
                      "picks one (docs/model.md#tree-attention)");
  if (sglang && s.run.speculative() && s.run.verify_custom_mask())
    s.notes.push_back(fmt::format(
        "the verify's attention reads its mask as FlashInfer's custom mask: priced as FlashInfer's kernels measured "
        "on an H200 (models/kernels/flashinfer_attention.json; a GPU replay's prediction: {:g}x a causal pass, "
        "models/kernels/flashinfer_custom_mask.json), and FlashInfer plans it on the host every cycle "
        "(models/runtime/sglang.json)",
        flashinfer_custom_mask_factor()));
  if (sglang && s.run.fa3_attention && s.target.has_mla) {
    const MlaDims& mla = s.target.mla;
    // an EAGLE draft of an MLA target is an MHA layer on the same backend
    const bool mha_draft = s.run.speculative() && s.draft && !s.draft->has_mla;
    if (fa3_mla_price_covers(mla.qk_rope_dim, mla.kv_lora_rank, s.run.kv_cache_bytes))
      s.notes.push_back(std::string("MLA attention on SGLang's FA3 backend is priced as FA3's absorbed MLA call "
                                    "measured on an H200 (models/kernels/fa3_attention.json, fa3_mla)") +
                        (mha_draft ? ", the draft's MHA attention as FA3's paged-KV kernel" : "") +
                        fa3_narrow_cache_note(s.run.kv_cache_bytes) +
                        "; a GPU replay's prediction prices the replay's own kernel");
    else
      s.notes.push_back(fmt::format(
          "MLA attention on SGLang's FA3 backend stays on the GPU profile's terms: FA3's MLA call was measured at "
          "another shape or KV-cache type than this run's (rope {}, latent {}, {:g} KV bytes an element; "
          "models/kernels/fa3_attention.json)",
          mla.qk_rope_dim, mla.kv_lora_rank, s.run.kv_cache_bytes));
  } else if (sglang && s.run.fa3_attention) {
    const std::string where = s.run.speculative() && !s.run.verify_custom_mask() ? "every phase" : "plain decode";
    if (fa3_price_covers(s.target.head_dim, s.run.kv_cache_bytes))
      s.notes.push_back("attention on SGLang's FA3 backend (" + where +
                        ") is priced as FA3's paged-KV kernel measured on an H200 (models/kernels/fa3_attention.json)" +
                        fa3_narrow_cache_note(s.run.kv_cache_bytes) +
                        "; a GPU replay's prediction prices the replay's own kernel");
    else
      s.notes.push_back(fmt::format(
          "attention on SGLang's FA3 backend ({}) stays on the GPU profile's terms: FA3 was measured at another head "
          "dim or KV-cache type than this run's (head dim {}, {:g} KV bytes an element; "
          "models/kernels/fa3_attention.json)",
          where, s.target.head_dim, s.run.kv_cache_bytes));
  }
  decide_flashinfer_fusion(a, sglang, s);
  for (const auto& c : s.run.allreduce)
    if (c.fused_norm) {
      s.notes.push_back(
          "custom:fused: the custom all-reduce fused with the residual add and RMSNorm at every layer boundary (2 per "
          "layer), priced as the all-reduce plus the fused kernel's extra time (models/kernels/allreduce_fusion.json, "
          "measured on 8 virtual ranks of one H200); boundaries over 1 MiB or hidden sizes over 16384 run the "
          "all-reduce and the norm apart");
      break;
    }
  // A scenario file resolves its own scenario inside this one: say each note once.
  std::vector<std::string> said;
  for (auto& n : s.notes)
    if (std::find(said.begin(), said.end(), n) == said.end()) said.push_back(std::move(n));
  s.notes = std::move(said);
  return s;
}

namespace {
// A model with no draft in the zoo, and no draft or algorithm given, decodes plainly: a speculative
// flag given to it would be ignored, so it is refused, saying why speculation is off. (A run told
// --speculative-algorithm NONE, as a pasted plain command or a saved plain scenario says, is noted.)
void refuse_speculative_flags(const RunArgs& a, const std::string& target, bool nextn_draft) {
  std::string flag;
  if (a.measured_spec_tok_s)
    flag = "--measured-spec-tok-s";
  else if (a.accept_len)
    flag = "--accept-len";
  else if (a.accept_rate)
    flag = "--accept-rate";
  else if (a.num_steps)
    flag = "--speculative-num-steps";
  else if (a.topk)
    flag = "--speculative-eagle-topk";
  else if (a.num_draft_tokens)
    flag = "--speculative-num-draft-tokens";
  if (flag.empty()) return;
  if (nextn_draft)
    throw InputError(flag + " needs speculation: " + target +
                         "'s zoo draft is its NextN layer, which runs only when asked: give --speculative-algorithm "
                         "NEXTN, or drop " +
                         flag,
                     flag);
  throw InputError(flag + " needs speculation, and the zoo has no draft for " + target +
                       ", so the run would be plain decoding: give --speculative-draft-model-path (the draft's "
                       "config.json) and --speculative-algorithm, or drop " +
                       flag,
                   flag);
}

Scenario resolve_unfused(const RunArgs& a) {
  if (!a.model_path) {  // the built-in scenario: a scenario file like any other
    RunArgs b = a;
    Scenario s = load_scenario(default_scenario_path(), b);
    apply_stack_flags(s, a);
    require_fit(memory_fit(s.target, s.draft ? &*s.draft : nullptr, s.hw, s.run, s.run.mem_fraction_static),
                s.target.name, s.hw, s.run);
    return s;
  }
  Scenario s;
  const std::string target_cfg = resolve_model_config(*a.model_path, "--model-path");
  s.target = model_from_config(target_cfg, "--model-path");
  RunSpec base;
  base.tp_size = 1;
  const std::string release = a.sglang_release ? normalized_sglang_release(*a.sglang_release) : "";
  sglang_draft_defaults(base, s.target, release);
  const bool have_draft = a.draft_model_path || a.remote_draft || !zoo_draft_config(target_cfg).empty();
  base.algo = have_draft ? SpecAlgo::Eagle3 : SpecAlgo::None;

  RunSpec run = base;
  run.measured_baseline_tok_s.reset(), run.measured_allreduce_us.reset(), run.measured_spec_tok_s.reset();
  run.accept_len.reset(), run.accept_rate.reset();
  if (a.algorithm) run.algo = parse_algo(*a.algorithm);
  const bool nextn_draft = !have_draft && !zoo_draft_config(target_cfg, true).empty();
  if (!run.speculative() && !a.algorithm) refuse_speculative_flags(a, s.target.name, nextn_draft);
  if (!run.speculative() && a.algorithm && (a.accept_len || a.accept_rate))
    s.notes.push_back(std::string(a.accept_len ? "--accept-len" : "--accept-rate") +
                      " is not used: the run decodes plainly (speculative algorithm " + *a.algorithm + ")");
  if (!run.speculative() && a.algorithm && (a.num_steps || a.topk || a.num_draft_tokens))
    s.notes.push_back(std::string(a.num_steps ? "--speculative-num-steps"
                                  : a.topk    ? "--speculative-eagle-topk"
                                              : "--speculative-num-draft-tokens") +
                      " is not used: the run decodes plainly (speculative algorithm " + *a.algorithm + ")");
  if (!a.algorithm && !have_draft)
    s.notes.push_back(nextn_draft ? s.target.name +
                                        " decodes plainly unless asked: --speculative-algorithm NEXTN runs its zoo "
                                        "NextN draft"
                                  : "the zoo has no draft for " + s.target.name +
                                        ": plain decoding only (give --speculative-draft-model-path and "
                                        "--speculative-algorithm to price speculation)");
  if (a.tp_size) run.tp_size = *a.tp_size;
  // pipeline parallelism: pp stages of tp GPUs each
  run.num_gpus = a.num_gpus.value_or(run.tp_size * a.parallel.pp_size.value_or(1));
  if (a.nnodes) run.nnodes = *a.nnodes;
  apply_draft_shape(run, a.topk, a.num_steps, a.num_draft_tokens);
  if (run.speculative() && !(a.topk && a.num_steps && a.num_draft_tokens)) {
    const bool stated = a.sglang_release && !a.sglang_release_dated,
               none = !a.topk && !a.num_steps && !a.num_draft_tokens;
    if (std::string n = sglang_auto_draft_note(s.target.architecture, release, stated, none); !n.empty())
      s.notes.push_back(n);
  }
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
  if (!a.cuda_graph_bs.empty()) apply_graph_sizes(run, a.cuda_graph_bs, s.notes);
  run.disable_cuda_graph = a.disable_cuda_graph;
  run.disable_overlap_schedule = a.disable_overlap_schedule;
  run.flashinfer_fusion_enforced_off = a.enforce_disable_flashinfer_allreduce_fusion;
  run.sglang_release = release;
  run.attention_backend = a.attention_backend;
  if (run.attention_backend && *run.attention_backend != "fa3" && *run.attention_backend != "flashinfer")
    throw InputError("'" + *run.attention_backend +
                         "': specsim prices fa3 and flashinfer; give one of them, or leave it out for SGLang's default",
                     "--attention-backend");
  if (a.eager_phases) run.force_eager = parse_eager(*a.eager_phases, "--eager-phases");
  if (a.dtype) run.dtype = parse_dtype(*a.dtype, "--dtype");
  run.accept_len = a.accept_len;
  run.accept_rate = a.accept_rate;
  run.accept_source = a.accept_source.value_or("");
  run.accept_len_shape = a.accept_len_shape;
  run.mem_fraction_static = a.mem_fraction_static;
  run.max_running_requests = a.max_running_requests;
  run.max_context_len = a.max_context_len, run.max_total_tokens = a.max_total_tokens;
  if (a.nccl_p2p_level) run.nccl.p2p_level = *a.nccl_p2p_level;
  if (a.nccl_algo) apply_nccl_algo(run.nccl, *a.nccl_algo);
  if (a.nccl_proto) apply_nccl_proto(run.nccl, *a.nccl_proto);
  for (const auto& ar : a.allreduce) run.allreduce.push_back(parse_allreduce(ar));
  s.backends_defaulted = run.allreduce.empty();
  // NCCL beside this project's kernel; the stack's own all-reduce on request (--allreduce sglang|vllm).
  if (s.backends_defaulted) run.allreduce = {parse_allreduce("nccl"), parse_allreduce("custom")};
  base.allreduce = run.allreduce;
  validate_run(run);
  run.layout = parse_layout(a.parallel, run.tp_size, s.target.has_moe ? s.target.moe.routed_experts : 0, s.notes);
  if (is_vllm_runtime(a.runtime.value_or(""))) {
    run.layout.pp_split = PpSplitRule::VLLM;
    // vLLM captures graphs by a forward's tokens, up to its default largest size unless given
    run.graph_limit_in_tokens = true;
    if (!a.cuda_graph_max_bs)
      run.cuda_graph_max_bs =
          a.vllm_max_num_seqs ? std::min(2 * *a.vllm_max_num_seqs, kVllmMaxCaptureTokens) : kVllmMaxCaptureTokens;
    // its own default share of GPU memory, read as the memory-fit fraction as a given
    // --gpu-memory-utilization is (SGLang's default would be another stack's)
    if (!run.mem_fraction_static) {
      run.mem_fraction_static = kVllmGpuMemoryUtilization;
      s.notes.push_back(fmt::format("vLLM's default --gpu-memory-utilization {:g} is the memory-fit fraction",
                                    kVllmGpuMemoryUtilization));
    }
  }

  const std::string hw_spec = a.hardware.value_or("h200:nvswitch");
  s.hardware_defaulted = !a.hardware;
  s.hw = load_hardware(hw_spec, run.num_gpus);
  for (const auto& n : s.hw.assumed) s.notes.push_back(n);
  set_nodes(s.hw, run.nnodes, a.num_gpus ? "--num-gpus" : "--tp-size");
  if (s.backends_defaulted && s.hw.gpu.amd) {
    // This project's kernel is CUDA-only: on AMD GPUs RCCL stands beside the stack's own ROCm all-reduce.
    run.allreduce = base.allreduce = {parse_allreduce("nccl"), parse_allreduce("sglang")};
    s.notes.push_back("on " + s.hw.gpu.name +
                      " (ROCm) the default comparison is RCCL (--allreduce nccl) beside SGLang's ROCm custom "
                      "all-reduce (--allreduce sglang); this project's CUDA kernel does not run there");
  }

  // The draft is needed by the run, or by the built-in measured run it projects from.
  if (run.speculative()) {
    std::string draft_cfg;
    // a remote draft whose name names one of the target's zoo drafts (its NextN layer, eagle3-angelslim)
    const DraftStandIn named =
        a.remote_draft && !a.draft_model_path ? named_zoo_draft(target_cfg, *a.remote_draft) : DraftStandIn{};
    if (a.draft_model_path) {
      draft_cfg = resolve_model_config(*a.draft_model_path, "--speculative-draft-model-path");
    } else if (!named.config.empty()) {
      draft_cfg = named.config;
      s.notes.push_back("assumption: " + named.note);
    } else if (run.algo == SpecAlgo::Eagle && !zoo_has_nextn(target_cfg) && !zoo_eagle1_config(target_cfg).empty()) {
      draft_cfg = zoo_eagle1_config(target_cfg);  // EAGLE runs an EAGLE(-2) head, not an EAGLE-3 one
    } else {
      draft_cfg = zoo_draft_config(target_cfg, run.algo == SpecAlgo::Eagle || run.algo == SpecAlgo::NextN);
      // none of its own: a same-architecture zoo model's (Llama-3.3-70B runs Llama-3.1-70B's shapes)
      if (draft_cfg.empty() && run.algo != SpecAlgo::NextN) {
        const DraftStandIn same = same_architecture_draft(target_cfg);
        if (!same.config.empty()) draft_cfg = same.config, s.notes.push_back("assumption: " + same.note);
      }
    }
    if (run.algo == SpecAlgo::Eagle && !a.draft_model_path && !zoo_has_nextn(target_cfg) &&
        zoo_eagle1_config(target_cfg).empty() && !draft_cfg.empty())
      s.notes.push_back("assumption: the zoo holds no EAGLE (EAGLE-2) draft for " + s.target.name +
                        ": its EAGLE-3 draft stands in for the EAGLE head (give --speculative-draft-model-path with "
                        "the draft's config.json to price its own)");
    // NEXTN drafts with the target's own multi-token-prediction layer: a target without one cannot
    // run it (an EAGLE-3 draft in its place would be another algorithm, priced under this one's name).
    if (run.algo == SpecAlgo::NextN && !a.draft_model_path && !a.remote_draft && !zoo_has_nextn(target_cfg))
      throw InputError("NEXTN drafts with the target's own multi-token-prediction layer, and the zoo holds none for " +
                           s.target.name + ": use --speculative-algorithm EAGLE3 " +
                           (draft_cfg.empty() ? "with --speculative-draft-model-path (the zoo has no draft for it)"
                                              : "(its zoo draft)") +
                           ", or give the layer's config.json as --speculative-draft-model-path",
                       "--speculative-algorithm");
    if (a.remote_draft && !a.draft_model_path && named.config.empty()) {
      // The id cannot be read here: the zoo's draft of the target stands in for its architecture,
      // said as an assumption; without one the id is refused.
      if (draft_cfg.empty())
        throw InputError("'" + *a.remote_draft + "' is a remote draft specsim does not hold and the zoo has no " +
                             std::string(algo_name(run.algo)) + " draft for " + s.target.name +
                             held_drafts(target_cfg) + ": give the path of its config.json (downloaded)",
                         "--speculative-draft-model-path");
      s.notes.push_back("assumption: the draft " + *a.remote_draft +
                        " is not held here; its architecture is taken as " + zoo_entry_name(draft_cfg) +
                        "'s (give its config.json as --speculative-draft-model-path to use its own)");
    }
    if (draft_cfg.empty())
      throw InputError("speculation needs a draft, and the zoo has no " + std::string(algo_name(run.algo)) +
                           " draft for " + s.target.name + held_drafts(target_cfg) +
                           ": give --speculative-draft-model-path, or --speculative-algorithm NONE",
                       "--speculative-draft-model-path");
    s.draft = model_from_config(draft_cfg, "--speculative-draft-model-path");
    run.accept_decay = draft_accept_decay(draft_cfg);  // how its acceptance falls with depth, if known
  }

  s.run = run;
  apply_stack_flags(s, a);
  run = s.run;
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
  std::string rt = a.runtime.value_or("sglang");
  // --sglang-release without --runtime: the speculative worker that release runs (a pasted command
  // chose its own, with its environment, in choose_sglang_spec_worker)
  if (!a.runtime) rt = sglang_release_runtime(run, s.notes).value_or(rt);
  if (is_vllm_runtime(rt) && (a.sglang_release || a.enforce_disable_flashinfer_allreduce_fusion))
    s.notes.push_back(
        std::string(a.sglang_release ? "--sglang-release" : "--enforce-disable-flashinfer-allreduce-fusion") +
        " is SGLang's: unused under the vLLM runtime");
  if (rt != "none") s.runtime = load_runtime_profile(rt, "--runtime");
  s.run = run;
  return s;
}

}  // namespace

}  // namespace specsim
