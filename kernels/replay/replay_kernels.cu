// The replay's own kernels. Preconditions sit beside each launcher.
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <mma.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "cuda_check.h"
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
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    p[i] = __float2bfloat16(scale * uniform(seed, i));
}

__global__ void fill_fp8_kernel(__nv_fp8_e4m3* p, std::size_t n, float scale, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
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
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    uint4 v = src[i];
    auto* h = reinterpret_cast<__nv_bfloat162*>(&v);
#pragma unroll
    for (int j = 0; j < 4; ++j) h[j] = __hmul2(h[j], f);
    dst[i] = v;
  }
}

constexpr int D = kAttnRowElems, R = kAttnChunkRows;
constexpr int kWarpsPerCta = 4, kStages = 3;  // 3 stages: two chunks in flight per warp while one computes
constexpr int kLd = D + 8;                    // padded shared row (elements): fewer bank conflicts
constexpr int kTileElems = R * kLd;           // one staged 16-row tile
constexpr int kVecPerLane = R * D / 8 / 32;   // 16-byte vectors each lane copies per chunk (8)
constexpr int kPair = 2;                      // query tiles computed together (two independent MMA chains)
// Per warp: kStages KV tiles, kPair S tiles (fp32) and kPair P tiles (bf16).
constexpr std::size_t kWarpSmem = kStages * kTileElems * 2 + kPair * R * R * (4 + 2);

using KFrag = wmma::fragment<wmma::matrix_b, R, R, R, bf16, wmma::col_major>;  // K^T
using VFrag = wmma::fragment<wmma::matrix_b, R, R, R, bf16, wmma::row_major>;
using Acc = wmma::fragment<wmma::accumulator, R, R, R, float>;

__device__ inline void cp_async16(void* smem, const void* gmem) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
}
__device__ inline void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ inline void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// P query tiles from q_s (P = 1 or 2: two tiles give the tensor cores two independent chains)
// against one chunk: S = Q Kc^T, P = bf16(exp(S/16)) through shared memory, O += P Vc.
template <int P>
__device__ inline void query_tiles(const bf16* q_s, const KFrag (&k)[D / R], const VFrag (&v)[D / R], float* s_tile,
                                   bf16* p_tile, int lane, Acc (&o)[D / R]) {
  Acc s[P];
#pragma unroll
  for (int t = 0; t < P; ++t) wmma::fill_fragment(s[t], 0.0f);
#pragma unroll
  for (int kk = 0; kk < D / R; ++kk)
#pragma unroll
    for (int t = 0; t < P; ++t) {
      wmma::fragment<wmma::matrix_a, R, R, R, bf16, wmma::row_major> a;
      wmma::load_matrix_sync(a, q_s + t * kTileElems + kk * R, kLd);
      wmma::mma_sync(s[t], a, k[kk], s[t]);
    }
#pragma unroll
  for (int t = 0; t < P; ++t) {
    for (int i = 0; i < s[t].num_elements; ++i) s[t].x[i] = __expf(s[t].x[i] * 0.0625f);
    wmma::store_matrix_sync(s_tile + t * R * R, s[t], R, wmma::mem_row_major);
  }
  __syncwarp();
  for (int i = lane; i < P * R * R; i += 32) p_tile[i] = __float2bfloat16(s_tile[i]);
  __syncwarp();
#pragma unroll
  for (int t = 0; t < P; ++t) {
    wmma::fragment<wmma::matrix_a, R, R, R, bf16, wmma::row_major> pf;
    wmma::load_matrix_sync(pf, p_tile + t * R * R, R);
#pragma unroll
    for (int nn = 0; nn < D / R; ++nn) wmma::mma_sync(o[nn], pf, v[nn], o[nn]);
  }
  __syncwarp();  // s_tile and p_tile are reused by the next call
}

