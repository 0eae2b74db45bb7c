// `specsim replay`: run the scenario's CyclePlan on the GPU and hold the prediction against the
// measurement. Built everywhere; the GPU part only where kernels/replay was built (CUDA + NCCL).
#include <iostream>

#include "cli_common.h"
#include "commands.h"
#include "replay/replay_result.h"
#include "util/error.h"
#include "util/json_io.h"
#ifdef SPECSIM_WITH_REPLAY
#include "replay_exec.h"
#endif

namespace specsim::cli {

int cmd_replay(int argc, char** argv) {
  CLI::App app{"specsim replay: execute the scenario's cycle on this machine's GPU and compare with the prediction"};
  app.name("specsim replay");
  RunArgs args;
  bool json = false;
  std::string out_path;
  int iters = 50, warmup = 10, op_passes = 3;
  bool no_chain = false;
  add_run_flags(app, args);
  app.add_option("--iters", iters, "timed graph replays per phase (eager forwards: at most 10)")->check(CLI::Range(1, 100000));
  app.add_option("--warmup", warmup, "untimed replays first")->check(CLI::Range(0, 100000));
  app.add_option("--op-passes", op_passes, "eager per-op timing passes (median kept)")->check(CLI::Range(1, 1000));
  app.add_flag("--no-gemm-chain", no_chain, "skip the GEMM-chain check (replay vs bare graph)");
  app.add_flag("--json", json, "print the report as one JSON object");
  app.add_option("-o,--output", out_path, "also write the JSON report here (input of specsim calibrate --from)");
  return guarded(app, argc, argv, [&]() -> int {
    const Scenario s = resolve_scenario(args);
#ifndef SPECSIM_WITH_REPLAY
    (void)s, (void)iters, (void)warmup, (void)op_passes, (void)no_chain, (void)json;
    throw InputError("this specsim was built without CUDA; rebuild with nvcc, cuBLAS and NCCL", "replay");
#else
    if (replay::cuda_device_count() < 1) throw InputError("no CUDA GPU found", "replay");
    const ScenarioResult r = run_scenario(s);
    replay::ReplayOptions opt;
    opt.iters = iters, opt.warmup = warmup, opt.op_passes = op_passes, opt.gemm_chain = !no_chain;
    const ReplayMeasurement m = replay::replay_plan(r.plan, opt);
    const nlohmann::json report = replay_json(s, r, m);
    if (!out_path.empty()) write_file_atomic(out_path, report.dump(2) + "\n", "-o");
    if (json) std::cout << report.dump(2) << "\n";
    else std::cout << replay_text(report);
    return kExitOk;
#endif
  });
}

}  // namespace specsim::cli
