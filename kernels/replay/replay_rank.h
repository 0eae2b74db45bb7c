#pragma once
// Internal to kernels/replay: one rank's replay, shared by every way ranks are started - one GPU
// (replay_plan), one thread per GPU (replay_plan_multi_gpu, thread_ranks.cc) and one process per
// rank under MPI (replay_plan_mpi, replay_mpi.cc). The phases run through the same run_phase
// (phase_runner.h) whichever mode started the rank; only communicators and barrier differ.
#include <nccl.h>

#include <array>
#include <functional>
#include <string>

#include "custom_allreduce.h"
#include "replay_exec.h"

namespace specsim::replay::detail {

/// One rank of a replay: its GPU, its communicators and the barrier before each timed launch.
struct RankSetup {
  int device = 0;                    ///< CUDA device this rank runs on
  int rank = 0, world = 1;           ///< place in the tp group
  ncclComm_t nccl = nullptr;         ///< all-gathers, and all-reduces without `car`; null: none may be left
  car::Communicator* car = nullptr;  ///< the custom all-reduce, or null
  car::Variant car_variant = car::Variant::Auto;
  bool car_fused = false;         ///< layer boundaries through the fused all-reduce + add + RMSNorm
  std::function<void()> barrier;  ///< every rank passes it before each timed launch; empty: alone
};

/// Replays every phase of `ran` on this rank (the collectives left in `ran` run for real); each
/// phase's collectives_skipped is its kernel count in `full` minus that in `ran` (same phases, in
/// order). Synchronizes and checks the custom all-reduce at the end. Throws std::runtime_error.
ReplayMeasurement replay_rank(const CyclePlan& ran, const CyclePlan& full, const ReplayOptions& opt,
                              const RankSetup& rs);

/// The times of one phase that are reduced over ranks by max (a phase, or an op class, is as
/// slow as its slowest rank); the thread mode folds them in memory, the MPI mode with MPI_Reduce.
std::array<double*, 7> rank_max_fields(PhaseMeasurement& m);

/// The note every replay report carries on how weights and KV rotate through L2.
std::string rotation_note();

/// Throws std::runtime_error unless NCCL_NVLS_ENABLE is "0" in this process's environment. NCCL
/// must never use NVLink SHARP (multicast) on the machines this runs on; the program (tools/)
/// sets the variable before any NCCL call, the library only refuses to start NCCL without it.
void require_nvls_off();

}  // namespace specsim::replay::detail
