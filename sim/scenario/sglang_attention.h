#pragma once
// Facts about SGLang's attention backends that decide how a verify's attention is priced
// (docs/model.md#tree-attention).
#include <string>

namespace specsim {

/// Whether SGLang runs an MHA model of this architecture (HF architectures[0]) on FlashAttention-3
/// by default on Hopper when it drafts chains (utils.py, is_fa3_default_architecture).
bool sglang_fa3_default_architecture(const std::string& architecture);

/// How many causal passes of the same attention one pass of FlashInfer's prefill kernel with a
/// custom mask costs (models/kernels/flashinfer_custom_mask.json, `attention_time_factor`, in
/// [1, 10]); InputError naming the file when it is missing or out of range.
double flashinfer_custom_mask_factor();

}  // namespace specsim
