// One rank's GPU: device buffers, the stream / cuBLASLt set-up, and the device count.
#include "rank_gpu.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "cuda_check.h"
#include "gemm_runner.h"
#include "replay_exec.h"

namespace specsim::replay {
namespace detail {

DevBuf::DevBuf(std::size_t b) : bytes(std::max<std::size_t>(b, 256)) { GPU_CHECK(cudaMalloc(&p, bytes)); }
DevBuf::DevBuf(DevBuf&& o) noexcept : p(std::exchange(o.p, nullptr)), bytes(o.bytes) {}
DevBuf& DevBuf::operator=(DevBuf&& o) noexcept {
  std::swap(p, o.p), std::swap(bytes, o.bytes);
  return *this;
}
DevBuf::~DevBuf() {
  if (p) cudaFree(p);
}

RankGpu::~RankGpu() {
  if (lt) cublasLtDestroy(lt);
  if (stream) cudaStreamDestroy(stream);
}

std::string init_rank_gpu(RankGpu& g, int device) {
  GPU_CHECK(cudaSetDevice(device));
  cudaDeviceProp prop{};
  GPU_CHECK(cudaGetDeviceProperties(&prop, device));
  g.device = device;
  g.name = prop.name, g.sms = prop.multiProcessorCount, g.l2_bytes = prop.l2CacheSize;
  g.fp8 = prop.major * 10 + prop.minor >= 89;
  GPU_CHECK(cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking));
  GPU_CHECK(cublasLtCreate(&g.lt));
  g.workspace = DevBuf(kGemmWorkspaceBytes);
  return fmt::format("{} (sm_{}{}, {} SMs, L2 {} MiB)", prop.name, prop.major, prop.minor, prop.multiProcessorCount,
                     prop.l2CacheSize >> 20);
}

}  // namespace detail

int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver" error
    return 0;
  }
  return n;
}

}  // namespace specsim::replay
