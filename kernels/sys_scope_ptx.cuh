#pragma once
// 16-byte loads and stores, relaxed at system scope: the flag-free kernels' packets (the packet
// itself is the flag, so no fence; system scope so a peer GPU over NVLink or PCIe sees them).
// Shared by the kernels and arbench's traffic floor, which must issue the very same accesses.
#include <cuda_runtime.h>

namespace specsim::car::detail {

/// 16 bytes as four 32-bit words, relaxed, system scope.
__device__ __forceinline__ uint4 load_relaxed_sys(const uint4* p) {
  uint4 v;
  asm volatile("ld.relaxed.sys.global.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p)
               : "memory");
  return v;
}
__device__ __forceinline__ void store_relaxed_sys(uint4* p, uint4 v) {
  asm volatile("st.relaxed.sys.global.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}

}  // namespace specsim::car::detail
