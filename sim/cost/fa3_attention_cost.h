#pragma once
// GPU time of FlashAttention-3's paged-KV kernel as SGLang's FA3 backend calls it
// (flash_attn_with_kvcache over the page table, num_splits by FA3's own heuristic; one call per
// layer for a draft step, a chain's verify, a draft extend and a plain decode step), from its
// measured times on one H200 (models/kernels/fa3_attention.json, fitted by
// tools/attnbench/fit_fa3.py): a sum of named terms (attention_kernel_terms.h).
#include "cost/attention_kernel_terms.h"
#include "plan/op.h"
#include "scenario/hardware.h"

namespace specsim {

/// The measured kernel (read once from models/kernels/fa3_attention.json).
struct Fa3AttentionPrice {
  AttentionReference reference;  ///< the GPU it was measured on
  AttentionKernelPrice fa3;      ///< one call: scheduler, attention and (when split) combine kernels
  AttentionKernelPrice fa3_mla;  ///< the same for MLA's absorbed call (64-wide rope QK, 512-wide latent)
};
const Fa3AttentionPrice& fa3_attention_price();

/// GPU time of an attention op whose attention_kernel is Fa3 or Fa3Mla on `g`, us (at least the
/// GPU's per-kernel floor).
double fa3_attention_us(const Op& op, const GpuProfile& g);

}  // namespace specsim
