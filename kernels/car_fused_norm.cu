// All-reduce fused with the residual add and RMSNorm (bf16, fp16), and the separate add+RMSNorm
// kernel it replaces (for comparison: arbench, tests). The all-reduce half is one-shot-ll's
// protocol (car_ll_one_shot.cu: push into slot [parity][me] of every peer, poll the own slots,
// the data is the flag, the slots emptied by their reader, parity from the shared call count), on
// the same slots and count, so fused and plain flag-free calls may alternate. What differs is
// the work split: one block owns whole rows (a row at a time, rows blk, blk + blocks, ...), so
// after the reduce every rank holds each full row in one block and normalizes it there; no
// second exchange, no barrier. Each rank computes every row itself, in the same order with the
// same threads, so all ranks agree bitwise.
//
// Arithmetic (fixed order, no contraction, identical in the fused and the separate kernel):
//   s = the all-reduce sum rounded to T (rank order 0..world-1, as every variant)
//   r = round_T(s + residual)                      -> residual_out
//   ss = sum of r^2: per thread over its vectors in element order (fma), then a warp butterfly,
//        then the warps' partials in warp order
//   inv = rsqrt(ss / hidden + eps)
//   o = round_T((r * inv) * weight)                -> norm_out
//   q = fp8 e4m3 (round to nearest even, saturating) of o / quant_scale -> quant_out (optional)
//
// Co-residency: the host caps blocks per rank so that every block of every rank on a GPU is
// resident at once (fused_blocks_per_sm), as for the other flag-free kernels. Every wait is
// bounded; a block that gives up records the error word and stops at the next block barrier
// with all its threads (a shared flag read between two barriers), writing no norm output for
// that row.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "car_device.cuh"
#include "car_fused_args.h"
#include "car_kernels.h"
#include "car_layout.h"
#include "car_ll_device.cuh"
#include "sys_scope_ptx.cuh"

namespace specsim::car::detail {
namespace {

static_assert(kPack<__nv_bfloat16> == 8 && kPack<__half> == 8, "a vector is 8 elements");

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

/// Sum of every thread's `ss` over the block in a fixed order (warp butterfly, then warps in
/// order); every thread gets the same value. `failed` (may be null): a shared flag that threads
/// set while polling; read between the two barriers, so every thread sees the same value and no
/// thread of the next row can change it before all have read it.
__device__ __forceinline__ float block_sum(float ss, float* s_part, int* failed, bool& stop) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) ss = __fadd_rn(ss, __shfl_xor_sync(0xffffffffu, ss, o));
  if ((threadIdx.x & 31) == 0) s_part[threadIdx.x >> 5] = ss;
  __syncthreads();
  float total = 0.0f;
  const unsigned warps = blockDim.x >> 5;
  for (unsigned w = 0; w < warps; ++w) total = __fadd_rn(total, s_part[w]);
  stop = failed != nullptr && *static_cast<volatile int*>(failed) != 0;
  __syncthreads();
  return total;
}

/// rsqrt(ss / hidden + eps).
__device__ __forceinline__ float inv_rms(float ss, std::size_t hidden, float eps) {
  return rsqrtf(__fadd_rn(__fdiv_rn(ss, static_cast<float>(hidden)), eps));
}

/// Writes row vector i's norm output (and fp8 copy) from the new residual `r` and weight vector c.
template <typename T>
__device__ __forceinline__ void write_norm(const FusedRank& fr, void* norm_out, std::size_t i, std::size_t c,
                                           const uint4& r, float inv, float quant_inv_scale) {
  const uint4 o = normalize<T>(r, static_cast<const uint4*>(fr.weight)[c], inv);
  static_cast<uint4*>(norm_out)[i] = o;
  if (fr.quant_out != nullptr) static_cast<uint2*>(fr.quant_out)[i] = quantize<T>(o, quant_inv_scale);
}

