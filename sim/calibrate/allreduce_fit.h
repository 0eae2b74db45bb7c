#pragma once
// `specsim calibrate --from` on multi-GPU replay reports: fits the all-reduce model of the backend
// that ran to each phase's all-reduces measured alone in one CUDA graph (weighted least squares,
// Eigen). NCCL becomes a measured curve at that world size (topology `nccl_fit`, stored as
// `calibrate --nccl-tests` stores it); the custom kernel gets its fixed cost (barrier_us) and the
// peer bandwidth its variant uses. One-GPU reports (collectives left out) give no points.
// The steps live in their own files: replay_reports (the points), nccl_allreduce_fit and
// custom_allreduce_fit (the fits, through bounded_lsq), fit_profile_writer, fit_summary.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "calibrate/allreduce_fit_result.h"
#include "calibrate/custom_allreduce_fit.h"
#include "calibrate/nccl_allreduce_fit.h"
#include "calibrate/replay_reports.h"
#include "scenario/hardware.h"

namespace specsim {

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
AllReduceCalibration calibrate_allreduce(const std::vector<ReplayReport>& from,
                                         const std::vector<ReplayReport>& holdout, const Hardware& base,
                                         const Hardware& cal, const std::string& hardware_spec,
                                         nlohmann::json& profile);

}  // namespace specsim
