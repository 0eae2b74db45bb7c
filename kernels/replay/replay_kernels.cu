// The replay's own kernels. Preconditions sit beside each launcher.
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <mma.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "replay_kernels.h"

namespace specsim::replay {
namespace {

using bf16 = __nv_bfloat16;
namespace wmma = nvcuda::wmma;

// SplitMix64: a stateless hash, so every element gets its own random value in one pass.
__device__ inline float uniform(std::uint64_t seed, std::size_t i) {
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * (i + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return float(z >> 40) * (1.0f / 16777216.0f) * 2.0f - 1.0f;  // [-1, 1)
}

__global__ void fill_bf16_kernel(bf16* p, std::size_t n, float scale, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    p[i] = __float2bfloat16(scale * uniform(seed, i));
}

__global__ void fill_fp8_kernel(__nv_fp8_e4m3* p, std::size_t n, float scale, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    p[i] = __nv_fp8_e4m3(scale * uniform(seed, i));
}

__global__ void spin_kernel(std::uint64_t ns) {
  std::uint64_t t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    __nanosleep(1000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}

// dst = src * (1 + 2^-8), eight bf16 at a time: real arithmetic on every byte moved.
__global__ void stream_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, std::size_t n) {
  const __nv_bfloat162 f = __floats2bfloat162_rn(1.00390625f, 1.00390625f);
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    uint4 v = src[i];
    auto* h = reinterpret_cast<__nv_bfloat162*>(&v);
#pragma unroll
    for (int j = 0; j < 4; ++j) h[j] = __hmul2(h[j], f);
    dst[i] = v;
  }
}

constexpr int D = kAttnRowElems, R = kAttnChunkRows, kWarpsPerBlock = 4;
constexpr int kLd = D + 8;                   // padded shared row (elements): fewer bank conflicts
constexpr int kVecPerLane = R * D / 8 / 32;  // 16-byte vectors each lane moves per chunk (8)

// One warp per 16-row KV chunk at a time. The chunk is read from device memory once, with
// coalesced 16-byte loads issued one chunk ahead (registers) so many loads are in flight, then
// staged in shared memory for the tensor cores: S = Q Kc^T, P = exp(S/16), O += P Vc.
__global__ void attention_kernel(const bf16* __restrict__ q, const bf16* __restrict__ kv, std::size_t chunks,
                                 int qtiles, float* __restrict__ out) {
  __shared__ __align__(32) bf16 kv_tile[kWarpsPerBlock][R * kLd];
  __shared__ __align__(32) float s_tile[kWarpsPerBlock][R * R];
  __shared__ __align__(32) bf16 p_tile[kWarpsPerBlock][R * R];
  const int lane = threadIdx.x % 32, wib = threadIdx.x / 32;
  const std::size_t warp = blockIdx.x * std::size_t(kWarpsPerBlock) + wib;
  const std::size_t warps = std::size_t(gridDim.x) * kWarpsPerBlock;
  bf16* tile = kv_tile[wib];

  wmma::fragment<wmma::accumulator, R, R, R, float> o_acc[D / R];
  for (auto& f : o_acc) wmma::fill_fragment(f, 0.0f);
  uint4 next[kVecPerLane];
  auto fetch = [&](std::size_t c) {
    const uint4* src = reinterpret_cast<const uint4*>(kv + c * R * D);
#pragma unroll
    for (int j = 0; j < kVecPerLane; ++j) next[j] = src[lane + 32 * j];
  };
  if (warp < chunks) fetch(warp);
  for (std::size_t c = warp; c < chunks; c += warps) {
    __syncwarp();  // the previous chunk's tensor-core reads of `tile` are done
#pragma unroll
    for (int j = 0; j < kVecPerLane; ++j) {
      const int i = lane + 32 * j, row = i / (D / 8), col = (i % (D / 8)) * 8;
      *reinterpret_cast<uint4*>(tile + row * kLd + col) = next[j];
    }
    __syncwarp();
    if (c + warps < chunks) fetch(c + warps);  // in flight while this chunk computes
    for (int qt = 0; qt < qtiles; ++qt) {
      wmma::fragment<wmma::accumulator, R, R, R, float> s_acc;
      wmma::fill_fragment(s_acc, 0.0f);
#pragma unroll
      for (int kk = 0; kk < D / R; ++kk) {
        wmma::fragment<wmma::matrix_a, R, R, R, bf16, wmma::row_major> a;
        wmma::fragment<wmma::matrix_b, R, R, R, bf16, wmma::col_major> b;  // K^T
        wmma::load_matrix_sync(a, q + qt * R * D + kk * R, D);
        wmma::load_matrix_sync(b, tile + kk * R, kLd);
        wmma::mma_sync(s_acc, a, b, s_acc);
      }
      wmma::store_matrix_sync(s_tile[wib], s_acc, R, wmma::mem_row_major);
      __syncwarp();
      for (int i = lane; i < R * R; i += 32) p_tile[wib][i] = __float2bfloat16(__expf(s_tile[wib][i] * 0.0625f));
      __syncwarp();
      wmma::fragment<wmma::matrix_a, R, R, R, bf16, wmma::row_major> p;
      wmma::load_matrix_sync(p, p_tile[wib], R);
#pragma unroll
      for (int nn = 0; nn < D / R; ++nn) {
        wmma::fragment<wmma::matrix_b, R, R, R, bf16, wmma::row_major> v;
        wmma::load_matrix_sync(v, tile + nn * R, kLd);
        wmma::mma_sync(o_acc[nn], p, v, o_acc[nn]);
      }
    }
  }
  for (int nn = 1; nn < D / R; ++nn)
    for (int i = 0; i < o_acc[0].num_elements; ++i) o_acc[0].x[i] += o_acc[nn].x[i];
  wmma::store_matrix_sync(out + warp * R * R, o_acc[0], R, wmma::mem_row_major);
}

void check_launch(const char* what) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

int blocks_for(std::size_t n, int threads, int cap) {
  return int(std::max<std::size_t>(1, std::min<std::size_t>((n + threads - 1) / threads, std::size_t(cap))));
}

}  // namespace

void fill_random(void* p, std::size_t n, bool fp8, float scale, std::uint64_t seed, cudaStream_t s) {
  if (n == 0) return;
  if (fp8) fill_fp8_kernel<<<blocks_for(n, 256, 4096), 256, 0, s>>>(static_cast<__nv_fp8_e4m3*>(p), n, scale, seed);
  else fill_bf16_kernel<<<blocks_for(n, 256, 4096), 256, 0, s>>>(static_cast<bf16*>(p), n, scale, seed);
  check_launch("fill_random");
}

void spin(std::uint64_t ns, cudaStream_t s) {
  spin_kernel<<<1, 1, 0, s>>>(ns);
  check_launch("spin");
}

void stream_bytes(const void* src, void* dst, std::size_t vec16, int sms, cudaStream_t s) {
  // Precondition: src and dst 16-byte aligned (cudaMalloc gives 256) and vec16 >= 1.
  if (vec16 == 0) throw std::runtime_error("stream_bytes: nothing to move");
  stream_kernel<<<blocks_for(vec16, 256, sms * 8), 256, 0, s>>>(static_cast<const uint4*>(src), static_cast<uint4*>(dst), vec16);
  check_launch("stream_bytes");
}

void attention(const void* q, const void* kv, std::size_t chunks, int qtiles, float* out, int warps, cudaStream_t s) {
  // Preconditions: kv holds chunks x 16 x 128 bf16, q holds qtiles x 16 x 128, warps a multiple of 4.
  if (chunks == 0 || qtiles < 1 || warps < kWarpsPerBlock || warps % kWarpsPerBlock)
    throw std::runtime_error("attention: bad launch shape");
  attention_kernel<<<warps / kWarpsPerBlock, kWarpsPerBlock * 32, 0, s>>>(static_cast<const bf16*>(q),
                                                                         static_cast<const bf16*>(kv), chunks, qtiles, out);
  check_launch("attention");
}

}  // namespace specsim::replay
