#include "scenario/pasted_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <type_traits>

#include "scenario/command_flags.h"
#include "scenario/command_values.h"
#include "scenario/paths.h"
#include "scenario/sglang_cmdline.h"
#include "scenario/sglang_spec_worker.h"
#include "scenario/vllm_cmdline.h"
#include "util/error.h"
#include "util/text.h"

namespace specsim {

namespace {

std::string joined(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

// The boxes --hardware takes, for the error of a command that does not say which GPUs run it.
std::string hardware_choices() {
  const std::filesystem::path hw = std::filesystem::path(models_dir()) / "hardware";
  return "GPUs: " + joined(json_names_in((hw / "gpus").string())) +
         "; topologies: " + joined(json_names_in((hw / "topologies").string()));
}

template <class T>
void fill(std::optional<T>& into, const std::optional<T>& from) {
  if (!into && from) into = from;
}

template <class T>
std::string shown(const T& v) {
  if constexpr (std::is_same_v<T, std::string>)
    return v;
  else
    return fmt::format("{:g}", static_cast<double>(v));
}

// A specsim flag that overrides the command's value of the same setting: used, and said.
template <class T>
void fill_said(std::optional<T>& into, const std::optional<T>& from, const char* flag,
               std::vector<std::string>& notes) {
  bool differ = into && from && *into != *from;
  if constexpr (std::is_same_v<T, std::string>) differ = differ && ascii_lower(*into) != ascii_lower(*from);
  if (differ) notes.push_back(fmt::format("{} {} overrides the command's {}", flag, shown(*into), shown(*from)));
  fill(into, from);
}

// The command's values under the flags given to specsim (theirs win, said).
void merge(RunArgs& a, const RunArgs& c, std::vector<std::string>& notes) {
  fill(a.model_path, c.model_path), fill(a.draft_model_path, c.draft_model_path);
  fill_said(a.dtype, c.dtype, "--dtype", notes);
  if (!a.draft_model_path) fill(a.remote_draft, c.remote_draft);
  fill_said(a.tp_size, c.tp_size, "--tp-size", notes), fill(a.nnodes, c.nnodes);
  fill_said(a.num_steps, c.num_steps, "--speculative-num-steps", notes);
  fill_said(a.topk, c.topk, "--speculative-eagle-topk", notes);
  fill_said(a.num_draft_tokens, c.num_draft_tokens, "--speculative-num-draft-tokens", notes);
  fill_said(a.cuda_graph_max_bs, c.cuda_graph_max_bs, "--cuda-graph-max-bs", notes);
  fill_said(a.algorithm, c.algorithm, "--speculative-algorithm", notes);
  fill_said(a.mem_fraction_static, c.mem_fraction_static, "--mem-fraction-static", notes);
  fill(a.runtime, c.runtime), fill(a.quantization, c.quantization), fill(a.kv_cache_dtype, c.kv_cache_dtype);
  fill(a.attention_backend, c.attention_backend), fill(a.vllm_max_num_seqs, c.vllm_max_num_seqs);
  fill(a.nccl_p2p_level, c.nccl_p2p_level), fill(a.nccl_algo, c.nccl_algo), fill(a.nccl_proto, c.nccl_proto);
  a.disable_cuda_graph = a.disable_cuda_graph || c.disable_cuda_graph;
  a.disable_overlap_schedule = a.disable_overlap_schedule || c.disable_overlap_schedule;
  a.disable_custom_all_reduce = a.disable_custom_all_reduce || c.disable_custom_all_reduce;
  a.enable_flashinfer_allreduce_fusion = a.enable_flashinfer_allreduce_fusion || c.enable_flashinfer_allreduce_fusion;
  a.enforce_disable_flashinfer_allreduce_fusion =
      a.enforce_disable_flashinfer_allreduce_fusion || c.enforce_disable_flashinfer_allreduce_fusion;
  if (a.cuda_graph_bs.empty()) a.cuda_graph_bs = c.cuda_graph_bs;
  auto& p = a.parallel;
  fill(p.ep_size, c.parallel.ep_size), fill(p.dp_size, c.parallel.dp_size), fill(p.pp_size, c.parallel.pp_size);
  fill(p.moe_a2a_backend, c.parallel.moe_a2a_backend), fill(p.deepep_mode, c.parallel.deepep_mode);
  fill(p.ep_imbalance, c.parallel.ep_imbalance);
  p.enable_dp_attention = p.enable_dp_attention || c.parallel.enable_dp_attention;
}

// The command's limits on the run's context and batch (SGLang's --context-length and
// --max-running-requests, vLLM's --max-model-len and --max-num-seqs).
// A context not given is the default (RunSpec's) unless the command caps it lower: then the cap.
void check_limits(const CommandFlags& c, RunArgs& a, std::vector<std::string>& notes) {
  const bool vllm = c.stack == "vllm";
  const long long dflt_context = RunSpec{}.context_len;
  if (const PastedFlag* f = c.last(vllm ? "--max-model-len" : "--context-length"); f) {
    const long long cap = command_human_int(f->values.back(), c.where + ": " + f->given);
    a.max_context_len = cap;
    if (!a.context_len && cap < dflt_context) {
      a.context_len = cap;
      notes.push_back(fmt::format("context {} tokens a request: the command's {} {} (below the default {})", cap,
                                  f->given, f->values.back(), dflt_context));
    }
    if (a.context_len && *a.context_len > cap)
      throw InputError(std::to_string(*a.context_len) + " tokens of context exceed the command's " + f->given + " " +
                           f->values.back(),
                       "--context-len");
  }
  // SGLang's KV-cache pool: every running request's context held at once
  if (const PastedFlag* f = vllm ? nullptr : c.last("--max-total-tokens"); f) {
    const int pool = command_positive_int(f->values.back(), c.where + ": " + f->given);
    a.max_total_tokens = pool;
    const long long batch = a.batch_size.value_or(RunSpec{}.batch_size), context = a.context_len.value_or(dflt_context);
    if (batch * context > pool)
      throw InputError(fmt::format("batch {} x context {} = {} tokens exceed the command's {} {}: a smaller "
                                   "--batch-size or --context-len fits",
                                   batch, context, batch * context, f->given, f->values.back()),
                       a.batch_size ? "--batch-size" : "--context-len");
  }
  if (const PastedFlag* f = c.last(vllm ? "--max-num-seqs" : "--max-running-requests"); f) {
    const int cap = command_int(f->values.back(), c.where + ": " + f->given);
    a.max_running_requests = cap;
    if (a.batch_size && *a.batch_size > cap)
      throw InputError(
          "batch " + std::to_string(*a.batch_size) + " exceeds the command's " + f->given + " " + f->values.back(),
          "--batch-size");
  }
}

std::vector<PastedFlagRow> report_rows(const CommandFlags& c) {
  std::vector<PastedFlagRow> rows;
  std::vector<std::string> keys;
  for (const auto& f : c.flags) {
    const std::string key = f.row ? f.row->flag + (f.sub.empty() ? "" : "." + f.sub) : f.given;
    std::string shown = f.row && f.given.rfind("-", 0) != 0 ? "MODEL (positional)" : f.given;
    if (!f.sub.empty() && !f.older_spelling) shown += "." + f.sub;  // an older spelling names its key itself
    PastedFlagRow r{shown, joined(f.values, " "), std::string(flag_class_name(f.cls)), f.what};
    const auto at = std::find(keys.begin(), keys.end(), key);
    if (at == keys.end())
      keys.push_back(key), rows.push_back(r);
    else
      rows[at - keys.begin()] = r;  // the last occurrence is the one the stack runs
  }
  return rows;
}

}  // namespace

PastedCommand args_from_command(const std::vector<std::string>& tokens, RunArgs& a, const std::string& where) {
  const CommandFlags c = read_command_flags(tokens, where);
  refuse_unmodelled(c);
  PastedCommand out;
  out.notes = c.notes;
  out.stack = c.stack == "vllm" ? "vLLM v0.11.0" : "SGLang v0.5.2";
  RunArgs given = c.stack == "vllm" ? args_from_vllm(c, out.notes) : args_from_sglang(c, out.notes);
  for (const auto& f : c.flags) {  // the NCCL environment the command sets (SGLANG_ENABLE_SPEC_V2: the worker)
    if (f.row || f.cls != FlagClass::Modelled || f.given.rfind("NCCL_", 0) != 0) continue;
    auto& slot = f.given == "NCCL_P2P_LEVEL" ? given.nccl_p2p_level
                 : f.given == "NCCL_ALGO"    ? given.nccl_algo
                                             : given.nccl_proto;
    slot = f.values.front();
  }
  if (!a.hardware)
    throw InputError("a launch command does not say which GPUs run it: give --hardware GPU:TOPOLOGY (" +
                         hardware_choices() + "), or a hardware profile JSON",
                     "--hardware");
  merge(a, given, out.notes);
  if (c.stack == "sglang") {
    choose_sglang_spec_worker(c, a, out.notes);
    // the release the command is priced as: --sglang-release, else the date its flags set (a lower bound)
    const std::string release = a.sglang_release ? normalized_sglang_release(*a.sglang_release) : "";
    if (!release.empty()) out.stack = "SGLang " + release + (a.sglang_release_dated ? " or later" : "");
  }
  if (c.stack == "vllm" && std::any_of(c.flags.begin(), c.flags.end(), [](const PastedFlag& f) {
        return !f.row && f.given == "SGLANG_ENABLE_SPEC_V2";
      }))
    out.notes.push_back("SGLANG_ENABLE_SPEC_V2 is SGLang's: vLLM does not read it");
  check_limits(c, a, out.notes);
  out.rows = report_rows(c);
  return out;
}

}  // namespace specsim
