#pragma once
// Fits the all-reduce curve of an nccl-tests log: least squares (Eigen) of time = lat + bytes/bw
// over size ranges, a new range wherever one line stops fitting. NCCL itself switches protocol
// (LL -> LL128 -> Simple) and algorithm with size, so one line per regime is the natural shape.
#include <string>
#include <vector>

#include "ingest/nccl_tests.h"
#include "scenario/nccl_curve.h"

namespace specsim {

struct NcclPoint {
  double bytes = 0, us = 0;
};

/// Mean time per size (out-of-place and in-place together) of the all-reduce tables measured
/// with `world` ranks (0: the only world size in the log; InputError when there are several).
std::vector<NcclPoint> allreduce_points(const ingest::NcclTestsLog& log, int& world, const std::string& file);

/// The mean time of each size among `samples`, sizes increasing.
std::vector<NcclPoint> mean_per_size(const std::vector<NcclPoint>& samples);

/// Relative error a range may reach before a new range starts.
constexpr double kNcclFitTolerance = 0.05;

/// The piecewise fit; the pieces' ranges abut at shared sizes.
NcclFit fit_allreduce_curve(const std::vector<NcclPoint>& points, int world, const std::string& source,
                            double tolerance = kNcclFitTolerance);

/// From this size on every real all-reduce is bandwidth-bound: a table reaching it whose times do
/// not grow has no bandwidth to fit and is refused. Below it a flat table (the partial logs' one
/// row of 8 B) is latency-bound and fits as latency only over its sizes.
constexpr double kBandwidthBoundBytes = 1 << 20;

/// What a fit without any bandwidth says about itself, or InputError naming `where` when its
/// sizes reach kBandwidthBoundBytes (a flat curve there is not an all-reduce).
std::string latency_only_note(const std::vector<NcclPoint>& points, const std::string& where);

/// Largest |fit - measured| / measured over the points.
double max_relative_error(const NcclFit& fit, const std::vector<NcclPoint>& points);

}  // namespace specsim