// Split-KV decode attention (flash-decoding). Grid x: query groups of `group_tiles` tiles (a
// real kernel's query blocks; small caches get more groups so every SM has work); grid y: KV
// splits. CTAs of one split sit next to each other in launch order, so the groups after the
// first find the chunk in L2. Each CTA stages its query tiles in shared memory once; each warp
// streams its chunks with cp.async, kStages deep, moves a chunk's K^T and V fragments to
// registers and runs every query tile of its group against it on tensor cores.
__global__ void __launch_bounds__(kWarpsPerCta * 32)
    attention_kernel(const bf16* __restrict__ q, const bf16* __restrict__ kv, std::size_t chunks, int qtiles,
                     int group_tiles, float* __restrict__ out) {
  const int qt0 = blockIdx.x * group_tiles;
  const int nq = min(group_tiles, qtiles - qt0);
  q += std::size_t(qt0) * R * D;
  extern __shared__ __align__(128) unsigned char smem[];
  bf16* q_s = reinterpret_cast<bf16*>(smem);
  const int lane = threadIdx.x % 32, wib = threadIdx.x / 32;
  unsigned char* mine = smem + std::size_t(group_tiles) * kTileElems * 2 + wib * kWarpSmem;
  bf16* stage = reinterpret_cast<bf16*>(mine);
  float* s_tile = reinterpret_cast<float*>(mine + kStages * kTileElems * 2);
  bf16* p_tile = reinterpret_cast<bf16*>(s_tile + kPair * R * R);

  for (int i = threadIdx.x; i < nq * R * D / 8; i += blockDim.x) {
    const int row = i / (D / 8), col = (i % (D / 8)) * 8;
    *reinterpret_cast<uint4*>(q_s + row * kLd + col) = reinterpret_cast<const uint4*>(q)[i];
  }
  __syncthreads();

  const std::size_t warp = blockIdx.y * std::size_t(kWarpsPerCta) + wib;
  const std::size_t warps = std::size_t(gridDim.y) * kWarpsPerCta;
  // Chunk c into stage st; an empty group past the end keeps the wait count uniform.
  auto issue = [&](std::size_t c, int st) {
    if (c < chunks) {
      const bf16* src = kv + c * R * D;
      bf16* dst = stage + st * kTileElems;
#pragma unroll
      for (int j = 0; j < kVecPerLane; ++j) {
        const int i = lane + 32 * j, row = i / (D / 8), col = (i % (D / 8)) * 8;
        cp_async16(dst + row * kLd + col, src + row * D + col);
      }
    }
    cp_async_commit();
  };
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) issue(warp + s * warps, s);

  Acc o_acc[D / R];
  for (auto& f : o_acc) wmma::fill_fragment(f, 0.0f);
  int st = 0;
  for (std::size_t c = warp; c < chunks; c += warps) {
    cp_async_wait<kStages - 2>();  // this warp's chunk c has landed
    __syncwarp();
    const bf16* tile = stage + st * kTileElems;
    KFrag k_frag[D / R];
    VFrag v_frag[D / R];
#pragma unroll
    for (int kk = 0; kk < D / R; ++kk) {
      wmma::load_matrix_sync(k_frag[kk], tile + kk * R, kLd);
      wmma::load_matrix_sync(v_frag[kk], tile + kk * R, kLd);
    }
    __syncwarp();  // the previous chunk's stage is free: refill it
    issue(c + (kStages - 1) * warps, (st + kStages - 1) % kStages);
    st = (st + 1) % kStages;
    int qt = 0;
    for (; qt + kPair <= nq; qt += kPair)
      query_tiles<kPair>(q_s + qt * kTileElems, k_frag, v_frag, s_tile, p_tile, lane, o_acc);
    if (qt < nq) query_tiles<1>(q_s + qt * kTileElems, k_frag, v_frag, s_tile, p_tile, lane, o_acc);
  }
  cp_async_wait<0>();
  for (int nn = 1; nn < D / R; ++nn)
    for (int i = 0; i < o_acc[0].num_elements; ++i) o_acc[0].x[i] += o_acc[nn].x[i];
  wmma::store_matrix_sync(out + (std::size_t(blockIdx.x) * warps + warp) * R * R, o_acc[0], R, wmma::mem_row_major);
}

int blocks_for(std::size_t n, int threads, int cap) {
  return int(std::max<std::size_t>(1, std::min<std::size_t>((n + threads - 1) / threads, std::size_t(cap))));
}

}  // namespace

