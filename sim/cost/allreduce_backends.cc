#include "cost/allreduce_backends.h"

#include <fmt/format.h>

#include "cost/custom_ar_model.h"
#include "cost/nccl_model.h"

namespace specsim {

double NcclAllReduce::time_us(const AllReduceQuery& q) const {
  return nccl_allreduce(q.bytes, q.world, *q.hw, *q.nccl).us;
}
double NcclAllReduce::host_us(const AllReduceQuery& q) const { return q.hw->gpu.nccl_host_launch_us; }
std::string NcclAllReduce::describe(const AllReduceQuery& q) const {
  const auto e = nccl_allreduce(q.bytes, q.world, *q.hw, *q.nccl);
  if (e.fitted) return fmt::format("fitted nccl-tests curve (world {}) at {:.0f} B", q.world, q.bytes);
  const std::string across = e.nodes > 1 ? fmt::format(" and the network across {} nodes", e.nodes) : "";
  return fmt::format("{}/{} over {}{} at {:.0f} B", nccl_algo_name(e.algo), nccl_proto_name(e.proto),
                     e.p2p ? "P2P" : "host memory (SHM)", across, q.bytes);
}
std::string NcclAllReduce::refusal(const AllReduceQuery&) const { return ""; }

double CustomAllReduce::time_us(const AllReduceQuery& q) const {
  return custom_allreduce(q.bytes, q.world, *q.hw, q.choice->variant).us;
}
double CustomAllReduce::host_us(const AllReduceQuery& q) const { return q.hw->gpu.host_launch_us; }
std::string CustomAllReduce::describe(const AllReduceQuery& q) const {
  const auto e = custom_allreduce(q.bytes, q.world, *q.hw, q.choice->variant);
  return fmt::format("{} at {:.0f} B", custom_variant_name(e.variant), q.bytes);
}
std::string CustomAllReduce::refusal(const AllReduceQuery& q) const { return custom_refusal(*q.hw, q.world, q.bytes); }

double FixedAllReduce::time_us(const AllReduceQuery& q) const { return q.choice->fixed_us; }
double FixedAllReduce::host_us(const AllReduceQuery& q) const { return q.hw->gpu.host_launch_us; }
std::string FixedAllReduce::describe(const AllReduceQuery& q) const {
  return fmt::format("{:g} us per all-reduce (given)", q.choice->fixed_us);
}
std::string FixedAllReduce::refusal(const AllReduceQuery&) const { return ""; }

}  // namespace specsim
