// `specsim replay`: run the scenario's CyclePlan on the GPU and hold the prediction against the
// measurement. Built everywhere; the GPU part only where kernels/replay was built (CUDA + NCCL).
// Ranks: one GPU (a tp > 1 plan's share, collectives left out); `--num-gpus N`, one thread per
// GPU; `mpirun -np N specsim replay --mpi`, one process per rank (kernels/replay/replay_mpi.h).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string_view>
#include <thread>
#include <utility>

#include "cli_common.h"
#include "cost/allreduce_model.h"
#include "commands.h"
#include "replay_report/replay_report.h"
#include "timeline/replay_trace.h"
#include "util/error.h"
#include "util/json_io.h"
#include "util/mpi_launcher.h"
#include "util/output_files.h"
#ifdef SPECSIM_WITH_REPLAY
#include "car_types.h"
#include "replay_exec.h"
#include "replay_mpi.h"
#include "thread_ranks.h"
#endif

namespace specsim::cli {

namespace {

/// The replay flags beyond the scenario's.
struct ReplayFlags {
  int iters = 50, warmup = 10, op_passes = 3;
  bool no_chain = false, mpi = false, json = false;
  std::string out_path, trace_path, csv_path;  ///< rank 0 alone writes them under MPI
};

/// This process's rank as the MPI launcher's environment gives it (Open MPI, MPICH/Hydra, PMIx),
/// or -1 when no launcher started it. Read before MPI is up.
int launcher_rank() {
  const auto place = mpi_launcher_place();  // a consistent size and rank, not one stray variable
  return place ? place->rank : -1;
}

/// What a rank other than 0 does on bad input that every rank saw alike before MPI is up: exit 2
/// without a word, after rank 0 had the time to say why (mpirun ends the job at the first
/// non-zero exit).
int quiet_bad_input() {
  std::this_thread::sleep_for(std::chrono::seconds(1));
  return kExitBadInput;
}

/// -o, --trace and --csv checked together before anything runs (not the scenario's inputs).
void check_replay_outputs(const RunArgs& args, const ReplayFlags& f) {
  check_outputs({{f.out_path, "-o"}, {f.trace_path, "--trace"}, {f.csv_path, "--csv"}},
                {args.model_path.value_or(""), args.hardware.value_or("")});
}

/// The one all-reduce backend a multi-rank replay runs: given at most once, nccl or custom.
AllReduceChoice replay_backend(const RunArgs& args) {
  AllReduceChoice backend;
  if (args.allreduce.size() > 1)
    throw InputError("a multi-GPU replay runs one all-reduce backend; give it once", "--allreduce");
  if (!args.allreduce.empty()) backend = parse_allreduce(args.allreduce.front());
  if (!allreduce_model(backend).replayable())
    throw InputError("a replay runs a real all-reduce: nccl or custom[:VARIANT], not " + backend.kind_name(),
                     "--allreduce");
  return backend;
}

[[maybe_unused]] int print_report(const Scenario& s, const ScenarioResult& r, const ReplayMeasurement& m,
                                  const ReplayFlags& f) {
  const nlohmann::json report = replay_json(s, r, m);
  if (!f.out_path.empty()) write_file_atomic(f.out_path, report.dump(2) + "\n", "-o");
  write_replay_trace_files(report, "replay report", f.trace_path, f.csv_path);
  if (f.json)
    std::cout << report.dump(2) << "\n";
  else
    std::cout << replay_text(report);
  return kExitOk;
}

/// The scenario and backend of a one-GPU or `--num-gpus N` replay, checked. --num-gpus N > 1: the
/// multi-GPU replay, one rank per GPU, so N must be the tp size; one all-reduce backend (nccl or
/// custom[:VARIANT]) runs the plan's all-reduces.
std::pair<Scenario, AllReduceChoice> local_scenario(const RunArgs& args) {
  Scenario s = resolve_scenario(args);
  const int gpus = args.num_gpus.value_or(1);
  if (gpus > 1 && gpus != s.run.tp_size)
    throw InputError(fmt::format("{} GPUs replay one rank each: it must equal --tp-size ({})", gpus, s.run.tp_size),
                     "--num-gpus");
  const AllReduceChoice backend = gpus > 1 ? replay_backend(args) : AllReduceChoice{};
  return {std::move(s), backend};
}

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

/// One GPU, or `--num-gpus N` threads.
int replay_local(const RunArgs& args, const ReplayFlags& f) {
  const auto [s, backend] = local_scenario(args);
  const int gpus = args.num_gpus.value_or(1);
  const int found = replay::cuda_device_count();
  if (gpus > 1 && found < gpus)
    throw InputError(fmt::format("--num-gpus {} needs {} GPUs, found {}", gpus, gpus, found), "replay");
  if (found < 1) throw InputError("no CUDA GPU found", "replay");
  const ScenarioResult r = run_scenario(s);
  replay::MultiGpuOptions mg;
  mg.gpus = gpus, mg.custom = allreduce_model(backend).gpu_runner() == GpuRunner::Custom, mg.variant = backend.variant;
  const replay::ReplayOptions opt = replay_options(f);
  const ReplayMeasurement m = gpus > 1 ? replay_threads(r.plan, opt, mg) : replay::replay_plan(r.plan, opt);
  return print_report(s, r, m, f);
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
    backend = replay_backend(args);
    const bool custom = allreduce_model(backend).gpu_runner() == GpuRunner::Custom;
    const int found = replay::cuda_device_count();
    if (w.world != s->run.tp_size)
      throw InputError(fmt::format("mpirun started {} processes; --mpi runs one rank per process, so start {} "
                                   "(the --tp-size)",
                                   w.world, s->run.tp_size),
                       "mpirun -np");
    if (custom && (w.world < car::kMinRanks || w.world > car::kMaxRanks))
      throw InputError(fmt::format("the custom all-reduce runs {}..{} ranks, this job has {}: use --allreduce nccl",
                                   car::kMinRanks, car::kMaxRanks, w.world),
                       "--allreduce");
    if (w.nodes > 1 && custom)
      throw InputError(fmt::format("the custom all-reduce reaches its peers through CUDA IPC, within one node; this "
                                   "job spans {} nodes: use --allreduce nccl",
                                   w.nodes),
                       "--allreduce");
    if (found < 1) throw InputError("no CUDA GPU found", "replay");
    if (w.local_size > found && !custom)
      throw InputError(fmt::format("{} ranks on a node with {} GPU(s): NCCL needs one GPU per rank; start one rank "
                                   "per GPU, or share GPUs with --allreduce custom (a functional check)",
                                   w.local_size, found),
                       "--allreduce");
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
  ReplayMeasurement m;
  try {
    m = replay::replay_plan_mpi(r->plan, replay_options(f), mo, mpi);
  } catch (const std::exception& e) {
    // Its peers may be inside a collective that will never complete: end the whole job.
    abort_mpi_job(mpi, std::string(e.what()) + " (replay --mpi)");
  }
  if (w.rank != 0) return kExitOk;
  return print_report(*s, *r, m, f);
}
#endif

/// `--mpi`: the checks that need no MPI, then replay_under_mpi. Bad input found before MPI is up
/// is the same on every rank (same flags): rank 0 says it, the others exit 2 quietly.
int replay_mpi_mode(const RunArgs& args, const ReplayFlags& f) {
  const int launcher = launcher_rank();
  try {
    check_replay_outputs(args, f);  // the same on every rank: rank 0 says it
    if (args.num_gpus)
      throw InputError("--mpi takes its ranks from mpirun (one per process); leave out --num-gpus", "--num-gpus");
#ifndef SPECSIM_WITH_REPLAY
    throw InputError("this specsim was built without CUDA; rebuild with nvcc, cuBLAS and NCCL", "replay");
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
  (void)f;
  return kExitInternal;  // not reached: without CUDA the checks above threw
#endif
}

}  // namespace

int cmd_replay(int argc, char** argv) {
  CLI::App app{"specsim replay: execute the scenario's cycle on this machine's GPU and compare with the prediction"};
  app.name("specsim replay");
  RunArgs args;
  ReplayFlags f;
  add_run_flags(app, args);
  app.add_option("--iters", f.iters, "timed graph replays per phase (eager forwards: at most 10)")
      ->check(CLI::Range(1, 100000));
  app.add_option("--warmup", f.warmup, "untimed replays first")->check(CLI::Range(0, 100000));
  app.add_option("--op-passes", f.op_passes, "eager per-op timing passes (median kept)")->check(CLI::Range(1, 1000));
  app.add_flag("--no-gemm-chain", f.no_chain, "skip the GEMM-chain check (replay vs bare graph)");
  app.add_flag("--mpi", f.mpi,
               "one rank per process: mpirun -np N specsim replay --mpi --tp-size N (GPU = node-local rank)");
  app.add_flag("--json", f.json, "print the report as one JSON object");
  app.add_option("-o,--output", f.out_path, "also write the JSON report here (input of specsim calibrate --from)");
  app.add_option("--trace", f.trace_path, "also write a Chrome trace: measured op slices beside predicted (Perfetto)");
  app.add_option("--csv", f.csv_path, "also write one CSV row per replayed op call (measured and predicted)");
  // Under mpirun with --mpi, a flag error (or --help) is the same on every rank: rank 0 says it.
  if (launcher_rank() > 0 && std::find(argv + 1, argv + argc, std::string_view("--mpi")) != argv + argc) {
    try {
      app.parse(argc, argv);  // guarded parses again (CLI11 clears the first parse)
    } catch (const CLI::ParseError& e) {
      return e.get_exit_code() == 0 ? kExitOk : quiet_bad_input();
    }
  }
  return guarded(app, argc, argv, [&]() -> int {
    if (!f.mpi) check_replay_outputs(args, f);
    if (f.mpi) return replay_mpi_mode(args, f);
#ifndef SPECSIM_WITH_REPLAY
    local_scenario(args);  // the flag checks still say what is wrong where the replay cannot run
    throw InputError("this specsim was built without CUDA; rebuild with nvcc, cuBLAS and NCCL", "replay");
#else
    return replay_local(args, f);
#endif
  });
}

}  // namespace specsim::cli
