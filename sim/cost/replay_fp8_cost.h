#pragma once
// The price of the GPU replay's own block-scaled fp8 GEMM (kernels/replay/block_fp8_gemm.cu), a
// different kernel from the stack's (gemm_fp8_block_*: SGLang's Triton kernel): what `specsim
// replay` predicts for the fp8 GEMMs it runs. Linear in terms the kernel's work split makes
// (block_fp8_gemm.h): a fixed cost, the weight bytes at a rate that depends on the token tile
// class (the kernel's MMAs take 8 tokens; 1, 2, 4 or 8 of them a pass), the 16-row tiles of W
// each warp walks (with all experts of a batched call), and the 128-wide blocks of K whose scales
// every tile applies.
#include <array>
#include <cstdint>

#include "plan/op.h"
#include "scenario/hardware.h"

namespace specsim {

/// The shape the replay runs an op as: MoE ops batched over their distinct experts, the
/// token-expert pairs split evenly (kernels/replay/op_prep.cc does the same).
struct ReplayGemmDims {
  std::int64_t m = 1, n = 1, k = 1, batch = 1;
};
ReplayGemmDims replay_gemm_dims(const Op& op);

/// The token tile class of M: 0 (M <= 8), 1 (<= 16), 2 (<= 32), 3 (above; in passes of 64).
int replay_fp8_m_class(std::int64_t m);

/// The fit's terms for one GEMM, in ReplayFp8Kernel's order: 1, weight MB in each M class (times
/// the passes of 64 tokens), thousands of 16-row tiles of W (times the passes), blocks of K.
std::array<double, kReplayFp8Terms> replay_fp8_terms(const ReplayGemmDims& d);

/// Microseconds of one launch of the replay's kernel on `d` under the fitted kernel `f`.
double replay_fp8_us(const ReplayFp8Kernel& f, const ReplayGemmDims& d);

}  // namespace specsim
