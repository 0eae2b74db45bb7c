#include "scenario/sglang_cmdline.h"

#include <algorithm>
#include <functional>
#include <map>

#include "scenario/command_values.h"
#include "scenario/stack_flag_table.h"
#include "util/error.h"
#include "util/text.h"

namespace specsim {

namespace {

const FlagAppliers& sglang_appliers() {
  static const FlagAppliers kApply = {
      {"--model-path", [](const PastedFlag& f, RunArgs& a, std::vector<std::string>& notes,
                          const std::string&) { set_pasted_model(a, f.last(), notes); }},
      {"--tensor-parallel-size",
       [](const PastedFlag& f, RunArgs& a, auto&, const std::string& at) { a.tp_size = command_int(f.last(), at); }},
      {"--pipeline-parallel-size", [](const PastedFlag& f, RunArgs& a, auto&,
                                      const std::string& at) { a.parallel.pp_size = command_int(f.last(), at); }},
      {"--nnodes",
       [](const PastedFlag& f, RunArgs& a, auto&, const std::string& at) { a.nnodes = command_int(f.last(), at); }},
      {"--speculative-algorithm",
       [](const PastedFlag& f, RunArgs& a, auto&, const std::string&) { a.algorithm = f.last(); }},
      {"--speculative-draft-model-path",
       [](const PastedFlag& f, RunArgs& a, auto&, const std::string& at) { set_pasted_draft(a, f.last(), at); }},
      {"--speculative-num-steps",
       [](const PastedFlag& f, RunArgs& a, auto&, const std::string& at) { a.num_steps = command_int(f.last(), at); }},
      {"--speculative-eagle-topk",
       [](const PastedFlag& f, RunArgs& a, auto&, const std::string& at) { a.topk = command_int(f.last(), at); }},
      {"--speculative-num-draft-tokens", [](const PastedFlag& f, RunArgs& a, auto&,
                                            const std::string& at) { a.num_draft_tokens = command_int(f.last(), at); }},
      {"--cuda-graph-max-bs", [](const PastedFlag& f, RunArgs& a, auto&,
                                 const std::string& at) { a.cuda_graph_max_bs = command_int(f.last(), at); }},
      {"--cuda-graph-bs",
       [](const PastedFlag& f, RunArgs& a, auto&, const std::string& at) {
         a.cuda_graph_bs.clear();
         for (const auto& v : f.values) a.cuda_graph_bs.push_back(command_int(v, at));
       }},
      {"--disable-cuda-graph",
       [](const PastedFlag&, RunArgs& a, auto&, const std::string&) { a.disable_cuda_graph = true; }},
      // v0.5.10 and later (args_from_sglang also applies it after every other flag)
      {"--enforce-disable-flashinfer-allreduce-fusion",
       [](const PastedFlag&, RunArgs& a, auto&, const std::string&) {
         a.enable_flashinfer_allreduce_fusion = false;
         a.enforce_disable_flashinfer_allreduce_fusion = true;  // also over SGLang's default
       }},
      // v0.5.14 and later; only its `disabled` value is modelled (sglang-v0.5.18-flag-values.csv)
      {"--cuda-graph-backend-decode",
       [](const PastedFlag&, RunArgs& a, auto&, const std::string&) { a.disable_cuda_graph = true; }},
      {"--disable-overlap-schedule",
       [](const PastedFlag&, RunArgs& a, auto&, const std::string&) { a.disable_overlap_schedule = true; }},
      {"--mem-fraction-static", [](const PastedFlag& f, RunArgs& a, auto&,
                                   const std::string& at) { a.mem_fraction_static = command_fraction(f.last(), at); }},
      {"--dtype",
       [](const PastedFlag& f, RunArgs& a, auto& notes, const std::string&) {
         if (f.last() == "auto") return;
         if (keeps_quantized_weights(a, f.last(), notes)) return;
         a.dtype = f.last();
       }},
      {"--quantization", [](const PastedFlag& f, RunArgs& a, auto&, const std::string&) { a.quantization = f.last(); }},
      {"--kv-cache-dtype",
       [](const PastedFlag& f, RunArgs& a, auto&, const std::string&) {
         if (f.last() != "auto") a.kv_cache_dtype = f.last();
       }},
      {"--disable-custom-all-reduce",
       [](const PastedFlag&, RunArgs& a, auto&, const std::string&) { a.disable_custom_all_reduce = true; }},
      {"--enable-flashinfer-allreduce-fusion",
       [](const PastedFlag&, RunArgs& a, auto&, const std::string&) { a.enable_flashinfer_allreduce_fusion = true; }},
      // Classed modelled for the values specsim prices (models/stacks/sglang-v0.5.2-flag-values.csv):
      // the kernels the cost model stands for, so the run is the same as without the flag.
      {"--attention-backend",
       [](const PastedFlag& f, RunArgs& a, auto&, const std::string&) { a.attention_backend = f.values.at(0); }},
      {"--decode-attention-backend", [](const PastedFlag&, RunArgs&, auto&, const std::string&) {}},
      {"--prefill-attention-backend", [](const PastedFlag&, RunArgs&, auto&, const std::string&) {}},
      {"--sampling-backend", [](const PastedFlag&, RunArgs&, auto&, const std::string&) {}},
      {"--expert-parallel-size", [](const PastedFlag& f, RunArgs& a, auto&,
                                    const std::string& at) { a.parallel.ep_size = command_int(f.last(), at); }},
      {"--data-parallel-size", [](const PastedFlag& f, RunArgs& a, auto&,
                                  const std::string& at) { a.parallel.dp_size = command_int(f.last(), at); }},
      {"--enable-dp-attention",
       [](const PastedFlag&, RunArgs& a, auto&, const std::string&) { a.parallel.enable_dp_attention = true; }},
      {"--moe-a2a-backend",
       [](const PastedFlag& f, RunArgs& a, auto&, const std::string&) { a.parallel.moe_a2a_backend = f.last(); }},
      {"--deepep-mode",
       [](const PastedFlag& f, RunArgs& a, auto&, const std::string&) { a.parallel.deepep_mode = f.last(); }},
      // Applied after every flag (it takes the TP size, wherever --tp stands): args_from_sglang.
      {"--enable-ep-moe", [](const PastedFlag&, RunArgs&, auto&, const std::string&) {}},
      // SGLang v0.5.2's older switch for the same thing as --moe-a2a-backend deepep.
      {"--enable-deepep-moe",
       [](const PastedFlag&, RunArgs& a, auto&, const std::string&) { a.parallel.moe_a2a_backend = "deepep"; }},
      // Caps: checked against the run's --context-len and --batch-size by the caller.
      {"--context-length",
       [](const PastedFlag& f, RunArgs&, auto&, const std::string& at) { command_positive_int(f.last(), at); }},
      {"--max-running-requests",
       [](const PastedFlag& f, RunArgs&, auto&, const std::string& at) { command_positive_int(f.last(), at); }},
      {"--max-total-tokens",
       [](const PastedFlag& f, RunArgs&, auto&, const std::string& at) { command_positive_int(f.last(), at); }},
  };
  return kApply;
}

}  // namespace

std::string sglang_command_release(const CommandFlags& c) {
  std::string newest;
  for (const auto& f : c.flags)
    if (!f.since.empty() && (newest.empty() || !release_at_least(newest, f.since))) newest = f.since;
  return newest;
}

const std::vector<std::string>& sglang_applied_flags() {
  static const std::vector<std::string> kFlags = applier_flags(sglang_appliers());
  return kFlags;
}

RunArgs args_from_sglang(const CommandFlags& c, std::vector<std::string>& notes) {
  RunArgs a;
  for (const auto& f : c.flags) {
    if (!f.row || f.cls != FlagClass::Modelled) continue;
    apply_modelled(sglang_appliers(), f, a, notes, c.where + ": " + f.given);
  }
  if (!a.model_path) throw InputError("the SGLang command has no --model-path", c.where);
  // ServerArgs.__post_init__: --enable-ep-moe sets ep_size to tp_size, over any --ep-size.
  if (c.last("--enable-ep-moe")) {
    a.parallel.ep_size = a.tp_size.value_or(1);
    notes.push_back("--enable-ep-moe: experts split over the TP group, --ep-size " +
                    std::to_string(*a.parallel.ep_size) + " (as SGLang sets it)");
  }
  // v0.5.10 and later: forced off over the command's --enable-flashinfer-allreduce-fusion, wherever
  // each stands in it (and over specsim's own: resolve_scenario lets it win, as SGLang does)
  if (c.last("--enforce-disable-flashinfer-allreduce-fusion")) a.enable_flashinfer_allreduce_fusion = false;
  // No --speculative-algorithm: SGLang decodes plainly (its speculative flags do nothing).
  if (!a.algorithm) a.algorithm = "NONE";
  // SGLang v0.5.2's check_server_args: "Pipeline parallelism is not compatible with overlap
  // schedule, speculative decoding, mixed chunked prefill" (an assert at launch).
  if (a.parallel.pp_size.value_or(1) > 1 && ascii_lower(*a.algorithm) != "none")
    throw InputError("SGLang v0.5.2 refuses --pp-size " + std::to_string(*a.parallel.pp_size) +
                         " with speculative decoding (check_server_args: pipeline parallelism is not compatible "
                         "with speculative decoding): drop the --speculative-* flags or --pp-size",
                     c.where + ": --pp-size");
  return a;
}

}  // namespace specsim
