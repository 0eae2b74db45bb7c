#pragma once
// GPU time of FlashInfer's attention kernels as SGLang's FlashInfer backend runs them (paged
// prefill for a verify and a draft extend, its custom mask's extra, batch decode), from their
// measured times on one H200 (models/kernels/flashinfer_attention.json, fitted by
// tools/attnbench/fit_flashinfer.py): each a sum of named terms, a coefficient times a feature of
// the call.
#include <array>

#include "plan/op.h"
#include "scenario/hardware.h"

namespace specsim {

/// The features a kernel's terms multiply (the JSON names its coefficients so).
enum class FlashInferTerm {
  FixedUs,        ///< 1
  FixedUsTile16,  ///< 1 where FlashInfer's CUDA-graph plan picks a 16-row query tile
  FixedUsTile64,
  FixedUsTile128,
  UsPerMb,           ///< KV bytes read, MB (scaled by the H200's HBM bandwidth over the GPU's)
  UsPerGflop,        ///< QK and PV GFLOP (scaled by the H200's bf16 peak over the GPU's)
  UsPerPaddedGflop,  ///< the same over whole query tiles (the rows a tile pads to)
  UsPerToken,        ///< query tokens of the call
};
inline constexpr int kFlashInferTerms = 8;

/// One kernel's coefficients (0 where the kernel has no such term).
struct FlashInferKernelPrice {
  std::array<double, kFlashInferTerms> coef{};
};

/// The measured kernels (read once from models/kernels/flashinfer_attention.json).
struct FlashInferAttentionPrices {
  double reference_mem_bw_gbps = 0, reference_bf16_tflops = 0;  ///< the GPU they were measured on
  FlashInferKernelPrice prefill;                                ///< paged prefill, causal mask (FA2)
  FlashInferKernelPrice custom;                                 ///< paged prefill, the verify's custom mask (FA2)
  FlashInferKernelPrice decode;     ///< batch decode on CUDA cores (at most 4 query heads a KV head)
  FlashInferKernelPrice decode_tc;  ///< batch decode on tensor cores (more than 4, or an fp8 KV cache)
};
const FlashInferAttentionPrices& flashinfer_attention_prices();

/// FlashInfer's FA2 query tile (rows) for a CUDA-graph plan of `requests` requests with `tokens`
/// query tokens in all and `group` query heads a KV head (FA2DetermineCtaTileQ on the largest
/// packed query length the plan allows for: (tokens - requests + 1) x group).
int flashinfer_query_tile(double requests, double tokens, double group);

/// GPU time of an attention op whose attention_kernel is one of FlashInfer's on `g`, us. Reads
/// op.m (query tokens), op.n (requests) and op.k (query heads a KV head). `mask_factor`: the
/// attention_scale a verify's custom-mask op was built with (its bytes and FLOPs are the pass's
/// times mask_factor - 1).
double flashinfer_attention_us(const Op& op, const GpuProfile& g, double mask_factor);

}  // namespace specsim