void fill_random(void* p, std::size_t n, bool fp8, float scale, std::uint64_t seed, cudaStream_t s) {
  if (n == 0) return;
  if (fp8)
    fill_fp8_kernel<<<blocks_for(n, 256, 4096), 256, 0, s>>>(static_cast<__nv_fp8_e4m3*>(p), n, scale, seed);
  else
    fill_bf16_kernel<<<blocks_for(n, 256, 4096), 256, 0, s>>>(static_cast<bf16*>(p), n, scale, seed);
  GPU_CHECK(cudaGetLastError());
}

void spin(std::uint64_t ns, cudaStream_t s) {
  spin_kernel<<<1, 1, 0, s>>>(ns);
  GPU_CHECK(cudaGetLastError());
}

void stream_bytes(const void* src, void* dst, std::size_t vec16, int sms, cudaStream_t s) {
  // Precondition: src and dst 16-byte aligned (cudaMalloc gives 256) and vec16 >= 1.
  if (vec16 == 0) throw std::runtime_error("stream_bytes: nothing to move");
  stream_kernel<<<blocks_for(vec16, 256, sms * 8), 256, 0, s>>>(static_cast<const uint4*>(src),
                                                                static_cast<uint4*>(dst), vec16);
  GPU_CHECK(cudaGetLastError());
}

AttentionLaunch plan_attention(std::size_t chunks, int qtiles) {
  if (chunks == 0 || qtiles < 1) throw std::runtime_error("attention: bad shape");
  int dev = 0, sms = 0;
  GPU_CHECK(cudaGetDevice(&dev));
  GPU_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  // The limit is the kernel's (per device), so it is set to the largest group any plan uses.
  const std::size_t max_smem = std::size_t(kAttnMaxQTiles) * kTileElems * 2 + kWarpsPerCta * kWarpSmem;
  GPU_CHECK(cudaFuncSetAttribute(attention_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(max_smem)));
  auto ctas_per_sm = [](std::size_t smem) {
    int n = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, attention_kernel, kWarpsPerCta * 32, smem) != cudaSuccess ||
        n < 1)
      throw std::runtime_error("attention: the kernel does not fit on this GPU");
    return n;
  };
  AttentionLaunch l;
  l.chunks = chunks, l.qtiles = qtiles;
  const std::size_t want = (chunks + kWarpsPerCta - 1) / kWarpsPerCta;  // CTAs for one chunk per warp
  // Query tiles per group: the split that gives the busiest warp the least work (chunks x (tiles
  // + 1 for the chunk's own load)). Small caches get many groups so every SM has work; large
  // ones keep all tiles in one group and read the KV once. Ties go to the larger group.
  double best = 0;
  for (int t = std::min(qtiles, kAttnMaxQTiles); t >= 1; --t) {
    const int groups = (qtiles + t - 1) / t;
    const std::size_t smem = std::size_t(t) * kTileElems * 2 + kWarpsPerCta * kWarpSmem;
    const std::size_t full = std::size_t(sms) * std::size_t(ctas_per_sm(smem));
    const std::size_t ctas = std::min(want, std::max<std::size_t>(1, full / std::size_t(groups)));
    const double per_warp = std::ceil(double(chunks) / double(ctas * kWarpsPerCta));
    const double cost = per_warp * (t + 1);
    if (l.ctas == 0 || cost < best)
      best = cost, l.group_tiles = t, l.groups = groups, l.smem = smem, l.ctas = int(ctas);
  }
  return l;
}

std::size_t attention_out_floats(const AttentionLaunch& l) {
  return std::size_t(l.ctas) * std::size_t(l.groups) * kWarpsPerCta * kAttnChunkRows * kAttnChunkRows;
}

void attention(const void* q, const void* kv, const AttentionLaunch& l, float* out, cudaStream_t s) {
  // Preconditions: l from plan_attention on this device; kv holds l.chunks x 16 x 128 bf16, q holds
  // l.qtiles x 16 x 128 bf16, out holds attention_out_floats(l).
  if (l.ctas < 1) throw std::runtime_error("attention: launch not planned");
  attention_kernel<<<dim3(unsigned(l.groups), unsigned(l.ctas)), kWarpsPerCta * 32, l.smem, s>>>(
      static_cast<const bf16*>(q), static_cast<const bf16*>(kv), l.chunks, l.qtiles, l.group_tiles, out);
  GPU_CHECK(cudaGetLastError());
}

}  // namespace specsim::replay
