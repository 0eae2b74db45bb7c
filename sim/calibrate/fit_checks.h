#pragma once
// What `calibrate --from` refuses to fit or to write: measurements that cannot constrain the fit
// (every time equal, one op shape, repeat counts that do not add up to the phase) and a fitted
// profile that still misses the points it was fitted to. Each is an InputError naming the data.
#include <vector>

#include "calibrate/allreduce_fit_result.h"
#include "calibrate/replay_reports.h"
#include "scenario/hardware.h"

namespace specsim {

/// A fit that misses one of its own points by more than this is not written (percent).
constexpr double kMaxSelfFitErrorPct = 50;

/// InputError when the phases cannot constrain the compute fit: all op timings equal, all ops of
/// one shape, all phases of different settings at one time, or a phase whose op timings times
/// their repeat counts are not within 10x of its measured time.
void check_compute_fit_data(const std::vector<ReplayPoint>& points);

/// InputError when the all-reduce points of one fit were all measured at one time although they
/// move different amounts (calls x bytes): a flat measurement.
void check_allreduce_fit_data(const std::vector<AllReducePoint>& points);

/// InputError when the calibrated profile `cal` misses a fitted point by more than
/// kMaxSelfFitErrorPct: the measurements do not follow the model, and the profile would mislead.
void check_compute_fit_quality(const std::vector<ReplayPoint>& points, const Hardware& cal);

/// The same for an all-reduce fit (its worst error over its points, as written).
void check_allreduce_fit_quality(const AllReduceFit& fit);

}  // namespace specsim
