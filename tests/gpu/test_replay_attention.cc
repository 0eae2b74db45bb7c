// The replay's split-KV attention kernel against a CPU reference: every KV chunk must be read
// exactly once per query group and every query tile must meet it, or the summed partials differ.
// Shapes cover one chunk, fewer chunks than warps, more chunks than a wave, odd counts and two
// query groups. No GPU: SKIP, exit 77.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <utility>
#include <vector>

#include "cuda_check.h"
#include "replay_kernels.h"

using namespace specsim::replay;

namespace {

constexpr int R = kAttnChunkRows, D = kAttnRowElems;

std::vector<float> download_bf16(const void* d, std::size_t n) {
  std::vector<__nv_bfloat16> h(n);
  GPU_CHECK(cudaMemcpy(h.data(), d, n * 2, cudaMemcpyDeviceToHost));
  std::vector<float> f(n);
  for (std::size_t i = 0; i < n; ++i) f[i] = __bfloat162float(h[i]);
  return f;
}

// Sum over all warps' 16x16 partials: sum_c sum_qt sum_nn (bf16(exp(Q K^T / 16)) V)[:, nn*16 + j].
std::vector<double> reference(const std::vector<float>& q, const std::vector<float>& kv, std::size_t chunks,
                              int qtiles) {
  std::vector<double> ref(R * R, 0.0);
  for (std::size_t c = 0; c < chunks; ++c) {
    const float* t = kv.data() + c * R * D;
    for (int qt = 0; qt < qtiles; ++qt) {
      const float* qq = q.data() + std::size_t(qt) * R * D;
      for (int i = 0; i < R; ++i)
        for (int r = 0; r < R; ++r) {
          float s = 0;
          for (int d = 0; d < D; ++d) s += qq[i * D + d] * t[r * D + d];
          const double p = __bfloat162float(__float2bfloat16(std::exp(s * 0.0625f)));
          for (int col = 0; col < D; ++col) ref[i * R + col % R] += p * t[r * D + col];
        }
    }
  }
  return ref;
}

bool check(std::size_t chunks, int qtiles) {
  const AttentionLaunch l = plan_attention(chunks, qtiles);
  void *q = nullptr, *kv = nullptr;
  float* out = nullptr;
  GPU_CHECK(cudaMalloc(&q, std::size_t(qtiles) * R * D * 2));
  GPU_CHECK(cudaMalloc(&kv, chunks * R * D * 2));
  const std::size_t n_out = attention_out_floats(l);
  GPU_CHECK(cudaMalloc(&out, n_out * 4));
  GPU_CHECK(cudaMemset(out, 0xff, n_out * 4));  // NaN poison: a warp that writes nothing shows
  fill_random(q, std::size_t(qtiles) * R * D, false, 0.1f, 11 + chunks, nullptr);
  fill_random(kv, chunks * R * D, false, 1.0f, 29 + qtiles, nullptr);
  attention(q, kv, l, out, nullptr);
  GPU_CHECK(cudaDeviceSynchronize());
  std::vector<float> h(n_out);
  GPU_CHECK(cudaMemcpy(h.data(), out, n_out * 4, cudaMemcpyDeviceToHost));
  std::vector<double> got(R * R, 0.0);
  for (std::size_t w = 0; w < n_out / (R * R); ++w)
    for (int i = 0; i < R * R; ++i) got[i] += h[w * R * R + i];
  const auto ref =
      reference(download_bf16(q, std::size_t(qtiles) * R * D), download_bf16(kv, chunks * R * D), chunks, qtiles);
  double worst = 0, scale = 0;
  for (int i = 0; i < R * R; ++i)
    worst = std::max(worst, std::abs(got[i] - ref[i])), scale = std::max(scale, std::abs(ref[i]));
  // One chunk adds ~sqrt(128 * qtiles) to an element; rounding noise is far below 0.25.
  const bool ok = std::isfinite(worst) && worst < 0.25;
  std::printf("%s: chunks %zu qtiles %d (grid %d x %d, %zu B smem): max |err| %.3g (max |ref| %.3g)\n",
              ok ? "ok" : "FAIL", chunks, qtiles, l.ctas, l.groups, l.smem, worst, scale);
  cudaFree(q), cudaFree(kv), cudaFree(out);
  return ok;
}

int run() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    std::printf("SKIP: no CUDA GPU found\n");
    return 77;
  }
  bool ok = true;
  const std::pair<std::size_t, int> shapes[] = {{1, 1},    {3, 1},     {7, 2},    {256, 1}, {1000, 3},
                                                {5003, 1}, {40000, 1}, {333, 25}, {97, 8},  {120, 50}};
  for (const auto& [chunks, qtiles] : shapes) ok = check(chunks, qtiles) && ok;
  // A bad shape is refused before any launch.
  try {
    plan_attention(0, 1);
    std::printf("FAIL: an empty KV was accepted\n");
    ok = false;
  } catch (const std::exception&) {
    std::printf("ok: an empty KV is refused\n");
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
