// NCCL's functions that kernels/replay calls, defined here so that the replay links without
// libnccl and the library is opened at the first call (lazy_library.h says why). A function the
// replay starts using is added here; the link fails until it is. (arbench links NCCL itself.)
#include <nccl.h>

#include "lazy_library.h"

#define SPECSIM_STR2(x) #x
#define SPECSIM_STR(x) SPECSIM_STR2(x)

namespace {

specsim::lazy::LazyLibrary& nccl() {
  static specsim::lazy::LazyLibrary lib("NCCL (libnccl.so." SPECSIM_STR(NCCL_MAJOR) ")",
                                        {SPECSIM_NCCL_PATH, "libnccl.so." SPECSIM_STR(NCCL_MAJOR)});
  return lib;
}

}  // namespace

#define SPECSIM_NCCL(name) specsim::lazy::function<decltype(&name)>(nccl(), #name)

extern "C" {

ncclResult_t ncclGetVersion(int* version) { return SPECSIM_NCCL(ncclGetVersion)(version); }
const char* ncclGetErrorString(ncclResult_t r) { return SPECSIM_NCCL(ncclGetErrorString)(r); }
ncclResult_t ncclGetUniqueId(ncclUniqueId* id) { return SPECSIM_NCCL(ncclGetUniqueId)(id); }
ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank) {
  return SPECSIM_NCCL(ncclCommInitRank)(comm, nranks, id, rank);
}
ncclResult_t ncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist) {
  return SPECSIM_NCCL(ncclCommInitAll)(comm, ndev, devlist);
}
ncclResult_t ncclCommDestroy(ncclComm_t comm) { return SPECSIM_NCCL(ncclCommDestroy)(comm); }
ncclResult_t ncclGroupStart() { return SPECSIM_NCCL(ncclGroupStart)(); }
ncclResult_t ncclGroupEnd() { return SPECSIM_NCCL(ncclGroupEnd)(); }
ncclResult_t ncclAllReduce(const void* send, void* recv, size_t count, ncclDataType_t type, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream) {
  return SPECSIM_NCCL(ncclAllReduce)(send, recv, count, type, op, comm, stream);
}
ncclResult_t ncclAllGather(const void* send, void* recv, size_t count, ncclDataType_t type, ncclComm_t comm,
                           cudaStream_t stream) {
  return SPECSIM_NCCL(ncclAllGather)(send, recv, count, type, comm, stream);
}

}  // extern "C"