/// The fused kernel (see the top of this file). kWorld: 2, or 0 for any world (read from the
/// arguments); kHeld: vectors a thread holds of a row (ceil(vectors a row / threads), 1, 2 or 4).
template <typename T, int kWorld, int kHeld>
__global__ void __launch_bounds__(kFusedMaxThreads, 1) fused_kernel(const __grid_constant__ FusedLaunchArgs fa) {
  const LaunchArgs& a = fa.base;
  constexpr int kR = kWorld != 0 ? kWorld : kMaxRanks;
  const int world = kWorld != 0 ? kWorld : a.world;
  const unsigned blk = blockIdx.x, nblk = gridDim.x;
  const RankPtrs& me = a.r[blockIdx.y];
  const FusedRank& fr = fa.f[blockIdx.y];
  if (me.absent) return;
  __shared__ int s_failed;
  __shared__ float s_part[kFusedMaxThreads / 32];
  const std::size_t vpr = fa.hidden / 8;
  const uint4* in = static_cast<const uint4*>(me.in);
  // Programmatic dependent launch: the inputs, residual, weight, the call count and the emptied
  // slots of earlier kernels are visible after the wait (car_ll_one_shot.cu).
  grid_dependency_wait();
  trigger_dependents();
  std::uint32_t* calls = reinterpret_cast<std::uint32_t*>(me.base[me.rank] + kLlCallsOff);
  const std::uint32_t call = calls[blk] + 1;
  if (threadIdx.x == 0) s_failed = 0;
  const int par = static_cast<int>(call & 1);
  const std::size_t area = ll_off(a.slot, a.ll_slot, world, par, 0);
  char* const own_area = me.base[me.rank] + area;
  const std::size_t my_off = a.ll_slot * static_cast<std::size_t>(me.rank);

  // send every row this block owns to every peer (rank+1, rank+2, ...: car_ll_one_shot.cu)
  for (std::size_t row = blk; row < fa.tokens; row += nblk)
    for (std::size_t c = threadIdx.x; c < vpr; c += blockDim.x) {
      const std::size_t i = row * vpr + c;
      const uint4 v = unreserve<T>(in[i]);
#pragma unroll
      for (int k = 1; k < kR; ++k)
        if (k < world) {
          const int q = me.rank + k < world ? me.rank + k : me.rank + k - world;
          store_relaxed_sys(reinterpret_cast<uint4*>(me.base[q] + area + my_off) + i, v);
        }
    }
  // s_failed initialised and every thread's count load completed
  __syncthreads();

  for (std::size_t row = blk; row < fa.tokens; row += nblk) {
    uint4 held[kHeld];
    float ss = 0.0f;
    bool ok = true;
#pragma unroll
    for (int k = 0; k < kHeld; ++k) {
      held[k] = make_uint4(0, 0, 0, 0);
      const std::size_t c = threadIdx.x + static_cast<std::size_t>(k) * blockDim.x;
      if (c >= vpr || !ok) continue;
      const std::size_t i = row * vpr + c;
      const uint4 own = unreserve<T>(in[i]);  // issued before the polls: latencies overlap
      const uint4 res = static_cast<const uint4*>(fr.residual_in)[i];
      uint4 v[kR];
      unsigned pending = 0;
#pragma unroll
      for (int q = 0; q < kR; ++q) {
        v[q] = make_uint4(0, 0, 0, 0);
        if (q < world && q != me.rank) pending |= 1u << q;
      }
      SpinBound bound;
      while (true) {
#pragma unroll
        for (int q = 0; q < kR; ++q)
          if (pending & (1u << q))
            v[q] = load_relaxed_sys(reinterpret_cast<const uint4*>(own_area + a.ll_slot * static_cast<std::size_t>(q)) +
                                    i);
#pragma unroll
        for (int q = 0; q < kR; ++q)
          if ((pending & (1u << q)) && filled<T>(v[q])) pending &= ~(1u << q);
        if (pending == 0 || atomicOr(&s_failed, 0) != 0) break;
        if (bound.expired(a.timeout_ns)) {
          record_wait_failure(me, __ffs(static_cast<int>(pending)) - 1, kLlWait, static_cast<int>(blk), call);
          atomicExch(&s_failed, 1);
          break;
        }
      }
      if (pending != 0) {  // gave up (or a sibling did): no output for this row
        ok = false;
        continue;
      }
#pragma unroll
      for (int q = 0; q < kR; ++q)
        if (q < world && q != me.rank)
          reinterpret_cast<uint4*>(own_area + a.ll_slot * static_cast<std::size_t>(q))[i] = empty_vec();
      const uint4 r = add_round<T>(reduce_regs<T, kR>(v, own, me.rank, world), res);
      static_cast<uint4*>(fr.residual_out)[i] = r;
      held[k] = r;
      ss = add_squares<T>(r, ss);
    }
    bool stop = false;
    const float total = block_sum(ss, s_part, &s_failed, stop);
    if (stop) break;  // uniform: every thread read the same flag
    const float inv = inv_rms(total, fa.hidden, fa.eps);
#pragma unroll
    for (int k = 0; k < kHeld; ++k) {
      const std::size_t c = threadIdx.x + static_cast<std::size_t>(k) * blockDim.x;
      if (c < vpr) write_norm<T>(fr, me.out, row * vpr + c, c, held[k], inv, fa.quant_inv_scale);
    }
  }
  store_call_count(calls, blk, nblk, call, threadIdx.x, blockDim.x);
}

