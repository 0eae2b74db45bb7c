#pragma once
// Internal to kernels/replay: one rank's GPU as the replay uses it - its stream, cuBLASLt handle
// and workspace, its communicators and the barrier before each timed launch - and the device
// buffers the replay allocates.
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>
#include <functional>
#include <string>

#include "custom_allreduce.h"

namespace specsim::replay::detail {

/// One device allocation of at least 256 bytes, freed on destruction (move-only).
struct DevBuf {
  void* p = nullptr;
  std::size_t bytes = 0;
  DevBuf() = default;
  /// Allocates max(b, 256) bytes on the current device; throws on failure.
  explicit DevBuf(std::size_t b);
  DevBuf(DevBuf&& o) noexcept;
  DevBuf& operator=(DevBuf&& o) noexcept;
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  ~DevBuf();
};

/// One rank's GPU. Multi-rank replays (one thread or one process per rank) add this rank's
/// collectives and the barrier every rank passes before each timed launch, so all ranks start
/// each replay together.
struct RankGpu {
  cudaStream_t stream = nullptr;
  cublasLtHandle_t lt = nullptr;
  DevBuf workspace;  ///< cuBLASLt workspace, kGemmWorkspaceBytes
  int sms = 0;
  double l2_bytes = 0;
  bool fp8 = false;  ///< fp8 tensor cores (sm_89 and later)
  std::string name;
  int device = 0, rank = 0, world = 1;
  ncclComm_t nccl = nullptr;         ///< all-gathers; all-reduces unless `car`; null: none run
  car::Communicator* car = nullptr;  ///< the custom all-reduce (`--allreduce custom`)
  car::Variant car_variant = car::Variant::Auto;
  /// `--allreduce custom:fused`: each layer-boundary all-reduce runs as the custom all-reduce fused
  /// with the residual add and RMSNorm, and the boundary's separate norm does not run
  bool car_fused = false;
  std::function<void()> barrier;  ///< std::barrier (threads) or MPI_Barrier (processes)
  /// Waits at the barrier, if there is one.
  void sync() const {
    if (barrier) barrier();
  }
  RankGpu() = default;
  RankGpu(const RankGpu&) = delete;
  RankGpu& operator=(const RankGpu&) = delete;
  ~RankGpu();
};

/// Makes `device` current for this thread and sets up `g`'s stream, cuBLASLt handle and
/// workspace. Returns the device's description for the report. Throws on a CUDA failure.
std::string init_rank_gpu(RankGpu& g, int device);

}  // namespace specsim::replay::detail
