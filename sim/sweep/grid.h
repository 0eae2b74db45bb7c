#pragma once
// The sweep's grid: one value list per swept setting, enumerated as a cartesian product in a fixed
// nesting order (the settings a scenario is resolved for outermost: the parallel layout and the
// dtype; then the plan-shaping ones; all-reduce backend and acceptance innermost), so neighbouring
// points share a plan and point i is the same point on any thread count.
#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "scenario/run_spec.h"

namespace specsim::sweep {

/// The swept settings, outermost first. A setting with no values keeps the scenario's own.
enum Axis : int {
  kTp = 0,
  kDp,      // DP attention ranks (--dp)
  kEp,      // expert-parallel size (--ep-size)
  kDpAttn,  // --enable-dp-attention off (0) / on (1)
  kDtype,   // resolved per value of these (a pipeline-parallel axis would join them)
  kBatch,
  kContext,
  kGraphBs,
  kTopk,
  kSteps,
  kDraftTokens,  // plan-shaping
  kAllReduce,
  kAcceptLen,
  kAcceptRate,  // per evaluation
  kNumAxes
};
/// The first axis that does not change the plan: points differing only from here on share one.
constexpr int kFirstEvalAxis = kAllReduce;
/// The first axis a resolved scenario does not fix: the axes before it (layout, dtype) pick the
/// hardware view, the layout's checks and the memory fit, so a scenario is resolved per their values.
constexpr int kFirstGroupAxis = kBatch;

/// The command-line flag of an axis (for errors and the JSON report).
const char* axis_flag(int axis);

struct Grid {
  std::vector<long long> tp, dp, ep, dp_attention, batch, context, graph_bs, topk, steps, draft_tokens;
  std::vector<std::string> dtype;
  std::vector<AllReduceChoice> allreduce;  ///< empty: the scenario's backends (nccl and custom)
  std::vector<double> accept_len, accept_rate;

  /// Values along an axis (1 when the axis is not swept).
  size_t axis_size(int axis) const;
  /// Number of points (the product of the axis sizes); InputError beyond kMaxPoints.
  size_t size() const;
  /// Points sharing one plan (the product of the per-evaluation axis sizes).
  size_t points_per_plan() const;
  /// Points sharing one resolved scenario (the product of the sizes from kFirstGroupAxis on).
  size_t points_per_scenario() const;
  /// Resolved scenarios: the product of the sizes of the axes before kFirstGroupAxis.
  size_t scenarios() const;
  /// Per-axis value index of point `i` (mixed radix, last axis fastest).
  std::array<size_t, kNumAxes> decode(size_t i) const;
  /// Whether the axis was given more than one value.
  bool swept(int axis) const { return axis_size(axis) > 1; }
};

/// Largest grid a sweep accepts: results take 200 bytes a point (2 GB here), the CSV ~360.
constexpr size_t kMaxPoints = 10'000'000;

/// InputError for a grid above `most` points (`why` says what it would exceed): names the flag of
/// the longest value list, and the most values that list may keep with the others as given.
[[noreturn]] void refuse_grid(const Grid& g, size_t most, const std::string& why);

}  // namespace specsim::sweep
