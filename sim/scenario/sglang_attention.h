#pragma once
// SGLang's choice of attention backend, as far as it decides how a speculative cycle's attention
// is priced: a draft tree on FA3 (two passes and a merge), a verify on FlashInfer (its mask a
// custom mask), or one pass (docs/model.md#tree-attention).
#include <string>

#include "scenario/hardware.h"
#include "scenario/model_spec.h"
#include "scenario/run_spec.h"

namespace specsim {

/// Whether SGLang runs an MHA model of this architecture (HF architectures[0]) on FlashAttention-3
/// by default on Hopper when it drafts chains (utils.py, is_fa3_default_architecture).
bool sglang_fa3_default_architecture(const std::string& architecture);

/// Sets `run`'s fa3_tree_attention, custom_mask_chain, custom_mask_tree and fa3_attention for SGLang serving
/// `target` on `hw`: the command's --attention-backend, else SGLang's default (model_runner.py:
/// FA3 for MLA models on Hopper and for an MHA model's chains where its architecture is on the FA3
/// list; FlashInfer for other MHA models and every MHA tree; gpt-oss FA3 on Hopper, never
/// FlashInfer; AMD GPUs aiter or triton).
void decide_sglang_attention(RunSpec& run, const ModelSpec& target, const Hardware& hw);

/// The backend a draft tree's attention is priced on, as JSON reports it: "fa3", "flashinfer" (an
/// MHA model's masked verify, or the MLA backend on Blackwell), or "" where SGLang runs another
/// (triton, aiter, trtllm_mha), priced as one pass. Needs decide_sglang_attention first.
std::string sglang_tree_backend(const RunSpec& run, const ModelSpec& target, const Hardware& hw);

/// The KV-cache bytes an element FA3 was measured at (both of its prices).
double fa3_measured_kv_bytes();

/// Whether FA3's measured price (models/kernels/fa3_attention.json) covers attention of this
/// head dim over a KV cache of `kv_cache_bytes` an element: the head dim it was measured at
/// (`measured_head_dim`) over a cache at most as wide as `measured_kv_cache_bytes` (an fp8 cache:
/// the measured call with its own bytes, an assumption); other shapes keep the GPU profile's terms.
bool fa3_price_covers(double head_dim, double kv_cache_bytes);

/// The same for MLA's absorbed call: a rope part `rope_dim` wide and a latent `latent_dim` wide
/// (`measured_mla_rope_dim`, `measured_mla_latent_dim`; DeepSeek-V3's 64 and 512) over a KV cache
/// of `kv_cache_bytes` an element (at most the measured width, as above).
bool fa3_mla_price_covers(double rope_dim, double latent_dim, double kv_cache_bytes);

/// How many causal passes of the same attention one pass of FlashInfer's prefill kernel with a
/// custom mask costs (models/kernels/flashinfer_custom_mask.json, `attention_time_factor`, in
/// [1, 10]); InputError naming the file when it is missing or out of range.
double flashinfer_custom_mask_factor();

}  // namespace specsim
