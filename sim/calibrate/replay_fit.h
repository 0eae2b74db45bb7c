#pragma once
// The compute fit of `specsim calibrate --from REPLAY.json`: the GPU profile's compute
// efficiencies, fixed costs and kernel floor fitted to what a replay measured (weighted least
// squares, Eigen), through the roofline of cost/compute_cost.h.
#include <string>
#include <utility>
#include <vector>

#include "calibrate/replay_reports.h"
#include "scenario/hardware.h"

namespace specsim {

/// The fitted parameters and how well they explain the fitted phases.
struct ReplayFit {
  double gemm_compute_efficiency = 0, gemm_memory_efficiency = 0;
  double attention_memory_efficiency = 0, elementwise_memory_efficiency = 0;
  double kernel_min_us = 0;
  double gemm_fixed_us = 0;
  double attention_compute_efficiency = 0, attention_fixed_us = 0;
  double kernel_switch_us = 0;
  int phases = 0, ops = 0, iterations = 0;
  std::vector<std::string> clamped;  ///< parameters held at a bound (and why)
};

/// Least-squares fit of the compute model (compute_us: max of FLOP, byte and floor terms) to the
/// measured graph-phase times (relative error) and, lightly weighted, per-op times. Parameters
/// no point constrains keep the base profile's values.
ReplayFit fit_replay(const std::vector<ReplayPoint>& points, const GpuProfile& base);

/// `base` with the fitted fields replaced.
GpuProfile apply_fit(const GpuProfile& base, const ReplayFit& fit);

/// The GPU profile fields the fit sets, as (profile key, value in `gpu`), in the order printed.
std::vector<std::pair<const char*, double>> compute_fit_fields(const GpuProfile& gpu);

/// The engine's time of a replayed phase on `hw` (collectives and overhead left out, as replayed).
double predict_point_us(const ReplayPoint& p, const Hardware& hw);

}  // namespace specsim
