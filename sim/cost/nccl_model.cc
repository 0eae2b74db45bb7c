#include "cost/nccl_model.h"

#include <algorithm>
#include <limits>

#include "cost/bus_bandwidth.h"
#include "cost/nccl_curve_cost.h"

namespace specsim {

std::string_view nccl_algo_name(int a) { return a == kTree ? "tree" : "ring"; }
std::string_view nccl_proto_name(int p) {
  constexpr std::string_view names[] = {"LL", "LL128", "Simple"};
  return names[p];
}

bool nccl_uses_p2p(const TopologyProfile& topo, const std::string& level) {
  if (level == "LOC") return false;
  const PathType lvl = parse_path_type(level, "--nccl-p2p-level");
  return static_cast<int>(topo.nccl_path) <= static_cast<int>(lvl);
}

namespace {

// How a communicator of n ranks sits on the cluster: nodes it spans, ranks per node.
struct Span {
  int nodes = 1;
  double ppn = 1;
  bool multi() const { return nodes > 1; }
};

int log2_floor(int v) {
  int r = 0;
  while (v >>= 1) ++r;
  return r;
}

// One (algorithm, protocol) pair's bus bandwidth, GB/s, refined as ncclTopoTuneModel does.
double proto_busbw(const Hardware& hw, const Span& sp, double busbw, int algo, int proto) {
  const auto& t = hw.nccl;
  // LL cap: by GPU on one node, by host CPU and node count across nodes.
  const double ll_cap = sp.multi() ? t.ll_max_bw_net_gbps[hw.topo.amd_cpu ? 1 : 0][sp.nodes <= 2 ? 0 : 1]
                                   : t.ll_max_bw_gbps[static_cast<int>(hw.gpu.arch)];
  if (algo == kRing) {
    if (proto == kLL) return std::min(ll_cap, t.ll_bw_fraction * busbw);
    if (proto == kLL128) return t.ll128_bw_fraction * busbw;
    return busbw;
  }
  const double tree = t.tree_bw_fraction * busbw;
  if (proto == kLL) return std::min(ll_cap, tree / t.tree_ll_bw_divisor);
  if (proto == kLL128) return (sp.multi() ? t.tree_ll128_bw_fraction_net : t.tree_ll128_bw_fraction) * tree;
  return tree;
}

// Latency of one (algorithm, protocol) pair. On one node: base + steps x intra hop (a one-node
// tree all-reduce has as many hops as the ring: 2(n-1) up and down the chain). Across nodes, as
// ncclTopoTuneModel: a ring's inter-node steps (2(nodes-1) for an all-reduce, nodes-1 for an
// all-gather) pay the NET per-hop latency plus the network's own latency (twice for Simple, the
// flush), its other steps at least the host's network post overhead (x3 for Simple); a tree
// all-reduce pays 2((ppn-1) intra hops + log2(nodes) NET hops).
double pair_latency(const Hardware& hw, const Span& sp, int steps, bool allreduce, int link, double extra_hop, int a,
                    int p) {
  const auto& t = hw.nccl;
  const double intra = t.hop_latency_us[link][a][p] + extra_hop;
  if (!sp.multi()) return t.base_latency_us[a][p] + steps * intra;
  constexpr int kNet = 2;
  // With one rank per node every hop is exposed: NCCL uses the tree's NET latency.
  double inter = (sp.ppn == 1 ? t.hop_latency_us[kNet][kTree][p] : t.hop_latency_us[kNet][a][p]) +
                 hw.topo.nccl_net_latency_us * (p == kSimple ? 2 : 1);
  if (a == kTree) return t.base_latency_us[a][p] + 2 * ((sp.ppn - 1) * intra + log2_floor(sp.nodes) * inter);
  const double overhead = t.net_overhead_us[hw.topo.amd_cpu ? 1 : 0] * (p == kSimple ? 3 : 1);
  const int inter_steps = allreduce ? 2 * (sp.nodes - 1) : sp.nodes - 1;
  return t.base_latency_us[a][p] + (steps - inter_steps) * std::max(intra, overhead) + inter_steps * inter;
}

// `steps` ring steps; `ring_algbw_per_busbw` converts a ring's bus bandwidth to the algorithm
// bandwidth (a tree's is tree_algbw_per_busbw). Through host memory (SHM) every step also pays the
// topology's extra host-memory hop, and NCCL's tuning sees a PCI path: PCI per-hop latencies, no
// LL128. Across nodes the bus bandwidth is also bounded by the NICs the ranks of a node use.
NcclEstimate best(double bytes, int n, int steps, double ring_algbw_per_busbw, const Hardware& hw,
                  const NcclSettings& s, bool ring_only) {
  NcclEstimate e;
  if (n <= 1 || bytes <= 0) return e;
  Span sp;
  sp.nodes = hw.nodes_spanned(n);
  sp.ppn = double(n) / sp.nodes;
  const bool allreduce = !ring_only;
  e.p2p = hw.gpu.p2p && nccl_uses_p2p(hw.topo, s.p2p_level);  // GeForce cards: host memory always
  // xGMI takes NCCL's NVLink latency row for RCCL (an assumption: RCCL's tuning is not modelled)
  const bool nvlink = e.p2p && gpu_fabric(hw.topo.link);
  const int link = nvlink ? 0 : 1;
  double busbw = e.p2p ? std::min(hw.topo.nccl_p2p_busbw_gbps, hw.link_bw_gbps()) : hw.topo.nccl_shm_busbw_gbps;
  if (sp.multi()) busbw = std::min(busbw, std::min(sp.ppn, double(hw.topo.nics_per_node)) * hw.topo.nccl_net_bw_gbps);
  const double extra_hop = e.p2p ? 0.0 : hw.topo.nccl_shm_hop_us;
  e.us = std::numeric_limits<double>::infinity();
  for (int a = 0; a < kNumAlgos; ++a) {
    if (!s.algo_enabled[a] || (ring_only && a != kRing)) continue;
    const double algbw_per_busbw = a == kRing ? ring_algbw_per_busbw : hw.nccl.tree_algbw_per_busbw;
    for (int p = 0; p < kNumProtos; ++p) {
      if (!s.proto_enabled[p]) continue;
      if (p == kLL128 && !nvlink && !hw.nccl.ll128_on_pcie) continue;
      const double lat = pair_latency(hw, sp, steps, allreduce, link, extra_hop, a, p);
      const double pbw = proto_busbw(hw, sp, busbw, a, p);
      const double t = lat + bytes / (pbw * algbw_per_busbw * 1e3);
      if (t < e.us) e = NcclEstimate{t, a, p, e.p2p, lat, pbw};
    }
  }
  if (e.us == std::numeric_limits<double>::infinity()) {
    // Every enabled pair was ruled out (e.g. only LL128 on PCIe): NCCL falls back to ring/Simple.
    const double lat = pair_latency(hw, sp, steps, allreduce, link, extra_hop, kRing, kSimple);
    e = NcclEstimate{lat + bytes / (busbw * ring_algbw_per_busbw * 1e3), kRing, kSimple, e.p2p, lat, busbw};
  }
  e.nodes = sp.nodes;
  return e;
}

}  // namespace

NcclEstimate nccl_allreduce(double bytes, int n, const Hardware& hw, const NcclSettings& s) {
  // A measured curve (specsim calibrate --nccl-tests) wins at the world size it was measured at;
  // it already holds whatever algorithm/protocol/transport NCCL chose on that machine.
  // (A curve measured on one node does not hold across nodes.)
  if (const auto& fit = hw.topo.nccl_fit; fit && bytes > 0 && hw.nodes_spanned(n) == 1)
    if (const NcclFitPiece* piece = nccl_fit_piece(*fit, bytes, n)) {
      NcclEstimate e;
      e.us = nccl_fit_piece_us(*piece, bytes, n);
      e.p2p = hw.gpu.p2p && nccl_uses_p2p(hw.topo, s.p2p_level);
      e.fitted = true;
      return e;
    }
  // Ring all-reduce: 2(n-1) steps; nccl-tests' busbw = algbw * 2(n-1)/n.
  return best(bytes, n, 2 * (n - 1), allreduce_algbw_per_busbw(n), hw, s, false);
}

NcclEstimate nccl_allgather(double bytes, int n, const Hardware& hw, const NcclSettings& s) {
  // Ring all-gather: n-1 steps; busbw = algbw * (n-1)/n.
  return best(bytes, n, n - 1, double(n) / (n - 1.0), hw, s, true);
}

}  // namespace specsim
