// cuBLASLt's functions that kernels/replay calls, defined here so that the replay links without
// libcublasLt and the library is opened at the first call (lazy_library.h says why). A function
// the replay starts using is added here; the link fails until it is.
#include <cublasLt.h>

#include "lazy_library.h"

#define SPECSIM_STR2(x) #x
#define SPECSIM_STR(x) SPECSIM_STR2(x)

namespace {

specsim::lazy::LazyLibrary& cublaslt() {
  static specsim::lazy::LazyLibrary lib("cuBLASLt (libcublasLt.so." SPECSIM_STR(CUBLAS_VER_MAJOR) ")",
                                        {SPECSIM_CUBLASLT_PATH, "libcublasLt.so." SPECSIM_STR(CUBLAS_VER_MAJOR)});
  return lib;
}

}  // namespace

// Each definition forwards to the library's function of the same name and type.
#define SPECSIM_LT(name) specsim::lazy::function<decltype(&name)>(cublaslt(), #name)

extern "C" {

cublasStatus_t cublasLtCreate(cublasLtHandle_t* h) { return SPECSIM_LT(cublasLtCreate)(h); }
cublasStatus_t cublasLtDestroy(cublasLtHandle_t h) { return SPECSIM_LT(cublasLtDestroy)(h); }
const char* cublasLtGetStatusString(cublasStatus_t s) { return SPECSIM_LT(cublasLtGetStatusString)(s); }

cublasStatus_t cublasLtMatmul(cublasLtHandle_t h, cublasLtMatmulDesc_t d, const void* alpha, const void* a,
                              cublasLtMatrixLayout_t ad, const void* b, cublasLtMatrixLayout_t bd, const void* beta,
                              const void* c, cublasLtMatrixLayout_t cd, void* dd, cublasLtMatrixLayout_t ddesc,
                              const cublasLtMatmulAlgo_t* algo, void* ws, size_t ws_bytes, cudaStream_t stream) {
  return SPECSIM_LT(cublasLtMatmul)(h, d, alpha, a, ad, b, bd, beta, c, cd, dd, ddesc, algo, ws, ws_bytes, stream);
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* l, cudaDataType type, uint64_t rows, uint64_t cols,
                                          int64_t ld) {
  return SPECSIM_LT(cublasLtMatrixLayoutCreate)(l, type, rows, cols, ld);
}
cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l) {
  return SPECSIM_LT(cublasLtMatrixLayoutDestroy)(l);
}
cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t attr,
                                                const void* buf, size_t bytes) {
  return SPECSIM_LT(cublasLtMatrixLayoutSetAttribute)(l, attr, buf, bytes);
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* d, cublasComputeType_t compute, cudaDataType_t scale) {
  return SPECSIM_LT(cublasLtMatmulDescCreate)(d, compute, scale);
}
cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d) { return SPECSIM_LT(cublasLtMatmulDescDestroy)(d); }
cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr,
                                              const void* buf, size_t bytes) {
  return SPECSIM_LT(cublasLtMatmulDescSetAttribute)(d, attr, buf, bytes);
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* p) {
  return SPECSIM_LT(cublasLtMatmulPreferenceCreate)(p);
}
cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t p) {
  return SPECSIM_LT(cublasLtMatmulPreferenceDestroy)(p);
}
cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t p,
                                                    cublasLtMatmulPreferenceAttributes_t attr, const void* buf,
                                                    size_t bytes) {
  return SPECSIM_LT(cublasLtMatmulPreferenceSetAttribute)(p, attr, buf, bytes);
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t h, cublasLtMatmulDesc_t d, cublasLtMatrixLayout_t a,
                                              cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c,
                                              cublasLtMatrixLayout_t dd, cublasLtMatmulPreference_t p, int requested,
                                              cublasLtMatmulHeuristicResult_t results[], int* returned) {
  return SPECSIM_LT(cublasLtMatmulAlgoGetHeuristic)(h, d, a, b, c, dd, p, requested, results, returned);
}

}  // extern "C"
