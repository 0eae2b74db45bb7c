#pragma once
// A pasted vLLM command (`vllm serve MODEL ...`, `python -m vllm.entrypoints.openai.api_server
// --model ...`) put into the run flags: each modelled flag of models/stacks/vllm-v0.11.0-serve-args.csv
// sets its RunArgs field, the last occurrence winning; --speculative-config's JSON (method,
// num_speculative_tokens, model) is read as vLLM reads it.
#include <string>
#include <vector>

#include "scenario/command_flags.h"
#include "scenario/resolve.h"

namespace specsim {

/// vLLM v0.11.0's default --gpu-memory-utilization (vllm/engine/arg_utils.py, EngineArgs; the
/// docs' engine arguments page): the memory-fit fraction of a command that does not give one.
inline constexpr double kVllmGpuMemoryUtilization = 0.9;

/// vLLM v0.11.0's largest CUDA-graph capture size when none is given is min(2 x max_num_seqs, 512)
/// tokens (vllm/config: SchedulerConfig.cuda_graph_sizes' default), a forward's tokens, not its
/// requests: this cap, taken whole when --max-num-seqs is not given (its default is 256 or more).
inline constexpr int kVllmMaxCaptureTokens = 512;

/// As args_from_sglang (sglang_cmdline.h), for vLLM; the runtime profile is vLLM's.
RunArgs args_from_vllm(const CommandFlags& c, std::vector<std::string>& notes);

/// The canonical flags args_from_vllm applies (each must be a modelled row of the table).
const std::vector<std::string>& vllm_applied_flags();

}  // namespace specsim
