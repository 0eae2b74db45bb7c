#pragma once
// The one check for CUDA runtime, cuBLAS(Lt) and NCCL calls in kernels/, tools/ and tests/gpu/:
// GPU_CHECK(call) throws std::runtime_error "<call> failed: <error> (<file>:<line>)" when the call
// returns anything but success. Nothing here prints or exits: the caller decides what to do.
// Header only; an overload costs a link dependency only where it is used.
#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstring>
#include <stdexcept>
#include <string>

namespace specsim::gpu {

/// Throws std::runtime_error naming `call`, `error` and `file:line` (file without its folders).
[[noreturn]] inline void throw_failed(const char* call, const char* error, const char* file, int line) {
  const char* slash = std::strrchr(file, '/');
  throw std::runtime_error(std::string(call) + " failed: " + error + " (" + (slash ? slash + 1 : file) + ":" +
                           std::to_string(line) + ")");
}

/// CUDA runtime: throws unless `e` is cudaSuccess.
inline void check(cudaError_t e, const char* call, const char* file, int line) {
  if (e != cudaSuccess) throw_failed(call, cudaGetErrorString(e), file, line);
}

/// cuBLAS and cuBLASLt: throws unless `e` is CUBLAS_STATUS_SUCCESS.
inline void check(cublasStatus_t e, const char* call, const char* file, int line) {
  if (e != CUBLAS_STATUS_SUCCESS) throw_failed(call, cublasLtGetStatusString(e), file, line);
}

/// NCCL: throws unless `e` is ncclSuccess.
inline void check(ncclResult_t e, const char* call, const char* file, int line) {
  if (e != ncclSuccess) throw_failed(call, ncclGetErrorString(e), file, line);
}

}  // namespace specsim::gpu

/// Checks one CUDA, cuBLAS or NCCL call (see specsim::gpu::check).
#define GPU_CHECK(call) ::specsim::gpu::check((call), #call, __FILE__, __LINE__)
