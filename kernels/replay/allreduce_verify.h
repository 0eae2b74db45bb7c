#pragma once
// `specsim check --replay`, the GPU half: runs every distinct all-reduce of a plan through the
// backends the scenario names and compares the outputs with a CPU reference (kernels/car_reference.h).
//   custom: the custom kernel in virtual-rank mode, world = tp ranks' buffers on GPU 0 (2..8 ranks);
//           bitwise against the reference (the kernel sums in fp32 in rank order, as the reference).
//   nccl:   one rank per GPU (ncclCommInitAll) when the machine has >= tp GPUs, else a visible
//           "not verified: needs N GPUs" line; compared within bf16 rounding (NCCL's order differs).
//   fixed:  a latency, no kernel: said so.
// Inputs are random and never zero; outputs are poisoned (NaN) before each call, so a kernel that
// writes nothing fails. Test-only fault: the copy tests/gpu compiles with
// SPECSIM_TEST_SKIP_ALLREDUCE skips every launch (the shipped library has no such switch).
#include <vector>

#include "plan/allreduce_cases.h"
#include "scenario/run_spec.h"

namespace specsim::replay {

/// Verifies `cases` (from distinct_allreduces) on `tp` ranks for each backend. Never throws
/// for a kernel failure: it becomes a result whose note starts with "ERROR" (failed() is true).
/// NCCL runs only with NCCL_NVLS_ENABLE=0 set by the program.
std::vector<VerifyResult> verify_allreduces(const std::vector<AllReduceCase>& cases, int tp,
                                            const std::vector<AllReduceChoice>& backends);

}  // namespace specsim::replay
