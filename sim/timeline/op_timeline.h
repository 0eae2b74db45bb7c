#pragma once
// Every op of one forward placed in time: the per-op view of time_phase() (phase_timer.cc), with
// the same arithmetic, so the slices of a trace add up to the report's phase totals.
#include <vector>

#include "engine/op_cost.h"
#include "plan/cycle_plan.h"

namespace specsim {

/// One kernel of one forward, times relative to the forward's start (microseconds).
struct OpEvent {
  const Op* op = nullptr;                     ///< points into the PhasePlan it was expanded from
  const char* block = "";                     ///< the OpBlock's name (e.g. "layer")
  int layer = 0;                              ///< repeat index within the block
  double start_us = 0, dur_us = 0;            ///< on the GPU stream
  double host_start_us = 0, host_dur_us = 0;  ///< eager: the host launch slice; graph: 0, 0
};

/// One forward of a phase, expanded.
struct ForwardTimeline {
  PhaseKind kind = PhaseKind::BaselineDecode;
  bool graph = true;
  double graph_launch_us = 0;  ///< graph: host cost of the replay, placed first
  double overhead_us = 0;      ///< anchored unexplained per-forward time, placed last
  double runtime_us = 0;       ///< the runtime's own work (PhaseTiming::spec_overhead_us), after it
  double total_us = 0;         ///< equals time_phase(phase, ctx).us
  /// Below 1 where the anchored overhead is negative: every kernel drawn this much shorter (and
  /// earlier), so that they fit the measured forward.
  double ops_scale = 1;
  std::vector<OpEvent> ops;
};

/// Expands one forward. Graph: the replay launch, then ops back to back, then the overhead.
/// Eager: the host launches kernel i during [H(i-1), H(i)], H(i) = sum of host costs up to i; the
/// kernel starts at max(H(i), end of kernel i-1); then the overhead.
ForwardTimeline expand_forward(const PhasePlan& phase, const CostContext& ctx);

}  // namespace specsim
