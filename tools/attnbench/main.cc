// specsim-attnbench: the replay's attention kernel on shapes of the model zoo, each KV read from
// memory (buffers rotate over more than 4x the L2), timed as CUDA-graph replays of >= 20 launches.
// Prints time per launch, KV bandwidth and tensor-core FLOP rate; the figures feed
// attention_fixed_us / attention_memory_efficiency in models/hardware/gpus/*.json.
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "replay_kernels.h"

using namespace specsim::replay;

namespace {

void ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "error: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

struct Shape {
  const char* what;
  double kv_bytes;
  int qtiles;
};

double time_shape(const Shape& s, double l2_bytes, cudaStream_t st) {
  constexpr int kIters = 30;
  const std::size_t chunks = std::size_t(s.kv_bytes / (kAttnChunkRows * kAttnRowElems * 2));
  const AttentionLaunch l = plan_attention(chunks, s.qtiles);
  const std::size_t bytes = chunks * kAttnChunkRows * kAttnRowElems * 2;
  // Rotate over more than 4x the L2, as the replay's KV slots do, so every launch reads memory.
  const int nbuf = int(std::clamp(std::ceil(4.0 * l2_bytes / double(bytes)), 1.0, 1000.0));
  const int kLaunches = std::max(20, nbuf);
  std::vector<void*> kv(std::size_t(nbuf), nullptr);
  void* q = nullptr;
  float* out = nullptr;
  for (auto& p : kv) ok(cudaMalloc(&p, bytes), "cudaMalloc"), fill_random(p, bytes / 2, false, 1.0f, 7, st);
  ok(cudaMalloc(&q, std::size_t(s.qtiles) * kAttnChunkRows * kAttnRowElems * 2), "cudaMalloc");
  ok(cudaMalloc(&out, attention_out_floats(l) * 4), "cudaMalloc");
  fill_random(q, std::size_t(s.qtiles) * kAttnChunkRows * kAttnRowElems, false, 0.1f, 3, st);
  cudaGraph_t g;
  cudaGraphExec_t ge;
  ok(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal), "capture");
  for (int i = 0; i < kLaunches; ++i) attention(q, kv[std::size_t(i % nbuf)], l, out, st);
  ok(cudaStreamEndCapture(st, &g), "capture");
  ok(cudaGraphInstantiate(&ge, g, 0), "instantiate");
  cudaEvent_t e0, e1;
  ok(cudaEventCreate(&e0), "event"), ok(cudaEventCreate(&e1), "event");
  std::vector<double> t;
  for (int i = 0; i < kIters + 3; ++i) {
    ok(cudaEventRecord(e0, st), "record");
    ok(cudaGraphLaunch(ge, st), "launch");
    ok(cudaEventRecord(e1, st), "record");
    ok(cudaEventSynchronize(e1), "sync");
    float ms = 0;
    ok(cudaEventElapsedTime(&ms, e0, e1), "elapsed");
    if (i >= 3) t.push_back(ms * 1e3 / kLaunches);
  }
  std::sort(t.begin(), t.end());
  const double us = t[t.size() / 2];
  const double flops = 4.0 * double(chunks) * kAttnChunkRows * kAttnChunkRows * kAttnRowElems * s.qtiles;
  fmt::print("{:<36} {:>8.1f} {:>4} {:>4}x{:<4} {:>9.2f} {:>8.0f} {:>8.1f}\n", s.what, double(bytes) / 1e6, s.qtiles, l.groups,
             l.ctas, us, double(bytes) / us / 1e3, flops / us / 1e6);
  cudaGraphExecDestroy(ge), cudaGraphDestroy(g), cudaEventDestroy(e0), cudaEventDestroy(e1);
  for (auto p : kv) cudaFree(p);
  cudaFree(q), cudaFree(out);
  return us;
}

}  // namespace

int main() {
  int dev = 0;
  cudaDeviceProp prop{};
  if (cudaGetDeviceCount(&dev) != cudaSuccess || dev == 0) {
    std::fprintf(stderr, "error: no CUDA GPU found (specsim-attnbench)\n");
    return 2;
  }
  ok(cudaGetDeviceProperties(&prop, 0), "properties");
  cudaStream_t st;
  ok(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "stream");
  // KV bytes and query tiles per layer of one rank, context 2048 (see prepare_op in replay_exec.cc).
  const Shape shapes[] = {
      {"llama-3.1-8b tp1 decode b1", 8.39e6, 1},
      {"llama-3.1-8b tp1 verify t16", 8.39e6, 4},
      {"llama-3.1-8b tp1 decode b16", 134.2e6, 1},
      {"llama-3.1-70b tp8 decode b1", 1.05e6, 1},
      {"llama-3.1-70b tp8 verify t16", 1.05e6, 8},
      {"llama-3.1-70b tp8 decode b16", 16.8e6, 1},
      {"deepseek-v3 tp8 decode b1 (MLA)", 2.36e6, 1},
      {"deepseek-v3 tp8 verify t16 (MLA)", 2.36e6, 15},
      {"deepseek-v3 tp8 decode b16 (MLA)", 37.7e6, 1},
      {"KV 0.5 MB", 0.52e6, 1},
      {"KV 4 MB", 4.19e6, 1},
      {"KV 64 MB", 67.1e6, 1},
      {"KV 256 MB", 268.4e6, 1},
      {"KV 1 GB (bandwidth)", 1.07e9, 1},
      {"KV 2.4 MB x 2 query tiles", 2.36e6, 2},
      {"KV 2.4 MB x 4 query tiles", 2.36e6, 4},
      {"KV 2.4 MB x 8 query tiles", 2.36e6, 8},
      {"KV 2.4 MB x 32 query tiles", 2.36e6, 32},
      {"KV 8.4 MB x 8 query tiles", 8.39e6, 8},
      {"KV 8.4 MB x 16 query tiles", 8.39e6, 16},
      {"KV 134 MB x 4 query tiles", 134.2e6, 4},
  };
  fmt::print("{} ({} SMs), one graph of >= 20 launches over KV buffers > 4x L2, median of 30 replays\n", prop.name,
             prop.multiProcessorCount);
  fmt::print("{:<36} {:>8} {:>4} {:>9} {:>9} {:>8} {:>8}\n", "shape", "KV MB", "qt", "grid", "us", "GB/s", "TFLOP/s");
  for (const auto& s : shapes) time_shape(s, double(prop.l2CacheSize), st);
  return 0;
}
