#pragma once
// Collectives of expert parallelism and DP attention through NCCL: the all-to-all (grouped
// send/recv to every peer) and the reduce-scatter, from the same constants as NCCL's tuning model.
#include "scenario/hardware.h"
#include "scenario/run_spec.h"

namespace specsim {

/// All-to-all where each of `n` ranks sends `bytes` in all (1/n of it to itself): the peers are
/// reached at once over the switch, so one step's latency (ring/Simple base + one hop) plus the
/// (n-1)/n that leaves the GPU at NCCL's peer bus bandwidth. 0 for n <= 1.
double nccl_alltoall_us(double bytes, int n, const Hardware& hw, const NcclSettings& s);

/// Reduce-scatter of `bytes` per rank over `n` ranks: a ring's n-1 steps moving (n-1)/n of it,
/// the same bus traffic as the all-gather of a `bytes` output (nccl-tests: busbw = algbw (n-1)/n).
double nccl_reduce_scatter_us(double bytes, int n, const Hardware& hw, const NcclSettings& s);

}  // namespace specsim
