#pragma once
// The multi-process replay (`mpirun -np N specsim replay --mpi --tp-size N`): one process per
// rank, GPU = node-local rank, the NCCL id shared over MPI - the mode that scales past one machine.
// MPI stays inside kernels/replay: callers see plain C++ (rank, world, agreement, abort).
#include <string>

#include "replay_exec.h"

namespace specsim::replay {

/// True when specsim was built with MPI (find_package(MPI) found one): `--mpi` exists.
bool mpi_built();

/// This process's place in the MPI job.
struct MpiPlace {
  int rank = 0, world = 1;             ///< MPI_COMM_WORLD
  int local_rank = 0, local_size = 1;  ///< among the ranks of this node (MPI_COMM_TYPE_SHARED)
  int nodes = 1;                       ///< nodes in the job
};

/// MPI for one command: MPI_Init at construction, MPI_Finalize at destruction. Every method is
/// collective over MPI_COMM_WORLD except place() and abort(). Throws std::runtime_error when
/// built without MPI.
class MpiSession {
 public:
  MpiSession();
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  const MpiPlace& place() const { return place_; }
  /// The lowest rank whose `mine` is true, or -1 when it is false on every rank (so that exactly
  /// one rank reports a problem every rank then exits on).
  int first_rank_with(bool mine) const;
  /// True when `mine` is true on any rank.
  bool any(bool mine) const;
  /// Sum of `mine` over ranks.
  int sum(int mine) const;
  /// Returns once every rank has called it.
  void barrier() const;
  /// Asks MPI to end every process of the job with `code` (MPI_Abort): a failed rank must not
  /// leave its peers waiting in a collective. MPI_Abort does not return where MPI keeps its word;
  /// if it does, the caller still ends this process (it flushes its output first).
  void abort(int code) const;

 private:
  MpiPlace place_;
};

/// What `--mpi` runs the all-reduces with.
struct MpiReplayOptions {
  bool custom = false;           ///< the custom all-reduce (CUDA IPC handles over MPI), else NCCL
  std::string variant = "auto";  ///< custom variant (auto, one-shot-pull, one-shot-push, two-shot)
  bool fused_norm = false;       ///< custom:fused: layer boundaries fused with the add + RMSNorm
  /// The backend as the report names it: nccl, custom:VARIANT or custom:fused.
  std::string backend() const { return backend_label(custom, fused_norm, variant); }
};

/// Replays every phase of a tp = world plan, this process being rank `mpi.place().rank` on GPU
/// local_rank % (GPUs visible). One GPU per rank: all-reduces and all-gathers run for real (NCCL
/// from ncclCommInitRank with rank 0's id broadcast over MPI, or the custom all-reduce). More
/// ranks than GPUs on a node (custom only; NCCL refuses two ranks on one GPU): the all-gathers are
/// left out and counted in collectives_skipped, the timings are a functional check. Every rank
/// passes an MPI_Barrier before each timed launch; the phase times are reduced to rank 0 with max,
/// per-op times are rank 0's. Collective; the returned report is meaningful on rank 0 only.
/// Throws std::runtime_error naming the rank and GPU on failure (the caller must then abort(),
/// its peers may be inside a collective).
ReplayMeasurement replay_plan_mpi(const CyclePlan& plan, const ReplayOptions& opt, const MpiReplayOptions& mo,
                                  const MpiSession& mpi);

}  // namespace specsim::replay
