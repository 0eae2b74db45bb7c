#pragma once
// specsim-arbench: the ranks being measured (virtual ranks on one GPU or one rank a GPU) and the
// timing loop every table uses (eager calls or one CUDA graph of calls, host clock).
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "cuda_check.h"
#include "custom_allreduce.h"

namespace specsim::arbench {

namespace car = specsim::car;
using car::DType;
using car::Variant;

/// The ranks being measured: one stream per GPU (one stream in virtual mode).
struct Ranks {
  int world = 0;
  bool virt = true;
  std::vector<int> dev;                                   ///< device of each rank
  std::vector<cudaStream_t> st;                           ///< one per GPU
  std::vector<void*> in, out;                             ///< per rank, max bytes each
  std::unique_ptr<car::Communicator> vcomm;               ///< virtual mode
  std::vector<std::unique_ptr<car::Communicator>> comms;  ///< multi-GPU mode
  std::vector<ncclComm_t> nccl;                           ///< multi-GPU mode only

  void sync() {
    for (std::size_t i = 0; i < st.size(); ++i) {
      GPU_CHECK(cudaSetDevice(dev[virt ? 0 : i]));
      GPU_CHECK(cudaStreamSynchronize(st[i]));
    }
    if (virt) vcomm->check();
    for (auto& c : comms) c->check();
  }
};

inline  /// Host-clock time per call of `enqueue_one` (one call on every rank): `iters` calls after
        /// `warmup` eagerly, or one captured graph of `iters` calls replayed after warm-up replays.
    double
    time_calls(Ranks& R, const std::function<void()>& enqueue_one, int iters, int warmup, bool graph) {
  GPU_CHECK(cudaSetDevice(R.dev[0]));
  using Clock = std::chrono::steady_clock;
  if (!graph) {
    for (int k = 0; k < warmup; ++k) enqueue_one();
    R.sync();
    const auto t0 = Clock::now();
    for (int k = 0; k < iters; ++k) enqueue_one();
    R.sync();
    return std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / iters;
  }
  const std::size_t ns = R.st.size();
  std::vector<cudaGraph_t> g(ns);
  std::vector<cudaGraphExec_t> x(ns);
  for (std::size_t i = 0; i < ns; ++i) {
    GPU_CHECK(cudaSetDevice(R.dev[R.virt ? 0 : i]));
    GPU_CHECK(cudaStreamBeginCapture(R.st[i], cudaStreamCaptureModeThreadLocal));
  }
  for (int k = 0; k < iters; ++k) enqueue_one();
  // End every rank's capture before instantiating any: instantiation is refused while a
  // stream of this thread is still capturing.
  for (std::size_t i = 0; i < ns; ++i) {
    GPU_CHECK(cudaSetDevice(R.dev[R.virt ? 0 : i]));
    GPU_CHECK(cudaStreamEndCapture(R.st[i], &g[i]));
  }
  for (std::size_t i = 0; i < ns; ++i) {
    GPU_CHECK(cudaSetDevice(R.dev[R.virt ? 0 : i]));
    GPU_CHECK(cudaGraphInstantiate(&x[i], g[i], 0));
  }
  auto launch = [&] {
    for (std::size_t i = 0; i < ns; ++i) {
      GPU_CHECK(cudaSetDevice(R.dev[R.virt ? 0 : i]));
      GPU_CHECK(cudaGraphLaunch(x[i], R.st[i]));
    }
  };
  for (int k = 0; k < std::max(1, warmup / std::max(1, iters) + 1); ++k) launch();
  R.sync();
  const auto t0 = Clock::now();
  launch();
  R.sync();
  const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / iters;
  for (std::size_t i = 0; i < ns; ++i) {
    GPU_CHECK(cudaGraphExecDestroy(x[i]));
    GPU_CHECK(cudaGraphDestroy(g[i]));
  }
  GPU_CHECK(cudaSetDevice(R.dev[0]));
  return us;
}

}  // namespace specsim::arbench
