#include "cost/compute_cost.h"

#include <algorithm>

#include "cost/bus_bandwidth.h"
#include "cost/fa3_attention_cost.h"
#include "cost/flashinfer_attention_cost.h"
#include "cost/replay_fp8_cost.h"
#include "scenario/sglang_attention.h"

namespace specsim {

namespace {
constexpr double kFp8ScaleBlock = 128;  // DeepSeek's weight_block_size: one scale per 128 of K
}  // namespace

RooflineTerms roofline_terms(const Op& op, const GpuProfile& g) {
  RooflineTerms t;
  switch (op.kind) {
    case OpKind::Gemm:
    case OpKind::MoeGemm:
      t.cls = RooflineClass::Gemm;
      t.peak_flop_per_us = g.peak_tflops(op.dtype) * 1e6;
      break;
    case OpKind::Attention:  // small query tiles and a softmax between two MMAs: its own efficiency
      t.cls = RooflineClass::Attention;
      t.peak_flop_per_us = g.peak_bf16_tflops * 1e6;
      break;
    default: break;  // norms and elementwise kernels: bytes only
  }
  t.flops = op.flops;
  t.bytes = op.bytes;
  t.peak_bytes_per_us = bytes_per_us(g.mem_bw_gbps);
  return t;
}

RooflineParams roofline_params(RooflineClass cls, const GpuProfile& g) {
  switch (cls) {
    case RooflineClass::Gemm: return {g.gemm_compute_efficiency, g.gemm_memory_efficiency, g.gemm_fixed_us};
    case RooflineClass::Attention:
      return {g.attention_compute_efficiency, g.attention_memory_efficiency, g.attention_fixed_us};
    case RooflineClass::Memory: break;
  }
  return {0, g.elementwise_memory_efficiency, 0};
}

RooflineBound roofline_bound(double fixed_us, double flop_us, double byte_us, double floor_us) {
  if (flop_us > 0 && flop_us >= byte_us && fixed_us + flop_us >= floor_us) return RooflineBound::Compute;
  if (fixed_us + byte_us >= floor_us) return RooflineBound::Memory;
  return RooflineBound::Floor;
}

double compute_us(const Op& op, const GpuProfile& g) {
  const RooflineTerms t = roofline_terms(op, g);
  // A replay's prediction prices the fp8 GEMMs it ran with its own kernel's fitted price.
  if (t.cls == RooflineClass::Gemm && op.dtype == DType::FP8 && g.price_as_replay_fp8 && g.replay_block_fp8.present)
    return std::max(g.kernel_min_us, replay_fp8_us(g.replay_block_fp8, replay_gemm_dims(op)));
  // SGLang's FlashInfer and FA3 backends: their kernels at their measured price (a replay's
  // prediction prices the replay's own kernel instead: price_stack_attention off).
  if (op.kind == OpKind::Attention && op.attention_kernel != AttentionKernel::Roofline && g.price_stack_attention)
    return op.attention_kernel == AttentionKernel::Fa3 || op.attention_kernel == AttentionKernel::Fa3Mla
               ? fa3_attention_us(op, g)
               : flashinfer_attention_us(op, g, flashinfer_custom_mask_factor());
  RooflineParams p = roofline_params(t.cls, g);
  // Block-scaled fp8 GEMMs (DeepSeek's dense and expert weights, with their per-128 scales) pay a
  // larger fixed cost at small M than bf16 cuBLAS GEMMs (docs/sources-runtime.md#fp8-block-gemm-small-m).
  if (t.cls == RooflineClass::Gemm && op.dtype == DType::FP8 && g.gemm_fp8_block_fixed_us > 0)
    p.fixed_us = g.gemm_fp8_block_fixed_us + g.gemm_fp8_block_us_per_kblock * op.k / kFp8ScaleBlock;
  // SGLang's Triton fused-MoE GEMM streams its experts' weights with few CTAs at small M: its own
  // fixed cost and bandwidth share, fitted to the kernel's measured per-M times
  // (docs/sources-runtime.md#sglang-fused-moe-h200).
  if (op.kind == OpKind::MoeGemm && g.moe_gemm_memory_efficiency > 0) {
    p.fixed_us = g.moe_gemm_fixed_us;
    p.memory_efficiency = g.moe_gemm_memory_efficiency;
  }
  // 16-bit experts where the kernel was timed on them (docs/sources-runtime.md#moe-kernel-16bit-h200)
  const bool expert16 = op.dtype == DType::BF16 || op.dtype == DType::FP16;
  if (op.kind == OpKind::MoeGemm && expert16 && g.moe_gemm16_memory_efficiency > 0) {
    p.fixed_us = g.moe_gemm16_fixed_us;
    p.memory_efficiency = g.moe_gemm16_memory_efficiency;
  }
  const double t_mem = t.bytes / (t.peak_bytes_per_us * p.memory_efficiency);
  const double flop_rate = t.peak_flop_per_us * p.compute_efficiency;  // FLOP per microsecond
  const double t_flop = flop_rate > 0 ? t.flops / flop_rate : 0.0;
  switch (roofline_bound(p.fixed_us, t_flop, t_mem, g.kernel_min_us)) {
    case RooflineBound::Compute: return p.fixed_us + t_flop;
    case RooflineBound::Memory: return p.fixed_us + t_mem;
    case RooflineBound::Floor: break;
  }
  return g.kernel_min_us;
}

}  // namespace specsim
