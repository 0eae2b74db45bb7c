#pragma once
// `specsim replay`, the part that runs on the GPU: kernels/replay called for one GPU, for
// `--num-gpus N` threads, or for one MPI rank per process (`--mpi`). It stays in tools/ because
// sim/ never reaches kernels/; the checks and outputs around it are sim/ (replay_report/
// replay_setup.h, timeline/replay_outputs.h). A rank that fails while its peers may sit in a
// collective ends the process (or the MPI job) here, at once.
#include "cli_common.h"
#include "timeline/replay_outputs.h"

namespace specsim::cli {

/// The replay flags beyond the scenario's.
struct ReplayFlags {
  int iters = 50, warmup = 10, op_passes = 3;
  bool no_chain = false, mpi = false;
  ReplayOutputFiles files;  ///< rank 0 alone writes them under MPI
};

/// This process's rank as the MPI launcher's environment gives it (Open MPI, MPICH/Hydra, PMIx),
/// or -1 when no launcher started it. Read before MPI is up.
int launcher_rank();

/// What a rank other than 0 does on bad input that every rank saw alike before MPI is up: exit 2
/// without a word, after rank 0 had the time to say why (mpirun ends the job at the first
/// non-zero exit).
int quiet_bad_input();

/// One GPU, or `--num-gpus N` threads: replays and prints the report. InputError where this
/// build or machine cannot (no CUDA, no GPU), after the scenario's own checks.
int replay_local(const RunArgs& args, const ReplayFlags& f);

/// `--mpi`: the checks that need no MPI, then MPI, the checks every rank agrees on, the replay
/// and rank 0's report. Bad input found before MPI is up is the same on every rank (same flags):
/// rank 0 says it, the others exit 2 quietly.
int replay_mpi_mode(const RunArgs& args, const ReplayFlags& f);

}  // namespace specsim::cli
