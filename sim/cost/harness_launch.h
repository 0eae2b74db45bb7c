#pragma once
// What an nccl-tests run with `-g N` adds to the collective: one host thread launches the N
// grouped collectives of every iteration (ncclGroupStart, N x ncclAllReduce, ncclGroupEnd), and the
// iterations go back to back without a sync. Host work: it scales with the CPU, not the GPU.
// `specsim validate --nccl` prices it and `specsim diagnose --nccl-tests` takes it off a table; a
// serving engine runs one process per GPU and never pays it.
#include <string>

namespace specsim {

/// Host cost of one thread launching N grouped collectives: N x per_gpu_us + group_us.
struct SingleThreadLaunch {
  double per_gpu_us = 0;  ///< enqueue + per-communicator launch of one GPU's collective
  double group_us = 0;    ///< the rest of one ncclGroupStart/End
  double host_us(int gpus_per_thread) const { return gpus_per_thread * per_gpu_us + group_us; }
};

/// models/nccl/tuning.json's `single_thread_launch`; InputError naming file:field when missing.
SingleThreadLaunch load_single_thread_launch();

/// The time nccl-tests prints for one iteration, and which term set it.
struct HarnessTime {
  double us = 0;
  double host_us = 0;       ///< the launching thread's time per iteration (0: not priced)
  bool host_bound = false;  ///< the host launch, not the collective, set the time
};

/// nccl-tests' timed loop (src/common.cu BenchTime: `iters` startColl calls back to back, then one
/// stream sync, wall time / iters). With `gpus_per_thread` > 1 each iteration's collective cannot
/// finish before its last kernel is launched, and the next iteration's launches overlap it, so one
/// iteration costs max(host, collective) and the loop's fill or drain (the smaller of the two) is
/// paid once: us = max(host, collective) + min(host, collective) / iters. One GPU per thread (one
/// process per GPU): the collective alone, unchanged.
HarnessTime nccl_tests_iteration_us(double collective_us, int gpus_per_thread, int iters,
                                    const SingleThreadLaunch& launch);

}  // namespace specsim
