#include "trace/op_timeline.h"

#include <algorithm>

namespace specsim {

ForwardTimeline expand_forward(const PhasePlan& phase, const CostContext& ctx) {
  ForwardTimeline f;
  f.kind = phase.kind;
  f.graph = phase.graph;
  f.ops.reserve(static_cast<std::size_t>(phase.kernels()));
  // Same overhead rule as time_phase: the measured per-forward remainder sits on target forwards.
  if (phase.kind == PhaseKind::Verify || phase.kind == PhaseKind::BaselineDecode)
    f.overhead_us = ctx.anchors.forward_overhead_us;
  double gpu_end = 0, host_end = 0;
  if (phase.graph) {
    f.graph_launch_us = ctx.hw->gpu.graph_launch_us;
    gpu_end = f.graph_launch_us;
  }
  std::vector<OpCost> costs;
  for (const auto& block : phase.blocks) {
    costs.clear();  // one cost per distinct op; repeats reuse it (the layers are identical)
    for (const auto& op : block.ops) costs.push_back(op_cost(op, ctx, phase.graph));
    for (int r = 0; r < block.repeat; ++r) {
      for (std::size_t i = 0; i < block.ops.size(); ++i) {
        const double gap = switch_gap_us(block, i, ctx.hw->gpu);  // same rule as time_phase
        OpEvent e;
        e.op = &block.ops[i];
        e.block = block.name;
        e.layer = r;
        e.dur_us = costs[i].gpu_us;
        if (phase.graph) {
          e.start_us = gpu_end + gap;
        } else {
          e.host_start_us = host_end;
          e.host_dur_us = costs[i].host_us;
          host_end += costs[i].host_us;
          e.start_us = std::max(host_end, gpu_end + gap);
        }
        gpu_end = e.start_us + e.dur_us;
        f.ops.push_back(e);
      }
    }
  }
  f.total_us = gpu_end + f.overhead_us;
  return f;
}

}  // namespace specsim
