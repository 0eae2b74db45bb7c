#pragma once
// The custom all-reduce fit of `calibrate --from`: the kernel's fixed cost (barrier_us) and the
// peer bandwidth of the variant the engine picks.
#include <vector>

#include "calibrate/allreduce_fit_result.h"

namespace specsim {

/// Custom: barrier_us and the peer bandwidth of the variant the engine picks (sizes permitting).
AllReduceFit fit_custom_allreduce(const std::vector<AllReducePoint>& points, const Hardware& base);

}  // namespace specsim
