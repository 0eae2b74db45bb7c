// `specsim replay`: run the scenario's CyclePlan on the GPU and hold the prediction against the
// measurement. Built everywhere; the GPU part only where kernels/replay was built (CUDA + NCCL).
// Ranks: one GPU (a tp > 1 plan's share, collectives left out); `--num-gpus N`, one thread per
// GPU; `mpirun -np N specsim replay --mpi`, one process per rank (kernels/replay/replay_mpi.h).
#include <algorithm>
#include <string_view>

#include "cli_common.h"
#include "commands.h"
#include "replay_gpu.h"

namespace specsim::cli {

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
  app.add_flag("--json", f.files.json, "print the report as one JSON object");
  app.add_option("-o,--output", f.files.out_path,
                 "also write the JSON report here (input of specsim calibrate --from)");
  app.add_option("--trace", f.files.trace_path,
                 "also write a Chrome trace: measured op slices beside predicted (Perfetto)");
  app.add_option("--csv", f.files.csv_path, "also write one CSV row per replayed op call (measured and predicted)");
  // Under mpirun with --mpi, a flag error (or --help) is the same on every rank: rank 0 says it.
  if (launcher_rank() > 0 && std::find(argv + 1, argv + argc, std::string_view("--mpi")) != argv + argc) {
    try {
      app.parse(argc, argv);  // guarded parses again (CLI11 clears the first parse)
    } catch (const CLI::ParseError& e) {
      return e.get_exit_code() == 0 ? kExitOk : quiet_bad_input();
    }
  }
  return guarded(app, argc, argv, [&]() -> int {
    if (f.mpi) return replay_mpi_mode(args, f);
    check_replay_outputs(f.files, args);
    return replay_local(args, f);
  });
}

}  // namespace specsim::cli
