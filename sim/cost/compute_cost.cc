#include "cost/compute_cost.h"

#include <algorithm>

namespace specsim {

double compute_us(const Op& op, const GpuProfile& g) {
  double flop_rate = 0;  // FLOP per microsecond
  double mem_eff = g.elementwise_memory_efficiency;
  double fixed_us = 0;   // a GEMM or attention kernel's ramp-up and tail, on top of its roofline time
  switch (op.kind) {
    case OpKind::Gemm:
    case OpKind::MoeGemm:
      flop_rate = g.peak_tflops(op.dtype) * 1e6 * g.gemm_compute_efficiency;
      mem_eff = g.gemm_memory_efficiency;
      fixed_us = g.gemm_fixed_us;
      break;
    case OpKind::Attention:  // small query tiles and a softmax between two MMAs: its own efficiency
      flop_rate = g.peak_bf16_tflops * 1e6 * g.attention_compute_efficiency;
      mem_eff = g.attention_memory_efficiency;
      fixed_us = g.attention_fixed_us;
      break;
    default: break;  // norms and elementwise kernels: bytes only
  }
  const double mem_rate = g.mem_bw_gbps * 1e3 * mem_eff;  // bytes per microsecond
  const double t_mem = op.bytes / mem_rate;
  const double t_flop = flop_rate > 0 ? op.flops / flop_rate : 0.0;
  return std::max(fixed_us + std::max(t_mem, t_flop), g.kernel_min_us);
}

}  // namespace specsim
