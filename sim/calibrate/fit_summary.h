#pragma once
// What `specsim calibrate --from` prints: each fitted value before -> after, the notes, and per
// point the measured time beside the shipped and the calibrated profile's prediction.
#include <iosfwd>
#include <vector>

#include "calibrate/allreduce_fit.h"
#include "calibrate/replay_fit.h"

namespace specsim {

/// The compute fit: values on `base` -> on `cal`, clamps, and the fitted and held-out phases.
void print_compute_fit(const ReplayFit& fit, const Hardware& base, const Hardware& cal,
                       const std::vector<ReplayPoint>& fitted, const std::vector<ReplayPoint>& held, std::ostream& out);

/// Before -> after values and the per-point tables (nothing when there were no fits).
void print_allreduce_calibration(const AllReduceCalibration& c, std::ostream& out);

}  // namespace specsim
