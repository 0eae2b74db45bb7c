#pragma once
// From what the user typed (RunArgs: every field optional) to a Scenario: the built-in scenario
// fills what is missing when no --model-path is given; SGLang's defaults otherwise.
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "scenario/parallel_layout.h"
#include "scenario/scenario.h"

namespace specsim {

/// The run flags as given; an empty optional means "not on the command line".
struct RunArgs {
  std::optional<std::string> model_path, draft_model_path, hardware, dtype;
  /// A pasted draft given as a Hugging Face id specsim does not hold (command_values.h).
  std::optional<std::string> remote_draft;
  std::optional<int> nnodes;  ///< --nnodes (SGLang's flag)
  std::optional<int> num_gpus, tp_size, num_steps, topk, num_draft_tokens, batch_size, cuda_graph_max_bs;
  std::optional<long long> context_len;
  std::optional<std::string> algorithm;
  bool disable_cuda_graph = false;
  /// SGLang's --disable-overlap-schedule: the plain step's host work on the critical path.
  bool disable_overlap_schedule = false;
  /// A pasted command's --attention-backend (fa3 or flashinfer: the values specsim models).
  std::optional<std::string> attention_backend;
  std::optional<std::string> eager_phases;  ///< comma list of phases, or "none"
  std::optional<double> accept_len, accept_rate;
  std::optional<double> mem_fraction_static;
  /// A pasted vLLM command's --max-num-seqs: its default CUDA-graph limit is min(2 x that, 512) tokens.
  std::optional<int> vllm_max_num_seqs;
  /// A pasted command's limits (RunSpec's of the same names).
  std::optional<int> max_running_requests;
  std::optional<long long> max_context_len, max_total_tokens;
  std::optional<double> measured_baseline_tok_s, measured_allreduce_us, measured_spec_tok_s;
  /// Where a measured value came from when not its flag (a log or trace file, in words).
  std::optional<std::string> measured_baseline_source, measured_allreduce_source;
  /// Where --accept-len / --accept-rate came from when not the command line ("scenario file F").
  std::optional<std::string> accept_source;
  /// The draft shape (steps, topk, draft tokens) accept_len was measured at, when a scenario file
  /// gave it with its shape: a run at another shape carries it as a per-token rate.
  std::optional<std::array<int, 3>> accept_len_shape;
  std::vector<std::string> allreduce;
  std::optional<std::string> nccl_p2p_level, nccl_algo, nccl_proto;
  std::optional<std::string> runtime;  ///< sglang (default), vllm, vllm-0.10, none, or a profile .json
  /// Weight and KV-cache formats in SGLang's words (--quantization, --kv-cache-dtype).
  std::optional<std::string> quantization, kv_cache_dtype;
  /// SGLang's --disable-custom-all-reduce: the serving stack's own all-reduce off, NCCL instead.
  bool disable_custom_all_reduce = false;
  /// SGLang's --enable-flashinfer-allreduce-fusion: all-reduce + residual add + RMSNorm as one kernel.
  bool enable_flashinfer_allreduce_fusion = false;
  /// SGLang's --enforce-disable-flashinfer-allreduce-fusion: off, also where SGLang turns it on by
  /// default (scenario/sglang_fusion_default.h).
  bool enforce_disable_flashinfer_allreduce_fusion = false;
  /// Where the fusion switches came from when not from a flag ("the log's server_args"): a
  /// server's own record of a fusion its GPU cannot run is said, not refused.
  std::optional<std::string> fusion_from;
  /// The SGLang release whose defaults apply (speculative worker, fusion, the draft shape chosen when
  /// none is given): --sglang-release, or the
  /// release a pasted command's or a log's later flags date it to; unset: v0.5.2, the pinned one.
  std::optional<std::string> sglang_release;
  /// sglang_release came from later flags (a pasted command's or a log's): a lower bound, not stated.
  bool sglang_release_dated = false;
  /// SGLang's --cuda-graph-bs: the batch sizes captured as graphs (bounded by cuda_graph_max_bs).
  std::vector<int> cuda_graph_bs;
  /// SGLang's --ep-size, --enable-dp-attention --dp, --moe-a2a-backend, --deepep-mode; --ep-imbalance.
  ParallelArgs parallel;
};

/// Builds the scenario; InputError naming the flag on bad input.
Scenario resolve_scenario(const RunArgs& args);

/// Path of the built-in scenario file (models/scenarios/default.json).
std::string default_scenario_path();

}  // namespace specsim
