#pragma once
// Internal to kernels/replay: the replay's GEMMs through cuBLASLt, shaped as PyTorch's Linear.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace specsim::replay::detail {

/// cuBLASLt workspace each GEMM may use, bytes.
constexpr std::size_t kGemmWorkspaceBytes = 32u << 20;

/// One GEMM as the replay runs it: `batch` products of [m,k] x [k,n] (bf16, or fp8 e4m3 inputs).
struct GemmShape {
  std::int64_t m = 1, n = 1, k = 1, batch = 1;
  bool fp8 = false;
  /// Runs as the block-scaled fp8 kernel (block_fp8_gemm.h: 128x128 weight scales, 1x128 token
  /// scales), the kernel class the stack runs for fp8 checkpoints, not as cuBLASLt.
  bool block_fp8 = false;
  /// Bytes of the weight operand W (all batches).
  std::size_t weight_bytes() const { return std::size_t(batch * n * k) * (fp8 ? 1 : 2); }
};

/// C[m,n] = X[m,k] W[n,k]^T as PyTorch's Linear, with the algorithm cuBLASLt's heuristic picks
/// for the shape once; bf16 output, fp32 accumulation.
class LtGemm {
 public:
  /// Creates the descriptors and asks the heuristic; ok() says whether it found an algorithm.
  LtGemm(cublasLtHandle_t lt, const GemmShape& s);
  ~LtGemm();
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;
  /// True when cuBLASLt has an algorithm for the shape (run() needs one).
  bool ok() const { return ok_; }
  /// Enqueues y = x w^T on `st`; `ws` holds kGemmWorkspaceBytes.
  void run(const void* w, const void* x, void* y, void* ws, cudaStream_t st) const;

 private:
  void layout(cublasLtMatrixLayout_t* l, cudaDataType_t t, std::int64_t rows, std::int64_t cols);
  cublasLtHandle_t lt_;
  GemmShape s_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  bool ok_ = false;
};

}  // namespace specsim::replay::detail
