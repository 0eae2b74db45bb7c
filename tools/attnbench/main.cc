// specsim-attnbench: the replay's attention kernel on shapes of the model zoo, each KV read from
// memory (buffers rotate over more than 4x the L2), timed as CUDA-graph replays of >= 20 launches.
// Prints time per launch, KV bandwidth and tensor-core FLOP rate; the figures feed
// attention_fixed_us / attention_memory_efficiency in models/hardware/gpus/*.json.
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_check.h"
#include "error_boundary.h"
#include "replay_kernels.h"
#include "util/error.h"

using namespace specsim::replay;

namespace {

struct Shape {
  const char* what;
  double kv_bytes;
  int qtiles;
};

/// The flags: how many timed replays, and which shapes.
struct Flags {
  int iters = 30;
  std::string only;  ///< run the shapes whose name holds this text ("" = all)
  bool list = false;
};

double time_shape(const Shape& s, double l2_bytes, cudaStream_t st, int iters) {
  const std::size_t chunks = std::size_t(s.kv_bytes / (kAttnChunkRows * kAttnRowElems * 2));
  const AttentionLaunch l = plan_attention(chunks, s.qtiles);
  const std::size_t bytes = chunks * kAttnChunkRows * kAttnRowElems * 2;
  // Rotate over more than 4x the L2, as the replay's KV slots do, so every launch reads memory.
  const int nbuf = int(std::clamp(std::ceil(4.0 * l2_bytes / double(bytes)), 1.0, 1000.0));
  const int kLaunches = std::max(20, nbuf);
  std::vector<void*> kv(std::size_t(nbuf), nullptr);
  void* q = nullptr;
  float* out = nullptr;
  for (auto& p : kv) {
    GPU_CHECK(cudaMalloc(&p, bytes));
    fill_random(p, bytes / 2, false, 1.0f, 7, st);
  }
  GPU_CHECK(cudaMalloc(&q, std::size_t(s.qtiles) * kAttnChunkRows * kAttnRowElems * 2));
  GPU_CHECK(cudaMalloc(&out, attention_out_floats(l) * 4));
  fill_random(q, std::size_t(s.qtiles) * kAttnChunkRows * kAttnRowElems, false, 0.1f, 3, st);
  cudaGraph_t g;
  cudaGraphExec_t ge;
  GPU_CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < kLaunches; ++i) attention(q, kv[std::size_t(i % nbuf)], l, out, st);
  GPU_CHECK(cudaStreamEndCapture(st, &g));
  GPU_CHECK(cudaGraphInstantiate(&ge, g, 0));
  cudaEvent_t e0, e1;
  GPU_CHECK(cudaEventCreate(&e0));
  GPU_CHECK(cudaEventCreate(&e1));
  std::vector<double> t;
  for (int i = 0; i < iters + 3; ++i) {
    GPU_CHECK(cudaEventRecord(e0, st));
    GPU_CHECK(cudaGraphLaunch(ge, st));
    GPU_CHECK(cudaEventRecord(e1, st));
    GPU_CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    GPU_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    if (i >= 3) t.push_back(ms * 1e3 / kLaunches);
  }
  std::sort(t.begin(), t.end());
  const double us = t[t.size() / 2];
  const double flops = 4.0 * double(chunks) * kAttnChunkRows * kAttnChunkRows * kAttnRowElems * s.qtiles;
  fmt::print("{:<36} {:>8.1f} {:>4} {:>4}x{:<4} {:>9.2f} {:>8.0f} {:>8.1f}\n", s.what, double(bytes) / 1e6, s.qtiles,
             l.groups, l.ctas, us, double(bytes) / us / 1e3, flops / us / 1e6);
  cudaGraphExecDestroy(ge), cudaGraphDestroy(g), cudaEventDestroy(e0), cudaEventDestroy(e1);
  for (auto p : kv) cudaFree(p);
  cudaFree(q), cudaFree(out);
  return us;
}

/// Times every selected shape on GPU 0; throws on a CUDA failure.
int run(const Flags& f) {
  // KV bytes and query tiles per layer of one rank, context 2048 (see prepare_attention in op_prep.cc).
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
  std::vector<Shape> chosen;
  for (const auto& s : shapes)
    if (std::string(s.what).find(f.only) != std::string::npos) chosen.push_back(s);
  if (chosen.empty()) throw specsim::InputError("no shape name holds '" + f.only + "'", "--only; --list shows them");
  if (f.list) {
    for (const auto& s : chosen) fmt::print("{}\n", s.what);
    return 0;
  }
  int dev = 0;
  cudaDeviceProp prop{};
  if (cudaGetDeviceCount(&dev) != cudaSuccess || dev == 0) {
    std::fprintf(stderr, "error: no CUDA GPU found (specsim-attnbench)\n");
    return 2;
  }
  GPU_CHECK(cudaGetDeviceProperties(&prop, 0));
  cudaStream_t st;
  GPU_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));

  fmt::print("{} ({} SMs), one graph of >= 20 launches over KV buffers > 4x L2, median of {} replays\n", prop.name,
             prop.multiProcessorCount, f.iters);
  fmt::print("{:<36} {:>8} {:>4} {:>9} {:>9} {:>8} {:>8}\n", "shape", "KV MB", "qt", "grid", "us", "GB/s", "TFLOP/s");
  for (const auto& s : chosen) time_shape(s, double(prop.l2CacheSize), st, f.iters);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Flags f;
  CLI::App app{"specsim-attnbench: the replay's attention kernel on model-zoo shapes (time, GB/s, TFLOP/s)"};
  app.add_option("--iters", f.iters, "timed graph replays per shape (median kept)")->check(CLI::Range(1, 100000));
  app.add_option("--only", f.only, "only the shapes whose name holds this text (e.g. deepseek)");
  app.add_flag("--list", f.list, "print the shape names and exit (no GPU needed)");
  return specsim::cli::guarded(app, argc, argv, [&] { return run(f); });
}
