#pragma once
// The fused all-reduce + add + RMSNorm's element arithmetic (car_fused_norm.cu): the residual add,
// the sum of squares, the normalization and the fp8 copy, each in the fixed order that makes the
// fused and the separate kernel write the same bits. Internal to car_fused_norm.cu.
#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "car_device.cuh"
#include "car_fused_args.h"
#include "car_layout.h"
#include "car_ll_device.cuh"

namespace specsim::car::detail {
namespace {

/// Element-wise round_T(a + b) of two vectors.
template <typename T>
__device__ __forceinline__ uint4 add_round(const uint4& a, const uint4& b) {
  std::uint32_t out[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    out[j] = 0;
#pragma unroll
    for (int h = 0; h < 2; ++h)
      out[j] |= bits_of<T>(to_output<T>(__fadd_rn(lane<T>(word(a, j), h), lane<T>(word(b, j), h)))) << (16 * h);
  }
  return make_uint4(out[0], out[1], out[2], out[3]);
}

/// acc + the squares of a vector's elements, in element order.
template <typename T>
__device__ __forceinline__ float add_squares(const uint4& r, float acc) {
#pragma unroll
  for (int j = 0; j < 4; ++j)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float x = lane<T>(word(r, j), h);
      acc = __fmaf_rn(x, x, acc);
    }
  return acc;
}

/// round_T((r * inv) * w) element-wise.
template <typename T>
__device__ __forceinline__ uint4 normalize(const uint4& r, const uint4& w, float inv) {
  std::uint32_t out[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    out[j] = 0;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float x = __fmul_rn(__fmul_rn(lane<T>(word(r, j), h), inv), lane<T>(word(w, j), h));
      out[j] |= bits_of<T>(to_output<T>(x)) << (16 * h);
    }
  }
  return make_uint4(out[0], out[1], out[2], out[3]);
}

/// The 8 elements of `o` times `inv_scale` as fp8 e4m3 (nearest even, saturating), in order.
template <typename T>
__device__ __forceinline__ uint2 quantize(const uint4& o, float inv_scale) {
  std::uint32_t out[2] = {0, 0};
#pragma unroll
  for (int j = 0; j < 4; ++j)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float x = __fmul_rn(lane<T>(word(o, j), h), inv_scale);
      const std::uint32_t b = __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
      const int e = 2 * j + h;  // element index 0..7
      out[e / 4] |= b << (8 * (e % 4));
    }
  return make_uint2(out[0], out[1]);
}

/// rsqrt(ss / hidden + eps).
__device__ __forceinline__ float inv_rms(float ss, std::size_t hidden, float eps) {
  return rsqrtf(__fadd_rn(__fdiv_rn(ss, static_cast<float>(hidden)), eps));
}

}  // namespace
}  // namespace specsim::car::detail
