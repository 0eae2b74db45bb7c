#include "cost/nccl_p2p.h"

#include <algorithm>

#include "cost/nccl_model.h"

namespace specsim {

double nccl_p2p_us(double bytes, bool inter_node, int senders_per_node, const Hardware& hw, const NcclSettings& s) {
  if (bytes <= 0) return 0;
  const auto& t = hw.nccl;
  if (inter_node) {
    constexpr int kNet = 2;  // hop_latency_us's network row
    const double lat =
        t.base_latency_us[kRing][kSimple] + t.hop_latency_us[kNet][kRing][kSimple] + 2 * hw.topo.nccl_net_latency_us;
    const double nic_share = std::min(1.0, double(hw.topo.nics_per_node) / std::max(1, senders_per_node));
    return lat + bytes / (hw.topo.nccl_net_bw_gbps * nic_share * 1e3);
  }
  const bool p2p = hw.gpu.p2p && nccl_uses_p2p(hw.topo, s.p2p_level);
  const int link = p2p && hw.topo.link == LinkKind::NVLink ? 0 : 1;
  const double bw = p2p ? std::min(hw.topo.nccl_p2p_busbw_gbps, hw.link_bw_gbps()) : hw.topo.nccl_shm_busbw_gbps;
  const double lat = t.base_latency_us[kRing][kSimple] + t.hop_latency_us[link][kRing][kSimple] +
                     (p2p ? 0.0 : hw.topo.nccl_shm_hop_us);
  return lat + bytes / (bw * 1e3);
}

}  // namespace specsim
