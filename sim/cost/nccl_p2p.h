#pragma once
// A pipeline stage hand-off through NCCL: one send/recv between two GPUs (torch.distributed.send
// in SGLang's send_tensor_dict), from the same constants as NCCL's tuning model.
#include "scenario/hardware.h"
#include "scenario/run_spec.h"

namespace specsim {

/// One send of `bytes` to a peer GPU. On one node: NCCL's ring/Simple base latency plus one hop
/// (NVLink or PCI, or through host memory where P2P is off: the SHM hop and bus bandwidth), the
/// bytes at NCCL's peer bus bandwidth capped by the GPU's link. Across nodes (`inter_node`): the
/// NET hop latency plus the network's own latency twice (Simple's flush), the bytes at one NIC's
/// NCCL bandwidth, shared when more of a node's ranks send at once (`senders_per_node`) than it
/// has NICs. 0 for no bytes.
double nccl_p2p_us(double bytes, bool inter_node, int senders_per_node, const Hardware& hw, const NcclSettings& s);

}  // namespace specsim
