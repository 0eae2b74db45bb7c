#include "cost/compute_cost.h"

#include <algorithm>
#include <cmath>

#include "cost/bus_bandwidth.h"

namespace specsim {

namespace {

// SGLang's Triton fused-MoE kernel tiles the sorted token-expert rows by BLOCK_SIZE_M and the
// weight's output dim by BLOCK_SIZE_N; each touched expert gets at least one M block. Its tuned
// configs use BLOCK_SIZE_M 16 and BLOCK_SIZE_N 128 up to 256 tokens (docs/sources-runtime.md#sglang-fused-moe-grid).
constexpr double kMoeBlockM = 16, kMoeBlockN = 128;

}  // namespace

double moe_grid_ctas(const Op& op) {
  if (op.kind != OpKind::MoeGemm || op.experts <= 0) return 0;
  const double rows_per_expert = op.m / op.experts;
  return op.experts * std::ceil(rows_per_expert / kMoeBlockM) * std::ceil(op.n / kMoeBlockN);
}

double grid_occupancy(const Op& op, const GpuProfile& g) {
  const double ctas = moe_grid_ctas(op);
  if (ctas <= 0 || g.sm_count <= 0) return 1.0;
  return std::min(1.0, ctas / g.sm_count);
}

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
  // A grid smaller than the GPU streams its bytes from that share of the SMs only.
  t.peak_bytes_per_us = bytes_per_us(g.mem_bw_gbps) * grid_occupancy(op, g);
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
  const RooflineParams p = roofline_params(t.cls, g);
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
