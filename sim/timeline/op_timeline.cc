#include "timeline/op_timeline.h"

#include <algorithm>

#include "engine/op_visit.h"

namespace specsim {

ForwardTimeline expand_forward(const PhasePlan& phase, const CostContext& ctx) {
  ForwardTimeline f;
  f.kind = phase.kind;
  f.graph = phase.graph;
  f.ops.reserve(static_cast<std::size_t>(phase.kernels()));
  f.overhead_us = forward_overhead_us(phase, ctx);
  double gpu_end = 0, host_end = 0;
  if (phase.graph) {
    f.graph_launch_us = ctx.hw->gpu.graph_launch_us;
    gpu_end = f.graph_launch_us;
  }
  struct Costed {
    OpCost cost;
    double gap_us = 0;
    bool launched = false;  ///< false: fused into another kernel (fused_away), not on the timeline
  };
  std::vector<Costed> costs;
  OpVisitor visitor(phase, ctx);  // the costs and gaps time_phase uses
  for (const auto& block : phase.blocks) {
    // one cost per distinct op, by its index in the block; repeats reuse it (the layers are identical)
    costs.assign(block.ops.size(), Costed{});
    visitor.visit(block, [&](std::size_t i, const Op&, const OpCost& c, double gap) { costs[i] = {c, gap, true}; });
    for (int r = 0; r < block.repeat; ++r) {
      for (std::size_t i = 0; i < block.ops.size(); ++i) {
        if (!costs[i].launched) continue;
        OpEvent e;
        e.op = &block.ops[i];
        e.block = block.name;
        e.layer = r;
        e.dur_us = costs[i].cost.gpu_us;
        if (phase.graph) {
          e.start_us = gpu_end + costs[i].gap_us;
        } else {
          e.host_start_us = host_end;
          e.host_dur_us = costs[i].cost.host_us;
          host_end += costs[i].cost.host_us;
          e.start_us = std::max(host_end, gpu_end + costs[i].gap_us);
        }
        gpu_end = e.start_us + e.dur_us;
        f.ops.push_back(e);
      }
    }
  }
  // A negative anchored overhead: the measured forward was shorter than its modelled kernels. They
  // are drawn shortened alike to fit it (ops_scale), so no kernel runs past its forward's end.
  if (f.overhead_us < 0 && gpu_end > 0) {
    f.ops_scale = std::max(0.0, gpu_end + f.overhead_us) / gpu_end;
    for (auto& e : f.ops) {
      e.start_us *= f.ops_scale, e.dur_us *= f.ops_scale;
      e.host_start_us *= f.ops_scale, e.host_dur_us *= f.ops_scale;
    }
    f.graph_launch_us *= f.ops_scale;
  }
  f.total_us = gpu_end + f.overhead_us;
  if (ctx.runtime) {
    f.runtime_us = ctx.runtime->phase[static_cast<int>(phase.kind)].exposed_us(f.total_us);
    f.total_us += f.runtime_us;
  }
  return f;
}

}  // namespace specsim
