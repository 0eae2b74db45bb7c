#pragma once
// NCCL's own latency/bandwidth model (src/graph/tuning.cc): for each enabled (algorithm,
// protocol) time = latency + bytes / bandwidth, and NCCL picks the fastest. A communicator that
// spans nodes (Hardware::num_nodes) takes NCCL's inter-node terms.
#include "scenario/hardware.h"
#include "scenario/run_spec.h"

namespace specsim {

struct NcclEstimate {
  double us = 0;
  int algo = kRing;     ///< NcclAlgo picked
  int proto = kSimple;  ///< NcclProto picked
  bool p2p = true;      ///< P2P transport (else host memory, SHM)
  double latency_us = 0, busbw_gbps = 0;
  bool fitted = false;  ///< from the topology's measured nccl_fit, not the tuning model
  int nodes = 1;        ///< nodes the communicator spans (network hops between them)
};

/// Whether NCCL uses P2P between the topology's farthest GPUs under NCCL_P2P_LEVEL.
bool nccl_uses_p2p(const TopologyProfile& topo, const std::string& p2p_level);

/// All-reduce of `bytes` per rank over `n` ranks (0 us for n = 1).
NcclEstimate nccl_allreduce(double bytes, int n, const Hardware& hw, const NcclSettings& s);

/// All-gather producing `bytes` in total on every rank (ring only).
NcclEstimate nccl_allgather(double bytes, int n, const Hardware& hw, const NcclSettings& s);

std::string_view nccl_algo_name(int algo);
std::string_view nccl_proto_name(int proto);

}  // namespace specsim
