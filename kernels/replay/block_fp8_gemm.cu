// The block-scaled fp8 GEMM and the per-token-group quantization in front of it. At the token
// counts of decode and verify (M <= 64) the GEMM is bound by reading W, so the kernel is built to
// stream W once at full width: each warp owns 16 rows of W and a share of K, each lane loads 16
// bytes of two rows per step, and the tokens sit on the MMA's narrow (8-wide) side. K is consumed
// in 64-wide steps whose fp32 partials get the two scales (weight block, token group) before they
// join the accumulator, so any share of K per warp is valid.
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "block_fp8_gemm.h"
#include "cuda_check.h"

namespace specsim::replay {
namespace {

constexpr int kBfWarps = 8;      // warps per CTA; they split K and add their shares at the end
constexpr int kBfTileRows = 16;  // rows of W per warp tile (the MMA's M side)
constexpr int kBfStep = 64;      // K per step: 4 lanes x 16 bytes of one row
// Steps whose W loads a warp has in flight together: 8 (4 KB a warp) where few token tiles leave
// registers for them, 4 at 32 and 64 tokens.
template <int MT>
constexpr int kBfUnroll = MT <= 2 ? 8 : 4;
constexpr int kBfTokens = 8;  // tokens per MMA (its N side)
constexpr float kE4m3Max = 448.0f;

// D[16x8] += A[16x32] B[32x8], fp8 e4m3 in, fp32 accumulate (sm_89+).
__device__ __forceinline__ void mma_e4m3(float (&d)[4], unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned b0,
                                         unsigned b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#else
  __trap();  // the host launcher refuses devices without fp8 tensor cores
#endif
}

// K order inside a step: lane (row g, quad t) holds bytes [16t, 16t+16) of the step for rows g and
// g+8; MMA j takes bytes [16t+8j, 16t+8j+8). The A fragment wants k = 4t..4t+3 and 16+4t.. of
// a 32-wide slab; reading those as the lane's own 8 bytes permutes K identically for W and the
// activations (same lane-to-byte map on both sides), which leaves every dot product unchanged.
template <int MT>
__global__ void __launch_bounds__(kBfWarps * 32)
    block_fp8_kernel(const std::uint8_t* __restrict__ A, const float* __restrict__ As,
                     const std::uint8_t* __restrict__ W, const float* __restrict__ Ws, __nv_bfloat16* __restrict__ C,
                     int M, int N, int K, int rt) {
  __shared__ float red[kBfWarps][MT * 4][32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int gid = lane >> 2, quad = lane & 3;
  const int kg = (K + kFp8Group - 1) / kFp8Group, steps = (K + kBfStep - 1) / kBfStep;
  const int nblk = (N + kFp8Group - 1) / kFp8Group;
  const long long bz = blockIdx.y;
  A += bz * M * (long long)K;
  As += bz * M * (long long)kg;
  W += bz * N * (long long)K;
  Ws += bz * nblk * (long long)kg;
  C += bz * M * (long long)N;
  const int m0 = int(blockIdx.z) * MT * kBfTokens;
  const int tile = warp % rt, slice = warp / rt, slices = kBfWarps / rt;
  const int row0 = (int(blockIdx.x) * rt + tile) * kBfTileRows;
  const int r_lo = row0 + gid, r_hi = row0 + gid + 8;
  float acc[MT][4] = {};
  if (row0 < N) {
    const float* ws_row = Ws + (row0 / kFp8Group) * (long long)kg;  // 16 rows lie in one 128-row block
    for (int s0 = slice; s0 < steps; s0 += slices * kBfUnroll<MT>) {
      uint4 wl[kBfUnroll<MT>], wh[kBfUnroll<MT>];
#pragma unroll
      for (int i = 0; i < kBfUnroll<MT>; ++i) {  // all of this round's W loads first: bytes in flight
        const int k = (s0 + i * slices) * kBfStep + quad * 16;
        const bool kin = s0 + i * slices < steps && k < K;
        wl[i] = kin && r_lo < N ? __ldcs(reinterpret_cast<const uint4*>(W + r_lo * (long long)K + k))
                                : make_uint4(0, 0, 0, 0);
        wh[i] = kin && r_hi < N ? __ldcs(reinterpret_cast<const uint4*>(W + r_hi * (long long)K + k))
                                : make_uint4(0, 0, 0, 0);
      }
#pragma unroll
      for (int i = 0; i < kBfUnroll<MT>; ++i) {
        const int s = s0 + i * slices;
        if (s >= steps) break;
        const int k = s * kBfStep + quad * 16, g = s * kBfStep / kFp8Group;
        const float ws = __ldg(ws_row + g);
#pragma unroll
        for (int t = 0; t < MT; ++t) {
          const int m = m0 + t * kBfTokens + gid;
          const uint4 x =
              k < K && m < M ? __ldg(reinterpret_cast<const uint4*>(A + m * (long long)K + k)) : make_uint4(0, 0, 0, 0);
          float p[4] = {0.f, 0.f, 0.f, 0.f};
          mma_e4m3(p, wl[i].x, wh[i].x, wl[i].y, wh[i].y, x.x, x.y);
          mma_e4m3(p, wl[i].z, wh[i].z, wl[i].w, wh[i].w, x.z, x.w);
          const int ma = m0 + t * kBfTokens + quad * 2;  // this lane's two output tokens
          const float sa = ma < M ? __ldg(As + ma * (long long)kg + g) * ws : 0.f;
          const float sb = ma + 1 < M ? __ldg(As + (ma + 1) * (long long)kg + g) * ws : 0.f;
          acc[t][0] += p[0] * sa, acc[t][1] += p[1] * sb, acc[t][2] += p[2] * sa, acc[t][3] += p[3] * sb;
        }
      }
    }
  }
#pragma unroll
  for (int t = 0; t < MT; ++t)
#pragma unroll
    for (int j = 0; j < 4; ++j) red[warp][t * 4 + j][lane] = acc[t][j];
  __syncthreads();
  if (slice != 0 || row0 >= N) return;
  for (int s = 1; s < slices; ++s)
#pragma unroll
    for (int t = 0; t < MT; ++t)
#pragma unroll
      for (int j = 0; j < 4; ++j) acc[t][j] += red[s * rt + tile][t * 4 + j][lane];
#pragma unroll
  for (int t = 0; t < MT; ++t) {
    const int ma = m0 + t * kBfTokens + quad * 2;
    for (int h = 0; h < 2; ++h) {
      const int m = ma + h;
      if (m >= M) continue;
      if (r_lo < N) C[m * (long long)N + r_lo] = __float2bfloat16(acc[t][h]);
      if (r_hi < N) C[m * (long long)N + r_hi] = __float2bfloat16(acc[t][2 + h]);
    }
  }
}

// One warp per (row, 128-wide group): 4 bf16 per lane, the group's |max| across the warp.
__global__ void quant_fp8_groups_kernel(const __nv_bfloat16* __restrict__ x, std::uint8_t* __restrict__ q,
                                        float* __restrict__ scales, long long rows, int K) {
  const int kg = (K + kFp8Group - 1) / kFp8Group, lane = threadIdx.x & 31;
  const long long w = (blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5;
  if (w >= rows * kg) return;
  const long long row = w / kg;
  const int g = int(w % kg), k = g * kFp8Group + lane * 4;
  const bool in = k < K;  // K is a multiple of 16: a lane's 4 values are all in or all out
  float v[4] = {0.f, 0.f, 0.f, 0.f};
  if (in) {
    const uint2 raw = *reinterpret_cast<const uint2*>(x + row * K + k);
    const auto* h = reinterpret_cast<const __nv_bfloat16*>(&raw);
#pragma unroll
    for (int i = 0; i < 4; ++i) v[i] = __bfloat162float(h[i]);
  }
  float amax = fmaxf(fmaxf(fabsf(v[0]), fabsf(v[1])), fmaxf(fabsf(v[2]), fabsf(v[3])));
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, o));
  const float scale = fmaxf(amax, 1e-10f) / kE4m3Max;
  if (in) {
    unsigned packed = 0;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const __nv_fp8_e4m3 f(fminf(fmaxf(v[i] / scale, -kE4m3Max), kE4m3Max));
      packed |= unsigned(f.__x) << (8 * i);
    }
    *reinterpret_cast<unsigned*>(q + row * K + k) = packed;
  }
  if (lane == 0) scales[row * kg + g] = scale;
}

template <int MT>
void launch_block_fp8(const void* a, const float* as, const void* w, const float* ws, void* c, const BlockFp8Shape& s,
                      cudaStream_t st) {
  const long long steps = (s.k + kBfStep - 1) / kBfStep;
  int rt = 1;  // row tiles per CTA: more when K is too short to give every warp a step
  while (rt < kBfWarps && kBfWarps / rt > steps) rt *= 2;
  const long long tiles = (s.n + kBfTileRows - 1) / kBfTileRows;
  const dim3 grid(unsigned((tiles + rt - 1) / rt), unsigned(s.batch),
                  unsigned((s.m + MT * kBfTokens - 1) / (MT * kBfTokens)));
  block_fp8_kernel<MT>
      <<<grid, kBfWarps * 32, 0, st>>>(static_cast<const std::uint8_t*>(a), as, static_cast<const std::uint8_t*>(w), ws,
                                       static_cast<__nv_bfloat16*>(c), int(s.m), int(s.n), int(s.k), rt);
}

}  // namespace

