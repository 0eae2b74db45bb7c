// The replay's block-scaled fp8 GEMM and its per-token-group quantization against a CPU
// reference, at DeepSeek-V3's TP-8 shapes (dense and MoE experts, batched), odd token counts,
// token counts past one 64-row pass, and ragged N and K. Every output element is poisoned first
// (an element no warp writes shows as NaN) and a guard zone after C must stay untouched.
// No GPU or no fp8 tensor cores: SKIP, exit 77.
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <random>
#include <vector>

#include "block_fp8_gemm.h"
#include "cuda_check.h"

using namespace specsim::replay;

namespace {

constexpr std::size_t kGuard = 256;  // bf16 elements after C that must keep their poison

float fp8_value(std::uint8_t b) {
  __nv_fp8_e4m3 f;
  f.__x = b;
  return float(f);
}

std::uint8_t fp8_byte(float v) { return __nv_fp8_e4m3(v).__x; }

template <class T>
T* upload(const std::vector<T>& h) {
  T* d = nullptr;
  GPU_CHECK(cudaMalloc(&d, std::max<std::size_t>(h.size() * sizeof(T), 16)));
  GPU_CHECK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

template <class T>
std::vector<T> download(const T* d, std::size_t n) {
  std::vector<T> h(n);
  GPU_CHECK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

struct Case {
  const char* what;
  BlockFp8Shape s;
};

// Quantizes bf16 activations on the GPU and checks bytes and scales against the same rule on the
// CPU; returns the GPU's result (what the GEMM then reads).
bool quantize(const Case& c, std::mt19937& rng, std::vector<std::uint8_t>& q, std::vector<float>& qs) {
  const auto& s = c.s;
  const std::int64_t rows = s.batch * s.m, kg = s.k_groups();
  std::vector<__nv_bfloat16> x(std::size_t(rows * s.k));
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t k = 0; k < s.k; ++k) {
      // rows of different magnitude; group 1 of row 0 all zero (the scale's floor)
      const bool zero = r == 0 && k / kFp8Group == 1;
      x[std::size_t(r * s.k + k)] = __float2bfloat16(zero ? 0.0f : u(rng) * std::pow(10.0f, float(r % 5) - 2));
    }
  auto* dx = upload(x);
  std::uint8_t* dq = nullptr;
  float* ds = nullptr;
  GPU_CHECK(cudaMalloc(&dq, std::size_t(rows * s.k)));
  GPU_CHECK(cudaMalloc(&ds, std::size_t(rows * kg) * 4));
  quant_fp8_groups(dx, dq, ds, rows, s.k, nullptr);
  GPU_CHECK(cudaDeviceSynchronize());
  q = download(dq, std::size_t(rows * s.k));
  qs = download(ds, std::size_t(rows * kg));
  cudaFree(dx), cudaFree(dq), cudaFree(ds);
  std::size_t bad_bytes = 0, bad_scales = 0;
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t g = 0; g < kg; ++g) {
      float amax = 0;
      const std::int64_t k1 = std::min(s.k, (g + 1) * kFp8Group);
      for (std::int64_t k = g * kFp8Group; k < k1; ++k)
        amax = std::max(amax, std::fabs(__bfloat162float(x[std::size_t(r * s.k + k)])));
      const float scale = std::max(amax, 1e-10f) / 448.0f;
      bad_scales += qs[std::size_t(r * kg + g)] != scale;
      for (std::int64_t k = g * kFp8Group; k < k1; ++k) {
        const float v = std::clamp(__bfloat162float(x[std::size_t(r * s.k + k)]) / scale, -448.0f, 448.0f);
        bad_bytes += q[std::size_t(r * s.k + k)] != fp8_byte(v);
      }
    }
  const bool ok = bad_bytes == 0 && bad_scales == 0;
  std::printf("%s: quant %s: %lld rows x %lld: %zu bytes and %zu scales differ from the CPU\n", ok ? "ok" : "FAIL",
              c.what, (long long)rows, (long long)s.k, bad_bytes, bad_scales);
  return ok;
}

// Output columns to check: all of them for small shapes, else the first and last 40 and a spread.
std::vector<std::int64_t> columns(const BlockFp8Shape& s) {
  std::vector<std::int64_t> cols;
  if (s.m * s.n * s.k <= 60'000'000) {
    for (std::int64_t n = 0; n < s.n; ++n) cols.push_back(n);
    return cols;
  }
  for (std::int64_t n = 0; n < s.n; ++n)
    if (n < 40 || n >= s.n - 40 || n % 37 == 5) cols.push_back(n);
  return cols;
}

bool check(const Case& c, std::mt19937& rng) {
  const auto& s = c.s;
  std::vector<std::uint8_t> a;
  std::vector<float> as;
  bool ok = quantize(c, rng, a, as);
  // Weights: fp8 values across the e4m3 range, one positive scale per 128x128 block.
  std::vector<std::uint8_t> w(std::size_t(s.batch * s.n * s.k));
  std::normal_distribution<float> nd(0.0f, 64.0f);
  for (auto& b : w) b = fp8_byte(std::clamp(nd(rng), -448.0f, 448.0f));
  std::vector<float> ws(s.w_scale_floats());
  std::uniform_real_distribution<float> su(0.5e-3f, 2e-3f);
  for (auto& v : ws) v = su(rng);
  auto *da = upload(a), *dw = upload(w);
  auto *das = upload(as), *dws = upload(ws);
  const std::size_t nc = std::size_t(s.batch * s.m * s.n);
  __nv_bfloat16* dc = nullptr;
  GPU_CHECK(cudaMalloc(&dc, (nc + kGuard) * 2));
  GPU_CHECK(cudaMemset(dc, 0xff, (nc + kGuard) * 2));  // NaN poison
  block_fp8_gemm(da, das, dw, dws, dc, s, nullptr);
  GPU_CHECK(cudaDeviceSynchronize());
  const auto out = download(dc, nc + kGuard);
  cudaFree(da), cudaFree(dw), cudaFree(das), cudaFree(dws), cudaFree(dc);

  float lut[256];
  for (int i = 0; i < 256; ++i) lut[i] = fp8_value(std::uint8_t(i));
  const std::int64_t kg = s.k_groups(), nblk = (s.n + kFp8Group - 1) / kFp8Group;
  double worst = 0, worst_ref = 0;
  std::size_t bad = 0, checked = 0;
  const auto cols = columns(s);
  for (std::int64_t b = 0; b < s.batch; ++b)
    for (std::int64_t m = 0; m < s.m; ++m)
      for (const std::int64_t n : cols) {
        double ref = 0, mag = 0;
        const std::uint8_t* ar = a.data() + (b * s.m + m) * s.k;
        const std::uint8_t* wr = w.data() + (b * s.n + n) * s.k;
        for (std::int64_t k = 0; k < s.k; ++k) {
          const std::int64_t g = k / kFp8Group;
          const double t = double(lut[ar[k]]) * lut[wr[k]] * as[std::size_t((b * s.m + m) * kg + g)] *
                           ws[std::size_t((b * nblk + n / kFp8Group) * kg + g)];
          ref += t, mag += std::fabs(t);
        }
        const double got = __bfloat162float(out[std::size_t((b * s.m + m) * s.n + n)]);
        // bf16 output rounding (2^-8 relative) and the fp8 MMA's partial sums (<= 2^-13 of |terms|)
        const double err = std::fabs(got - ref), tol = 4e-3 * std::fabs(ref) + 2e-4 * mag + 1e-30;
        bad += !(err <= tol), ++checked;
        if (err > worst) worst = err, worst_ref = ref;
      }
  std::size_t guard_hit = 0;
  for (std::size_t i = nc; i < nc + kGuard; ++i) {
    std::uint16_t bits;
    std::memcpy(&bits, &out[i], 2);
    guard_hit += bits != 0xffff;
  }
  const bool gemm_ok = bad == 0 && guard_hit == 0;
  std::printf(
      "%s: gemm %s: M %lld N %lld K %lld x%lld: %zu of %zu outputs off (worst |err| %.3g at ref %.3g), %zu "
      "guard elements written\n",
      gemm_ok ? "ok" : "FAIL", c.what, (long long)s.m, (long long)s.n, (long long)s.k, (long long)s.batch, bad, checked,
      worst, worst_ref, guard_hit);
  return ok && gemm_ok;
}

int run() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    std::printf("SKIP: no CUDA GPU found\n");
    return 77;
  }
  if (!block_fp8_device_ok()) {
    std::printf("SKIP: the GPU has no fp8 tensor cores (needs sm_89 or later)\n");
    return 77;
  }
  // DeepSeek-V3 at TP 8, per rank: fused_qkv_a_proj 2112x7168, q_b_proj 3072x1536, o_proj
  // 7168x2048, dense gate_up 4608x7168 and down 7168x2304, a dense N=4096 K=7168, MoE experts
  // w13 512x7168 and w2 7168x256 batched over the experts a few tokens touch.
  const Case cases[] = {
      {"fused_qkv_a_proj", {1, 2112, 7168, 1}},
      {"fused_qkv_a_proj", {3, 2112, 7168, 1}},
      {"fused_qkv_a_proj", {33, 2112, 7168, 1}},
      {"fused_qkv_a_proj", {64, 2112, 7168, 1}},
      {"q_b_proj", {7, 3072, 1536, 1}},
      {"o_proj", {2, 7168, 2048, 1}},
      {"o_proj", {17, 7168, 2048, 1}},
      {"dense_gate_up", {5, 4608, 7168, 1}},
      {"dense N=4096", {13, 4096, 7168, 1}},
      {"dense_down", {9, 7168, 2304, 1}},
      {"moe_w13 x9 experts", {1, 512, 7168, 9}},
      {"moe_w2 x9 experts", {3, 7168, 256, 9}},
      {"moe_w13 x27 experts", {2, 512, 7168, 27}},
      {"two 64-token passes and a part", {150, 2112, 1536, 1}},
      {"ragged N and K", {5, 200, 272, 2}},
      {"one group, one row", {1, 1, 16, 1}},
      {"N=4096 at M=64", {64, 4096, 512, 1}},
  };
  std::mt19937 rng(20261202);
  bool ok = true;
  for (const auto& c : cases) ok = check(c, rng) && ok;
  // Shapes the kernel cannot run are refused before any launch.
  for (const BlockFp8Shape bad : {BlockFp8Shape{1, 64, 100, 1}, BlockFp8Shape{0, 64, 128, 1}}) {
    try {
      block_fp8_gemm(nullptr, nullptr, nullptr, nullptr, nullptr, bad, nullptr);
      std::printf("FAIL: K %lld M %lld was accepted\n", (long long)bad.k, (long long)bad.m);
      ok = false;
    } catch (const std::invalid_argument&) {
      std::printf("ok: K %lld M %lld refused\n", (long long)bad.k, (long long)bad.m);
    }
  }
  std::printf(ok ? "PASS\n" : "FAILED\n");
  return ok ? 0 : 1;
}

}  // namespace

int main() {
  try {
    return run();
  } catch (const std::exception& e) {  // a failed CUDA call (GPU_CHECK): a failure, not a skip
    std::printf("FAIL: %s\n", e.what());
    return 1;
  }
}
