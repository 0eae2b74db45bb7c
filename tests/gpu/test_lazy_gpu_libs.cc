// cuBLASLt and NCCL are opened at the first call, not at process start (kernels/lazy): before
// any call neither library is mapped into the process; the first call maps it and returns what
// the library says. Needs the libraries, not a GPU (neither call touches a device).
#include <cublasLt.h>
#include <nccl.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "car_test_util.h"

namespace {

bool mapped(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.find(name) != std::string::npos) return true;
  return false;
}

}  // namespace

int main() {
  cartest::Checker ck;
  ck.expect(!mapped("libcublasLt"), "libcublasLt not mapped before the first call");
  ck.expect(!mapped("libnccl"), "libnccl not mapped before the first call");
  const std::string ok = cublasLtGetStatusString(CUBLAS_STATUS_SUCCESS);
  ck.expect(!ok.empty(), "cuBLASLt names its success status: '" + ok + "'");
  ck.expect(mapped("libcublasLt"), "libcublasLt mapped after the first call");
  int version = 0;
  ck.expect(ncclGetVersion(&version) == ncclSuccess, "ncclGetVersion through the shim");
  ck.expect(version / 10000 == NCCL_MAJOR || version / 1000 == NCCL_MAJOR,
            "NCCL's major version " + std::to_string(version) + " is the headers' " + std::to_string(NCCL_MAJOR));
  ck.expect(mapped("libnccl"), "libnccl mapped after the first call");
  return ck.finish("gpu_lazy_libs");
}
