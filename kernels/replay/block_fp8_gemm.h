#pragma once
// The replay's block-scaled fp8 GEMM, the kernel class SGLang runs for DeepSeek-style fp8
// checkpoints (weight_block_size [128, 128]): activations quantized per token and 128 of K
// (per_token_group_quant_fp8), weights with one scale per 128x128 block, fp32 accumulation, bf16
// out. Host launchers only: callers need no CUDA compiler.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace specsim::replay {

/// Width of a scale group along K (activations: 1 x 128; weights: 128 x 128).
constexpr int kFp8Group = 128;

/// One block-scaled fp8 GEMM: `batch` independent products C[m,n] = A[m,k] W[n,k]^T.
struct BlockFp8Shape {
  std::int64_t m = 1, n = 1, k = 128, batch = 1;
  /// Scale groups along K.
  std::int64_t k_groups() const { return (k + kFp8Group - 1) / kFp8Group; }
  /// fp32 scales of A (all batches): one per row per 128 of K, row-major [batch][m][k_groups].
  std::size_t a_scale_floats() const { return std::size_t(batch * m * k_groups()); }
  /// fp32 scales of W (all batches): one per 128x128 block, row-major [batch][ceil(n/128)][k_groups].
  std::size_t w_scale_floats() const { return std::size_t(batch * ((n + kFp8Group - 1) / kFp8Group) * k_groups()); }
};

/// Whether block_fp8_gemm runs `s`: positive sizes and K a multiple of 16 (its 16-byte loads).
bool block_fp8_shape_ok(const BlockFp8Shape& s);

/// Whether the current device has the fp8 tensor cores the kernel uses (sm_89 and later).
bool block_fp8_device_ok();

/// C = (A * a_scales) (W * w_scales)^T, each product of the batch at its stride (A [m,k] fp8 e4m3,
/// W [n,k] fp8 e4m3, C [m,n] bf16, all row-major and contiguous per batch). Streams W once per 64
/// rows of A: each warp takes a 16-row slice of W and a share of K, loads it with 16-byte loads
/// into fp8 tensor-core MMAs (the tokens are the MMA's narrow side), applies the two scales per
/// 64 of K and the warps of a CTA add their shares in shared memory. M above 64 runs in chunks of
/// 64 (W read once per chunk). Throws std::invalid_argument on a shape block_fp8_shape_ok refuses.
void block_fp8_gemm(const void* a, const float* a_scales, const void* w, const float* w_scales, void* c,
                    const BlockFp8Shape& s, cudaStream_t st);

/// Per-token-group quantization (SGLang's per_token_group_quant_fp8): x [rows, k] bf16 -> q
/// [rows, k] fp8 e4m3 and scales [rows, ceil(k/128)] fp32, scale = max(|x| over the group,
/// 1e-10) / 448, q = x / scale. K a multiple of 16; throws std::invalid_argument otherwise.
void quant_fp8_groups(const void* x, void* q, float* scales, std::int64_t rows, std::int64_t k, cudaStream_t st);

}  // namespace specsim::replay