/// The separate add+RMSNorm: what runs after a plain all-reduce (rank y's output in r[y].in; y =
/// blockIdx.y, several ranks of one GPU in one launch as the virtual all-reduce). One block a
/// row, the same threads and arithmetic as fused_kernel, so the outputs agree bitwise.
template <typename T, int kHeld>
__global__ void __launch_bounds__(kFusedMaxThreads) add_rmsnorm_kernel(const __grid_constant__ FusedLaunchArgs fa) {
  __shared__ float s_part[kFusedMaxThreads / 32];
  const RankPtrs& me = fa.base.r[blockIdx.y];
  const FusedRank& fr = fa.f[blockIdx.y];
  const std::size_t vpr = fa.hidden / 8;
  grid_dependency_wait();
  trigger_dependents();
  for (std::size_t row = blockIdx.x; row < fa.tokens; row += gridDim.x) {
    uint4 held[kHeld];
    float ss = 0.0f;
#pragma unroll
    for (int k = 0; k < kHeld; ++k) {
      held[k] = make_uint4(0, 0, 0, 0);
      const std::size_t c = threadIdx.x + static_cast<std::size_t>(k) * blockDim.x;
      if (c >= vpr) continue;
      const std::size_t i = row * vpr + c;
      const uint4 r = add_round<T>(static_cast<const uint4*>(me.in)[i], static_cast<const uint4*>(fr.residual_in)[i]);
      static_cast<uint4*>(fr.residual_out)[i] = r;
      held[k] = r;
      ss = add_squares<T>(r, ss);
    }
    bool stop = false;
    const float inv = inv_rms(block_sum(ss, s_part, nullptr, stop), fa.hidden, fa.eps);
#pragma unroll
    for (int k = 0; k < kHeld; ++k) {
      const std::size_t c = threadIdx.x + static_cast<std::size_t>(k) * blockDim.x;
      if (c < vpr) write_norm<T>(fr, me.out, row * vpr + c, c, held[k], inv, fa.quant_inv_scale);
    }
  }
}

using FusedKernel = void (*)(const FusedLaunchArgs);

