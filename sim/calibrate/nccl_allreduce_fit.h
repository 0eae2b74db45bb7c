#pragma once
// The NCCL all-reduce fit of `calibrate --from`: a measured curve at the reports' world size
// (topology `nccl_fit`, stored as `calibrate --nccl-tests` stores it).
#include <string>
#include <vector>

#include "calibrate/allreduce_fit_result.h"

namespace specsim {

/// NCCL: time per call = lat + bytes / algbw over the measured sizes (one size: latency only, the
/// bandwidth kept from the base model), stored as an NcclFit at that world; above (and below) the
/// measured sizes the base model's own curve is kept as further pieces. `source` goes in the fit.
AllReduceFit fit_nccl_allreduce(const std::vector<AllReducePoint>& points, const Hardware& base,
                                const std::string& source);

}  // namespace specsim
