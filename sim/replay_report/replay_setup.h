#pragma once
// `specsim replay`, the checks made before any GPU work: the scenario and the one all-reduce
// backend a multi-rank replay runs, against the GPUs found (one process) or the MPI job (--mpi).
// The GPU work itself is kernels/replay's.
#include "scenario/resolve.h"

namespace specsim {

/// The one all-reduce backend a multi-rank replay runs: given at most once, nccl or
/// custom[:VARIANT]. InputError naming --allreduce otherwise.
AllReduceChoice replay_backend(const RunArgs& args);

/// A one-GPU or `--num-gpus N` replay: its scenario, its backend, its GPUs.
struct LocalReplay {
  Scenario scenario;
  AllReduceChoice backend;  ///< the default when one GPU replays (collectives left out)
  int gpus = 1;
};

/// The scenario and backend checked: --num-gpus N > 1 is the multi-GPU replay, one rank per GPU,
/// so N must be the tp size, and one backend runs the plan's all-reduces.
LocalReplay local_replay(const RunArgs& args);

/// InputError when this machine has fewer GPUs (`found`) than the replay asks.
void check_local_gpus(int gpus, int found);

/// Where an `--mpi` replay runs (kernels/replay's MpiPlace, and the GPUs this node shows).
struct MpiJob {
  int world = 1, local_size = 1, nodes = 1;
  int gpus_found = 0;
};

/// The backend of an `--mpi` replay of `s`, checked against the job: one process per tp rank,
/// the custom kernel within its rank limits and one node, NCCL with a GPU per rank.
AllReduceChoice check_mpi_replay(const RunArgs& args, const Scenario& s, const MpiJob& job);

}  // namespace specsim
