#pragma once
// `specsim calibrate --from` on multi-GPU replay reports: fits the all-reduce model of the backend
// that ran to each phase's all-reduces measured alone in one CUDA graph (weighted least squares,
// Eigen). NCCL becomes a measured curve at that world size (topology `nccl_fit`, stored as
// `calibrate --nccl-tests` stores it); the custom kernel gets its fixed cost (barrier_us) and the
// peer bandwidth its variant uses. One-GPU reports (collectives left out) give no points.
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "calibrate/replay_fit.h"
#include "spec/hardware.h"
#include "spec/run_spec.h"

namespace specsim {

/// One replayed phase's all-reduces: how many, their payload, and what they took together.
struct AllReducePoint {
  std::string file, label;
  std::string device;       ///< the report's device line
  AllReduceChoice backend;  ///< what the report says ran them
  std::string ran;          ///< the replay's own note on the first all-reduce ("custom all-reduce, one-shot-pull")
  int world = 0;            ///< ranks
  int calls = 0;            ///< all-reduces in one forward, block repeats counted
  double bytes = 0;         ///< payload per call and rank
  double measured_us = 0;   ///< all of them alone in one CUDA graph (median replay)
};

/// The all-reduce points of the multi-GPU reports among `files` (a one-GPU report gives none).
/// Reports whose ranks shared one GPU are skipped with a line in `skipped` (they do not measure the
/// interconnect). InputError naming the file and field when times, sizes or backend are unusable.
std::vector<AllReducePoint> load_allreduce_points(const std::vector<std::string>& files,
                                                  std::vector<std::string>* skipped = nullptr);
/// The same from reports already read.
std::vector<AllReducePoint> allreduce_points(const std::vector<ReplayReport>& reports,
                                             std::vector<std::string>* skipped = nullptr);

/// A fitted quantity, before and after ("held": not constrained by the points; notes say why).
struct FittedValue {
  std::string name;
  double before = 0, after = 0;
  bool held = false;
};

/// What one backend's fit found.
struct AllReduceFit {
  AllReduceChoice::Kind kind = AllReduceChoice::Kind::Nccl;
  int world = 0;        ///< NCCL: the world the curve is for (custom: the first report's)
  double graph_us = 0;  ///< fixed cost of an all-reduce-only graph (fitted, not written)
  std::vector<FittedValue> values;
  std::vector<std::string> notes;
  int graphs = 0, calls = 0, iterations = 0;
  double min_bytes = 0, max_bytes = 0;
  TopologyProfile topo;  ///< the base topology with the fit applied
  std::vector<AllReducePoint> points;
  /// Worst |allreduce_error_pct| over `points` before and after (calibrate_allreduce: shipped -> written).
  double worst_before_pct = 0, worst_after_pct = 0;
};

/// NCCL: time per call = lat + bytes / algbw over the measured sizes (one size: latency only, the
/// bandwidth kept from the base model), stored as an NcclFit at that world; above (and below) the
/// measured sizes the base model's own curve is kept as further pieces. `source` goes in the fit.
AllReduceFit fit_nccl_allreduce(const std::vector<AllReducePoint>& points, const Hardware& base,
                                const std::string& source);

/// Custom: barrier_us and the peer bandwidth of the variant that ran (sizes permitting).
AllReduceFit fit_custom_allreduce(const std::vector<AllReducePoint>& points, const Hardware& base);

/// The custom variant a point's replay note says ran ("custom all-reduce, one-shot-pull"), else
/// the one the report asked for: a measured time describes the kernel that ran, whatever `auto`
/// picks today.
std::string variant_that_ran(const AllReducePoint& p);

/// The engine's time of a point's all-reduces on `hw` (a custom point: the variant that ran):
/// calls x one call (graph replay, no anchors).
double predict_allreduce_us(const AllReducePoint& p, const Hardware& hw);

/// 100 * (predicted - measured) / measured, where measured is the point's graph time less the
/// graph's own fixed cost `graph_us` (so it compares with what the engine adds to a phase).
double allreduce_error_pct(const AllReducePoint& p, const Hardware& hw, double graph_us);

/// Phases of multi-GPU reports as the compute fit sees them: collective ops removed and the phase
/// time less the collectives measured alone (each less one graph launch of `gpu`). Phases of
/// one-GPU reports are returned unchanged.
std::vector<ReplayPoint> compute_share(std::vector<ReplayPoint> points, const GpuProfile& gpu);

/// The all-reduce step of calibrate_from_replay.
struct AllReduceCalibration {
  Hardware base;                   ///< the shipped profile
  Hardware calibrated;             ///< as written: compute fit and every all-reduce fit
  std::vector<AllReduceFit> fits;  ///< one per backend that ran (empty: one-GPU reports only)
  std::vector<AllReducePoint> held;
  std::vector<std::string> notes;
};

/// Fits every backend the --from reports ran on several GPUs, on `cal` (the compute-calibrated
/// machine), and writes the fits into profile["topology"] with sources (the command, the device,
/// the date) and a summary into profile["calibration"]["allreduce"]. Does nothing for one-GPU
/// reports. InputError: NCCL reports of several world sizes, a backend the base cannot run.
AllReduceCalibration calibrate_allreduce(const std::vector<ReplayReport>& from, const std::vector<ReplayReport>& holdout,
                                         const Hardware& base, const Hardware& cal, const std::string& hardware_spec,
                                         nlohmann::json& profile);

/// Before -> after values and the per-point tables (nothing when there were no fits).
void print_allreduce_calibration(const AllReduceCalibration& c, std::ostream& out);

}  // namespace specsim
