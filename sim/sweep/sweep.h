#pragma once
// Evaluates a grid of what-ifs around one scenario on all cores. The scenario is resolved once per
// (tp, dp, ep, DP attention, dtype) (those pick the hardware view, the layout's checks, the memory
// fit and the anchor mode); a plan is built once per
// plan-shaping combination; each point then costs one evaluate_cycle. Results land in a
// pre-sized vector by point index, so output is the same bytes on any thread count.
#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "evaluate/evaluate_scenario.h"
#include "scenario/load_scenario.h"
#include "scenario/resolve.h"
#include "sweep/grid.h"

namespace specsim::sweep {

/// Parts of a cycle's time, summed over its forwards (the baseline step's when speculation is off).
enum Part : int { kGemm = 0, kAttention, kAllReducePart, kAllGather, kOther, kLaunch, kOverhead, kRuntime, kNumParts };
const char* part_name(int part);  ///< "gemm", "attention", ...

/// One evaluated point: its resolved settings and the cycle figures (as in `specsim run --json`).
struct PointResult {
  bool ok = false;
  int tp = 0, dp = 1, ep = 1;  ///< the layout: DP attention ranks (1: off), expert-parallel size
  bool dp_attention = false;
  A2aBackend a2a = A2aBackend::None;
  int batch = 0, graph_bs = 0, steps = 0, topk = 0, draft_tokens = 0;
  long long context = 0;
  DType dtype = DType::BF16;
  uint32_t backend = 0;  ///< index into SweepResult::backends
  double accept_len = 0, baseline_step_us = 0, baseline_tok_s = 0, cycle_us = 0, spec_tok_s = 0, speedup = 0;
  double breakeven_accept_len = 0, allreduce_share = 0;
  bool baseline_measured = false, spec_measured = false;  ///< the figure is the point's own measurement
  std::array<double, kNumPhaseKinds> phase_us{};          ///< one forward of each phase; -1 when the plan has none
  std::array<double, kNumParts> cycle_parts_us{};
};

/// Points left out, grouped by reason, in order of first occurrence.
struct SkipReason {
  std::string reason;
  size_t count = 0;
  size_t first_point = 0;
};

struct SweepResult {
  Scenario base;                          ///< the first (tp, dtype) scenario: title, model, hardware
  std::vector<AllReduceChoice> backends;  ///< the all-reduce axis' values
  std::vector<PointResult> points;        ///< one per grid point, by index
  std::vector<SkipReason> skipped;
  size_t evaluated = 0;
};

/// The flags that are not swept (the swept ones unset), the grid, and how to run.
struct SweepInput {
  RunArgs base;
  Grid grid;
  int threads = 1;
  std::atomic<size_t>* progress = nullptr;  ///< points done so far, for a progress bar (optional)
  ScenarioFile file;                        ///< --scenario: fills what the flags leave out, and brings its measurements
};

/// Runs the whole grid. Bad points are skipped and counted; InputError only for input that spoils
/// every point (e.g. a missing model file, --accept-len with --accept-rate).
SweepResult run_sweep(const SweepInput& in);

}  // namespace specsim::sweep