/// Vectors a thread holds for this shape, rounded up to an instantiated 1, 2 or 4; 0 when the
/// shape is not one the kernels run.
int held_for(const FusedLaunchArgs& a) {
  const int t = a.base.threads;
  if (t < 32 || t > kFusedMaxThreads || t % 32 != 0 || a.hidden == 0 || a.hidden % 8 != 0 || a.tokens == 0) return 0;
  const std::size_t held = (a.hidden / 8 + static_cast<std::size_t>(t) - 1) / static_cast<std::size_t>(t);
  return held <= 1 ? 1 : held <= 2 ? 2 : held <= 4 ? 4 : 0;
}

template <typename T, int kWorld>
FusedKernel fused_for_held(int held) {
  switch (held) {
    case 1: return fused_kernel<T, kWorld, 1>;
    case 2: return fused_kernel<T, kWorld, 2>;
    case 4: return fused_kernel<T, kWorld, 4>;
    default: return nullptr;
  }
}

template <typename T>
FusedKernel norm_for_held(int held) {
  switch (held) {
    case 1: return add_rmsnorm_kernel<T, 1>;
    case 2: return add_rmsnorm_kernel<T, 2>;
    case 4: return add_rmsnorm_kernel<T, 4>;
    default: return nullptr;
  }
}

/// cudaLaunchKernelEx with programmatic dependent launch.
cudaError_t launch_pdl(FusedKernel k, dim3 grid, int threads, const FusedLaunchArgs& a, cudaStream_t stream) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = dim3(static_cast<unsigned>(threads));
  cfg.dynamicSmemBytes = 0;
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  return cudaLaunchKernelEx(&cfg, k, a);
}

}  // namespace

template <typename T>
cudaError_t launch_fused(const FusedLaunchArgs& a, cudaStream_t stream) {
  const LaunchArgs& b = a.base;
  const int held = held_for(a);
  if (held == 0 || b.blocks < 1 || b.blocks > kMaxBlocks || b.ranks < 1 || b.ranks > kMaxRanks || b.world < kMinRanks ||
      b.world > kMaxRanks || static_cast<std::size_t>(b.blocks) > a.tokens)
    return cudaErrorInvalidConfiguration;
  const FusedKernel k = b.world == 2 ? fused_for_held<T, 2>(held) : fused_for_held<T, 0>(held);
  if (k == nullptr) return cudaErrorInvalidConfiguration;
  return launch_pdl(k, dim3(static_cast<unsigned>(b.blocks), static_cast<unsigned>(b.ranks)), b.threads, a, stream);
}

template <typename T>
cudaError_t launch_add_rmsnorm(const FusedLaunchArgs& a, cudaStream_t stream) {
  const int held = held_for(a);
  const FusedKernel k = norm_for_held<T>(held);
  if (k == nullptr || a.base.ranks < 1 || a.base.ranks > kMaxRanks) return cudaErrorInvalidConfiguration;
  const auto rows = static_cast<unsigned>(std::min<std::size_t>(a.tokens, 65535));
  return launch_pdl(k, dim3(rows, static_cast<unsigned>(a.base.ranks)), a.base.threads, a, stream);
}

template cudaError_t launch_fused<__nv_bfloat16>(const FusedLaunchArgs&, cudaStream_t);
template cudaError_t launch_fused<__half>(const FusedLaunchArgs&, cudaStream_t);
template cudaError_t launch_add_rmsnorm<__nv_bfloat16>(const FusedLaunchArgs&, cudaStream_t);
template cudaError_t launch_add_rmsnorm<__half>(const FusedLaunchArgs&, cudaStream_t);

int fused_blocks_per_sm() {
  int best = 1 << 30;
  for (int held : {1, 2, 4})
    for (FusedKernel k : {fused_for_held<__nv_bfloat16, 2>(held), fused_for_held<__nv_bfloat16, 0>(held),
                          fused_for_held<__half, 2>(held), fused_for_held<__half, 0>(held)}) {
      int n = 0;
      if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k, kFusedMaxThreads, 0) != cudaSuccess) n = 1;
      best = std::min(best, n);
    }
  return std::max(1, best);
}

}  // namespace specsim::car::detail
