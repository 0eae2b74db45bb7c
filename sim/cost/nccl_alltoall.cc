#include "cost/nccl_alltoall.h"

#include <algorithm>

#include "cost/nccl_model.h"

namespace specsim {

double nccl_alltoall_us(double bytes, int n, const Hardware& hw, const NcclSettings& s) {
  if (n <= 1 || bytes <= 0) return 0;
  const bool p2p = hw.gpu.p2p && nccl_uses_p2p(hw.topo, s.p2p_level);
  const int link = p2p && gpu_fabric(hw.topo.link) ? 0 : 1;
  const double busbw = p2p ? std::min(hw.topo.nccl_p2p_busbw_gbps, hw.link_bw_gbps()) : hw.topo.nccl_shm_busbw_gbps;
  const double lat = hw.nccl.base_latency_us[kRing][kSimple] + hw.nccl.hop_latency_us[link][kRing][kSimple] +
                     (p2p ? 0.0 : hw.topo.nccl_shm_hop_us);
  return lat + bytes * (n - 1.0) / n / (busbw * 1e3);
}

double nccl_reduce_scatter_us(double bytes, int n, const Hardware& hw, const NcclSettings& s) {
  return nccl_allgather(bytes, n, hw, s).us;
}

}  // namespace specsim