bool block_fp8_shape_ok(const BlockFp8Shape& s) {
  const bool positive = s.m >= 1 && s.n >= 1 && s.k >= 16 && s.batch >= 1;
  return positive && s.k % 16 == 0 && s.n <= INT_MAX && s.k <= INT_MAX && s.batch <= 65535 &&
         (s.m + 63) / 64 <= 65535;  // grid y and z limits
}

bool block_fp8_device_ok() {
  int dev = 0, major = 0, minor = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return false;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess) return false;
  if (cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess) return false;
  return major * 10 + minor >= 89;
}

void block_fp8_gemm(const void* a, const float* a_scales, const void* w, const float* w_scales, void* c,
                    const BlockFp8Shape& s, cudaStream_t st) {
  if (!block_fp8_shape_ok(s))
    throw std::invalid_argument("block_fp8_gemm: shape " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
                                std::to_string(s.k) + " x" + std::to_string(s.batch) +
                                " (needs sizes >= 1, K a multiple of 16, batch <= 65535)");
  // Token tiles per pass: the fewest MMAs that cover M (up to 64 tokens; more run in chunks).
  if (s.m <= 8)
    launch_block_fp8<1>(a, a_scales, w, w_scales, c, s, st);
  else if (s.m <= 16)
    launch_block_fp8<2>(a, a_scales, w, w_scales, c, s, st);
  else if (s.m <= 32)
    launch_block_fp8<4>(a, a_scales, w, w_scales, c, s, st);
  else
    launch_block_fp8<8>(a, a_scales, w, w_scales, c, s, st);
  GPU_CHECK(cudaGetLastError());
}

void quant_fp8_groups(const void* x, void* q, float* scales, std::int64_t rows, std::int64_t k, cudaStream_t st) {
  if (rows < 1 || k < 16 || k % 16 != 0 || k > INT_MAX)
    throw std::invalid_argument("quant_fp8_groups: " + std::to_string(rows) + " rows of " + std::to_string(k) +
                                " (needs rows >= 1, K a multiple of 16)");
  const long long warps = rows * ((k + kFp8Group - 1) / kFp8Group);
  const int threads = 256;
  quant_fp8_groups_kernel<<<unsigned((warps * 32 + threads - 1) / threads), threads, 0, st>>>(
      static_cast<const __nv_bfloat16*>(x), static_cast<std::uint8_t*>(q), scales, rows, int(k));
  GPU_CHECK(cudaGetLastError());
}

}  // namespace specsim::replay
