#pragma once
// specsim-arbench --fused-hidden: the layer boundary three ways, at the verify's sizes: the
// all-reduce alone, the all-reduce then the separate add+RMSNorm kernel, and the fused kernel.
#include <cstddef>
#include <vector>

#include "ranks.h"

namespace specsim::arbench {

/// Prints one table per hidden size (rows: tokens) with us per call of each of the three and
/// the ratios; checks every output (the all-reduce against the CPU sum, the new residual
/// against the CPU bitwise, the fused norm bitwise against the unfused pair's and rank 0's).
/// Returns the number of wrong elements.
std::size_t run_fused_bench(Ranks& R, DType dt, const std::vector<std::size_t>& hiddens,
                            const std::vector<std::size_t>& tokens, int iters, int warmup, bool graph);

}  // namespace specsim::arbench
