#pragma once
// How a model's decoder layers split into pipeline stages (--pp-size), by each stack's own rule
// (docs/model.md#pipeline-parallelism). The plan and the memory fit read the same split.
#include <vector>

namespace specsim {

/// Whose split rule: SGLang v0.5.2 (python/sglang/srt/distributed/utils.py get_pp_indices: every
/// stage gets layers / pp, the last stage the remainder too) or vLLM v0.11 (vllm/distributed/utils.py
/// get_pp_indices: the remainder one each to the stages before the last, from the second-to-last
/// back). Neither reads SGLANG_PP_LAYER_PARTITION / VLLM_PP_LAYER_PARTITION here.
enum class PpSplitRule { SGLang, VLLM };

/// Layers of each stage, first to last; InputError (--pp-size) when a stage would get none.
std::vector<int> pp_stage_layers(int layers, int pp, PpSplitRule rule = PpSplitRule::SGLang);

}  // namespace specsim
