// `specsim replay`: run the scenario's CyclePlan on the GPU and hold the prediction against the
// measurement. Built everywhere; the GPU part only where kernels/replay was built (CUDA + NCCL).
#include <iostream>

#include <fmt/format.h>

#include "cli_common.h"
#include "commands.h"
#include "replay/replay_result.h"
#include "trace/replay_trace.h"
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
  std::string out_path, trace_path, csv_path;
  int iters = 50, warmup = 10, op_passes = 3;
  bool no_chain = false;
  add_run_flags(app, args);
  app.add_option("--iters", iters, "timed graph replays per phase (eager forwards: at most 10)")->check(CLI::Range(1, 100000));
  app.add_option("--warmup", warmup, "untimed replays first")->check(CLI::Range(0, 100000));
  app.add_option("--op-passes", op_passes, "eager per-op timing passes (median kept)")->check(CLI::Range(1, 1000));
  app.add_flag("--no-gemm-chain", no_chain, "skip the GEMM-chain check (replay vs bare graph)");
  app.add_flag("--json", json, "print the report as one JSON object");
  app.add_option("-o,--output", out_path, "also write the JSON report here (input of specsim calibrate --from)");
  app.add_option("--trace", trace_path, "also write a Chrome trace: measured op slices beside predicted (Perfetto)");
  app.add_option("--csv", csv_path, "also write one CSV row per replayed op call (measured and predicted)");
  return guarded(app, argc, argv, [&]() -> int {
    const Scenario s = resolve_scenario(args);
    // --num-gpus N > 1: the multi-GPU replay, one rank per GPU, so N must be the tp size; one
    // all-reduce backend (nccl or custom[:VARIANT]) runs the plan's all-reduces.
    const int gpus = args.num_gpus.value_or(1);
    AllReduceChoice backend;
    if (gpus > 1) {
      if (gpus != s.run.tp_size)
        throw InputError(fmt::format("{} GPUs replay one rank each: it must equal --tp-size ({})", gpus, s.run.tp_size),
                         "--num-gpus");
      if (args.allreduce.size() > 1)
        throw InputError("a multi-GPU replay runs one all-reduce backend; give it once", "--allreduce");
      if (!args.allreduce.empty()) backend = parse_allreduce(args.allreduce.front());
      if (backend.kind == AllReduceChoice::Kind::Fixed)
        throw InputError("a replay runs a real all-reduce: nccl or custom[:VARIANT], not fixed", "--allreduce");
    }
#ifndef SPECSIM_WITH_REPLAY
    (void)s, (void)backend, (void)iters, (void)warmup, (void)op_passes, (void)no_chain, (void)json;
    (void)trace_path, (void)csv_path;
    throw InputError("this specsim was built without CUDA; rebuild with nvcc, cuBLAS and NCCL", "replay");
#else
    const int found = replay::cuda_device_count();
    if (gpus > 1 && found < gpus)
      throw InputError(fmt::format("--num-gpus {} needs {} GPUs, found {}", gpus, gpus, found), "replay");
    if (found < 1) throw InputError("no CUDA GPU found", "replay");
    const ScenarioResult r = run_scenario(s);
    replay::ReplayOptions opt;
    opt.iters = iters, opt.warmup = warmup, opt.op_passes = op_passes, opt.gemm_chain = !no_chain;
    replay::MultiGpuOptions mg;
    mg.gpus = gpus, mg.custom = backend.kind == AllReduceChoice::Kind::Custom, mg.variant = backend.variant;
    const ReplayMeasurement m = gpus > 1 ? replay::replay_plan_multi_gpu(r.plan, opt, mg) : replay::replay_plan(r.plan, opt);
    const nlohmann::json report = replay_json(s, r, m);
    if (!out_path.empty()) write_file_atomic(out_path, report.dump(2) + "\n", "-o");
    write_replay_trace_files(report, "replay report", trace_path, csv_path);
    if (json) std::cout << report.dump(2) << "\n";
    else std::cout << replay_text(report);
    return kExitOk;
#endif
  });
}

}  // namespace specsim::cli
