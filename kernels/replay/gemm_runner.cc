// cuBLASLt GEMMs of the replay: column-major D[n,m] = op_T(W[k,n]) X[k,m], the layout PyTorch's
// Linear hands cuBLAS, so the heuristic sees the shapes a real forward asks for.
#include "gemm_runner.h"

#include "cuda_check.h"

namespace specsim::replay::detail {

LtGemm::LtGemm(cublasLtHandle_t lt, const GemmShape& s) : lt_(lt), s_(s) {
  const cudaDataType_t wt = s.fp8 ? CUDA_R_8F_E4M3 : CUDA_R_16BF;
  GPU_CHECK(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  GPU_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  GPU_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  layout(&a_, wt, s.k, s.n);
  layout(&b_, wt, s.k, s.m);
  layout(&c_, CUDA_R_16BF, s.n, s.m);
  cublasLtMatmulPreference_t pref;
  GPU_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  const std::uint64_t ws = kGemmWorkspaceBytes;
  GPU_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
  cublasLtMatmulHeuristicResult_t res{};
  int found = 0;
  const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(lt, desc_, a_, b_, c_, c_, pref, 1, &res, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  ok_ = st == CUBLAS_STATUS_SUCCESS && found > 0;  // no algorithm is an answer, not an error
  algo_ = res.algo;
}

LtGemm::~LtGemm() {
  if (a_) cublasLtMatrixLayoutDestroy(a_);
  if (b_) cublasLtMatrixLayoutDestroy(b_);
  if (c_) cublasLtMatrixLayoutDestroy(c_);
  if (desc_) cublasLtMatmulDescDestroy(desc_);
}

void LtGemm::run(const void* w, const void* x, void* y, void* ws, cudaStream_t st) const {
  const float alpha = 1.0f, beta = 0.0f;
  GPU_CHECK(cublasLtMatmul(lt_, desc_, &alpha, w, a_, x, b_, &beta, y, c_, y, c_, &algo_, ws, kGemmWorkspaceBytes, st));
}

void LtGemm::layout(cublasLtMatrixLayout_t* l, cudaDataType_t t, std::int64_t rows, std::int64_t cols) {
  GPU_CHECK(cublasLtMatrixLayoutCreate(l, t, std::uint64_t(rows), std::uint64_t(cols), rows));
  if (s_.batch > 1) {
    const std::int32_t count = std::int32_t(s_.batch);
    const std::int64_t stride = rows * cols;
    GPU_CHECK(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count));
    GPU_CHECK(
        cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride));
  }
}

}  // namespace specsim::replay::detail
