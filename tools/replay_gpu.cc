#include "replay_gpu.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <thread>

#include "cost/allreduce_model.h"
#include "replay_report/replay_setup.h"
#include "util/error.h"
#include "util/mpi_launcher.h"
#ifdef SPECSIM_WITH_REPLAY
#include "replay_exec.h"
#include "replay_mpi.h"
#include "thread_ranks.h"
#endif

namespace specsim::cli {

int launcher_rank() {
  const auto place = mpi_launcher_place();  // a consistent size and rank, not one stray variable
  return place ? place->rank : -1;
}

int quiet_bad_input() {
  std::this_thread::sleep_for(std::chrono::seconds(1));
  return kExitBadInput;
}

namespace {

[[maybe_unused]] constexpr const char* kNoCuda =
    "this specsim was built without CUDA; rebuild with nvcc, cuBLAS and NCCL";

#ifdef SPECSIM_WITH_REPLAY
replay::ReplayOptions replay_options(const ReplayFlags& f) {
  replay::ReplayOptions opt;
  opt.iters = f.iters, opt.warmup = f.warmup, opt.op_passes = f.op_passes, opt.gemm_chain = !f.no_chain;
  return opt;
}

/// Says `what` on stderr and ends this process at once: its other threads may be blocked in a
/// collective that never completes, so no destructor and no atexit handler may run.
[[noreturn]] void exit_now(const std::string& what) {
  std::cerr << "internal error: " << what << "\n" << std::flush;
  std::fflush(stdout);
  std::_Exit(kExitInternal);
}

/// Ends every rank of the MPI job (a failed rank's peers may be inside a collective), after
/// saying `what`; if MPI_Abort returns, this process still ends.
[[noreturn]] void abort_mpi_job(const replay::MpiSession& mpi, const std::string& what) {
  std::cerr << "internal error: " << what << "\n" << std::flush;
  std::fflush(stdout);
  mpi.abort(kExitInternal);
  std::_Exit(kExitInternal);
}

/// The replay of `--num-gpus N` threads; a rank whose peers stay blocked ends the process.
ReplayMeasurement replay_threads(const CyclePlan& plan, const replay::ReplayOptions& opt,
                                 const replay::MultiGpuOptions& mg) {
  try {
    return replay::replay_plan_multi_gpu(plan, opt, mg);
  } catch (const replay::StuckRanksError& e) {
    exit_now(std::string(e.what()) + " (replay)");
  }
}

/// `--mpi` with MPI up: every rank checks the same input (and what needs MPI: world size, GPUs per
/// node), the ranks agree, and the lowest rank that saw a problem says it while all exit 2 before
/// any GPU work; then the replay, and rank 0's report.
int replay_under_mpi(const RunArgs& args, const ReplayFlags& f) {
  replay::MpiSession mpi;  // MPI_Init; MPI_Finalize on every way out
  const replay::MpiPlace& w = mpi.place();
  std::optional<InputError> bad;
  std::optional<Scenario> s;
  std::optional<ScenarioResult> r;
  AllReduceChoice backend;
  try {
    s = resolve_scenario(args);
    backend = check_mpi_replay(args, *s, MpiJob{w.world, w.local_size, w.nodes, replay::cuda_device_count()});
    r = run_scenario(*s);
  } catch (const InputError& e) {
    bad = e;
  } catch (const nlohmann::json::exception& e) {
    bad = InputError(std::string("unexpected JSON content: ") + e.what(), "check the input files");
  } catch (const std::exception& e) {
    abort_mpi_job(mpi, fmt::format("{} (replay --mpi, rank {})", e.what(), w.rank));
  }
  const int who = mpi.first_rank_with(bad.has_value());
  if (who >= 0) {
    if (who == w.rank) std::cerr << "error: " << bad->line() << "\n" << std::flush;
    mpi.barrier();  // no rank exits (mpirun would then kill the rest) before the line is out
    return kExitBadInput;
  }
  replay::MpiReplayOptions mo;
  mo.custom = allreduce_model(backend).gpu_runner() == GpuRunner::Custom, mo.variant = backend.variant;
  mo.fused_norm = mo.custom && backend.fused_norm;
  ReplayMeasurement m;
  try {
    m = replay::replay_plan_mpi(r->plan, replay_options(f), mo, mpi);
  } catch (const std::exception& e) {
    // Its peers may be inside a collective that will never complete: end the whole job.
    abort_mpi_job(mpi, std::string(e.what()) + " (replay --mpi)");
  }
  if (w.rank != 0) return kExitOk;
  std::cout << replay_outputs(*s, *r, m, f.files);
  return kExitOk;
}
#endif

}  // namespace

int replay_local(const RunArgs& args, const ReplayFlags& f) {
  const LocalReplay l = local_replay(args);  // the flag checks say what is wrong even where no replay can run
#ifndef SPECSIM_WITH_REPLAY
  (void)f, (void)l;
  throw InputError(kNoCuda, "replay");
#else
  check_local_gpus(l.gpus, replay::cuda_device_count());
  const ScenarioResult r = run_scenario(l.scenario);
  replay::MultiGpuOptions mg;
  mg.gpus = l.gpus, mg.custom = allreduce_model(l.backend).gpu_runner() == GpuRunner::Custom;
  mg.variant = l.backend.variant;
  mg.fused_norm = mg.custom && l.backend.fused_norm;
  const replay::ReplayOptions opt = replay_options(f);
  const ReplayMeasurement m = l.gpus > 1 ? replay_threads(r.plan, opt, mg) : replay::replay_plan(r.plan, opt);
  std::cout << replay_outputs(l.scenario, r, m, f.files);
  return kExitOk;
#endif
}

int replay_mpi_mode(const RunArgs& args, const ReplayFlags& f) {
  const int launcher = launcher_rank();
  try {
    check_replay_outputs(f.files, args);  // the same on every rank: rank 0 says it
    if (args.num_gpus)
      throw InputError("--mpi takes its ranks from mpirun (one per process); leave out --num-gpus", "--num-gpus");
#ifndef SPECSIM_WITH_REPLAY
    throw InputError(kNoCuda, "replay");
#else
    if (!replay::mpi_built())
      throw InputError("this specsim was built without MPI; rebuild where CMake finds one (libopenmpi-dev)", "--mpi");
    if (launcher < 0)
      throw InputError("--mpi runs one rank per process: start it as mpirun -np N specsim replay --mpi --tp-size N ...",
                       "--mpi");
#endif
  } catch (const InputError&) {
    if (launcher <= 0) throw;
    return quiet_bad_input();
  }
#ifdef SPECSIM_WITH_REPLAY
  return replay_under_mpi(args, f);
#else
  return kExitInternal;  // not reached: without CUDA the checks above threw
#endif
}

}  // namespace specsim::cli
