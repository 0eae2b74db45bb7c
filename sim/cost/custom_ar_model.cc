#include "cost/custom_ar_model.h"

#include <fmt/format.h>

#include <algorithm>

#include "cost/allreduce_model.h"
#include "util/error.h"

namespace specsim {

std::string custom_unsupported_reason(const Hardware& hw, int world) {
  if (hw.nodes_spanned(world) > 1)
    return fmt::format(
        "the custom all-reduce maps peers' memory, which does not span nodes: {} ranks cross {} nodes "
        "(--nnodes {}; use --allreduce nccl)",
        world, hw.nodes_spanned(world), hw.num_nodes);
  if (hw.gpu.amd)
    return "this project's custom all-reduce is a CUDA kernel and does not run on ROCm (" + hw.gpu.name +
           "): compare --allreduce sglang or vllm (the stacks' ROCm custom all-reduce) or nccl (RCCL)";
  if (world < kCustomMinWorld || world > kCustomMaxWorld)
    return "the custom all-reduce runs on 2..8 ranks, not " + std::to_string(world);
  if (!hw.gpu.p2p)
    return hw.gpu.name +
           " does not allow peer-to-peer memory access (driver), so peers cannot reach each other's buffers";
  if (!hw.topo.peer_access) return "peers on " + hw.topo.name + " cannot map each other's memory";
  return "";
}

std::string custom_refusal(const Hardware& hw, int world, double bytes) {
  if (auto why = custom_unsupported_reason(hw, world); !why.empty()) return why;
  if (bytes > kCustomMaxBytes)
    return std::to_string(static_cast<long long>(bytes)) + " bytes exceed its 8 MiB buffer (lower --batch-size)";
  return "";
}

namespace {

double variant_us(CustomVariant v, double bytes, int n, const Hardware& hw) {
  const auto& t = hw.topo;
  const double peers = n - 1;
  const double contention = t.peer_contention_us_per_peer * (peers - 1);  // loaded latency grows with peers
  const double local_bw = hw.gpu.mem_bw_gbps * 1e3 * hw.gpu.elementwise_memory_efficiency;  // bytes per us
  const double reduce_us = n * bytes / local_bw;
  // flag-free: read the peers' slots, empty them, read the input, write the output
  const double ll_local_us = (2 * peers + 2) * bytes / local_bw;
  const double read_bw = std::min(t.peer_read_bw_gbps, hw.link_bw_gbps()) * 1e3;  // bytes per us
  const double write_bw = std::min(t.peer_write_bw_gbps, hw.link_bw_gbps()) * 1e3;
  switch (v) {
    case CustomVariant::OneShotPull:  // barrier, read every peer's whole input, reduce, barrier
      return 2 * t.barrier_us + t.peer_read_latency_us + contention + peers * bytes / read_bw + reduce_us;
    case CustomVariant::OneShotPush:
      // Posted writes into every peer's slot (double-buffered by epoch, so no entry barrier), one
      // barrier saying the data landed, then a local reduce. Posted writes do not wait on the
      // peers, so read contention does not apply.
      return t.barrier_us + t.peer_write_latency_us + peers * bytes / write_bw + reduce_us;
    case CustomVariant::TwoShot:  // reduce-scatter (pull 1/n from each peer), barrier, all-gather
      return 3 * t.barrier_us + 2 * (t.peer_read_latency_us + contention) + 2 * peers * (bytes / n) / read_bw +
             reduce_us / n;
    case CustomVariant::OneShotLL:
      // Flag-free push: the data is its own flag, so the call costs one barrier's write to every
      // peer and spin on its own memory, with the payload riding in that write: one barrier, the
      // bytes into every peer, then the local reduce, which also empties the slots it read. One
      // barrier and one write latency less than one-shot push, whose flag follows its data.
      return t.barrier_us + peers * bytes / write_bw + ll_local_us;
    case CustomVariant::OneShotLLPull:
      // Flag-free pull: the same barrier-like wait, on a loaded remote read of each peer's copy.
      return t.barrier_us + t.peer_read_latency_us + contention + peers * bytes / read_bw + ll_local_us;
    case CustomVariant::OneShotLLBcast:
      // Flag-free, one copy per owner: the owner stores its input once into its own memory (no link
      // crossing) and every reader polls that copy across the link, so readiness costs a loaded
      // remote read, a round trip, where one-shot-ll's costs a one-way write: one-shot-ll-pull's
      // synchronization. Each reader pulls the world-1 copies over its link; locally a rank writes
      // its copy, empties it a call later, reads its input and writes its output.
      return t.barrier_us + t.peer_read_latency_us + contention + peers * bytes / read_bw + 4 * bytes / local_bw;
    case CustomVariant::TwoShotLL:    // refused by custom_allreduce (car_policy::engine_costs)
    case CustomVariant::Auto: break;  // resolved by the caller
  }
  return 0;
}

}  // namespace

double custom_variant_us(CustomVariant v, double bytes, int world, const Hardware& hw) {
  return variant_us(v, bytes, world, hw);
}

CustomEstimate custom_allreduce(double bytes, int world, const Hardware& hw, const std::string& requested) {
  if (world <= 1) return {};
  if (const auto why = custom_refusal(hw, world, bytes); !why.empty())
    throw allreduce_refused(parse_allreduce("custom"), why);
  const auto v = car_policy::parse_variant(requested);
  if (v == car_policy::Variant::Auto) {  // what the kernel's own selector runs
    const auto picked = car_policy::select(static_cast<std::size_t>(bytes), world, hw.topo.link == LinkKind::PCIe);
    return {variant_us(picked, bytes, world, hw), picked};
  }
  if (v && !car_policy::engine_costs(*v))
    throw InputError("the engine does not cost the custom all-reduce variant '" + requested +
                         "': it is measured only on virtual ranks of one GPU, which say nothing of a link's "
                         "costs (measure it with specsim-arbench; use auto or another variant here)",
                     "--allreduce");
  if (v) return {variant_us(*v, bytes, world, hw), *v};
  throw InputError("unknown custom all-reduce variant '" + requested + "': use " + car_policy::variant_names(),
                   "--allreduce");
}

}  // namespace specsim
