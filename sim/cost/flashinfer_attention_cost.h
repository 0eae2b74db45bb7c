#pragma once
// GPU time of FlashInfer's attention kernels as SGLang's FlashInfer backend runs them (paged
// prefill for a verify and a draft extend, its custom mask's extra, batch decode), from their
// measured times on one H200 (models/kernels/flashinfer_attention.json, fitted by
// tools/attnbench/fit_flashinfer.py): each a sum of named terms (attention_kernel_terms.h).
#include "cost/attention_kernel_terms.h"
#include "plan/op.h"
#include "scenario/hardware.h"

namespace specsim {

/// The measured kernels (read once from models/kernels/flashinfer_attention.json).
struct FlashInferAttentionPrices {
  AttentionReference reference;    ///< the GPU they were measured on
  AttentionKernelPrice prefill;    ///< paged prefill, causal mask (FA2)
  AttentionKernelPrice custom;     ///< paged prefill, the verify's custom mask (FA2)
  AttentionKernelPrice decode;     ///< batch decode on CUDA cores (at most 4 query heads a KV head)
  AttentionKernelPrice decode_tc;  ///< batch decode on tensor cores (more than 4, or an fp8 KV cache)
};
const FlashInferAttentionPrices& flashinfer_attention_prices();

/// GPU time of an attention op whose attention_kernel is one of FlashInfer's on `g`, us. Reads
/// op.m (query tokens), op.n (requests) and op.k (query heads a KV head). `mask_factor`: the
/// attention_scale a verify's custom-mask op was built with (its bytes and FLOPs are the pass's
/// times mask_factor - 1).
double flashinfer_attention_us(const Op& op, const GpuProfile& g, double mask_factor);

}  // namespace specsim
