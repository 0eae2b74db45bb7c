#pragma once
// `specsim calibrate --from REPLAY.json`: fit the GPU profile's compute efficiencies and kernel
// floor to what a replay measured (weighted least squares, Eigen), and write a new profile.
#include <iosfwd>
#include <string>
#include <vector>

#include "measured/replay_result.h"
#include "spec/hardware.h"

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

/// One replayed phase and where it came from.
struct ReplayPoint {
  std::string file;
  std::string label;  ///< e.g. "llama-3.1-8b tp1 verify t=4"
  PhaseMeasurement phase;
};

/// Reads the phases of replay reports; InputError naming the file and field.
std::vector<ReplayPoint> load_replay_points(const std::vector<std::string>& files, const std::string& flag);
/// The same from reports already read.
std::vector<ReplayPoint> replay_points(const std::vector<ReplayReport>& reports, const std::string& flag);

/// Least-squares fit of the compute model (compute_us: max of FLOP, byte and floor terms) to the
/// measured graph-phase times (relative error) and, lightly weighted, per-op times. Parameters
/// no point constrains keep the base profile's values.
ReplayFit fit_replay(const std::vector<ReplayPoint>& points, const GpuProfile& base);

/// `base` with the fitted fields replaced.
GpuProfile apply_fit(const GpuProfile& base, const ReplayFit& fit);

/// The engine's time of a replayed phase on `hw` (collectives and overhead left out, as replayed).
double predict_point_us(const ReplayPoint& p, const Hardware& hw);

/// The whole mode: load `replay_jsons`, fit against the `hardware` profile (GPU:TOPOLOGY or a
/// path), write `out_profile` (loadable by load_hardware), and print before/after errors for the
/// fitted points and for the held-out `holdout_jsons` to `out`. Returns the exit code (0).
int calibrate_from_replay(const std::vector<std::string>& replay_jsons, const std::string& out_profile,
                          const std::string& hardware, const std::vector<std::string>& holdout_jsons,
                          std::ostream& out);

}  // namespace specsim
