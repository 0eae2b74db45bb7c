#pragma once
// The sweep's grid: one value list per swept setting, enumerated as a cartesian product in a fixed
// nesting order (plan-shaping settings outermost, all-reduce backend and acceptance innermost), so
// neighbouring points share a plan and point i is the same point on any thread count.
#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "scenario/run_spec.h"

namespace specsim::sweep {

/// The swept settings, outermost first. A setting with no values keeps the scenario's own.
enum Axis : int {
  kTp = 0,
  kDtype,
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

/// The command-line flag of an axis (for errors and the JSON report).
const char* axis_flag(int axis);

struct Grid {
  std::vector<long long> tp, batch, context, graph_bs, topk, steps, draft_tokens;
  std::vector<std::string> dtype;
  std::vector<AllReduceChoice> allreduce;  ///< empty: the scenario's backends (nccl and custom)
  std::vector<double> accept_len, accept_rate;

  /// Values along an axis (1 when the axis is not swept).
  size_t axis_size(int axis) const;
  /// Number of points (the product of the axis sizes); InputError beyond kMaxPoints.
  size_t size() const;
  /// Points sharing one plan (the product of the per-evaluation axis sizes).
  size_t points_per_plan() const;
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
