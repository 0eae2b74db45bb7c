#pragma once
// The fit of the replay's block-scaled fp8 GEMM's price (sim/cost/replay_fp8_cost.h) to measured
// rows (specsim-gemmbench), and `specsim calibrate --gemmbench FILE`, which writes it into a profile.
#include <iosfwd>
#include <string>
#include <vector>

#include "cost/replay_fp8_cost.h"

namespace specsim {

/// One measured launch of the kernel.
struct ReplayFp8Row {
  std::string shape;
  ReplayGemmDims dims;
  double us = 0;
};

struct ReplayFp8Fit {
  ReplayFp8Kernel kernel;
  int points = 0;
  double median_pct = 0, worst_pct = 0;  ///< |predicted - measured| / measured over the rows
  std::string worst_row;
  std::vector<std::string> held;  ///< terms held at 0 (no rows constrain them, or the fit went negative)
};

/// Least squares of the relative error over `rows`, every coefficient >= 0. InputError with fewer
/// rows than terms.
ReplayFp8Fit fit_replay_fp8(const std::vector<ReplayFp8Row>& rows, const std::string& source);

/// The rows of a specsim-gemmbench --json file.
std::vector<ReplayFp8Row> gemmbench_rows(const std::string& path);

/// The whole mode: fit the rows of `gemmbench_json` into the `hardware` profile's replay_block_fp8,
/// write `out_profile`, print the fit and its per-row errors to `out`.
void calibrate_from_gemmbench(const std::string& gemmbench_json, const std::string& out_profile,
                              const std::string& hardware, std::ostream& out);

}  // namespace specsim
