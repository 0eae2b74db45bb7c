// `specsim sweep`: the run flags, where the numeric ones take lists and ranges; evaluates the
// cartesian grid on all cores and writes CSV, JSON and a gnuplot plot.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <optional>
#include <thread>

#include "cli_common.h"
#include "commands.h"
#include "progress_bar.h"
#include "sweep/sweep_command.h"
#include "sweep/sweep_output.h"

namespace specsim::cli {

namespace {

using namespace specsim::sweep;

// An add_run_flags option replaced by a string one that takes a list or a range.
void replace(CLI::App& app, const std::string& name, std::string& target, const std::string& help) {
  app.remove_option(app.get_option(name));
  app.add_option(name, target, help);
}

// The flags that take lists (sweep/sweep_command.h's ListFlags).
void add_list_flags(CLI::App& app, ListFlags& f) {
  replace(app, "--tp-size", f.tp, "tensor-parallel sizes (list or range, e.g. 4,8)");
  app.remove_option(app.get_option("--dp-size"));
  app.add_option("--dp-size,--dp", f.dp,
                 "DP attention ranks (list or range, e.g. 1,2,4,8; with --enable-dp-attention)");
  app.remove_option(app.get_option("--ep-size"));
  app.add_option("--ep-size,--ep", f.ep, "expert-parallel sizes (list or range, e.g. 1,8)");
  app.remove_option(app.get_option("--enable-dp-attention"));
  // alone: on (the run flag); with a value, a list: off,on sweeps it
  app.add_option("--enable-dp-attention", f.dp_attention,
                 "DP attention: alone on, or a list (off,on) to sweep it (off: --dp > 1 points are skipped)")
      ->expected(0, 1)
      ->default_str("on");
  replace(app, "--dtype", f.dtype, "target weight dtypes (comma list: bf16,fp8)");
  replace(app, "--batch-size", f.batch, "running requests (list or range, e.g. 1,4,16)");
  replace(app, "--context-len", f.context, "KV-cache tokens per request (list or range)");
  replace(app, "--cuda-graph-max-bs", f.graph_bs, "largest CUDA-graph batch (list or range)");
  replace(app, "--speculative-eagle-topk", f.topk, "draft branches per step (list or range)");
  replace(app, "--speculative-num-steps", f.steps, "draft steps per cycle (list or range)");
  replace(app, "--speculative-num-draft-tokens", f.draft_tokens,
          "tokens verified per cycle (list or range, e.g. 2..8)");
  replace(app, "--accept-len", f.accept_len, "accept lens (list or range with a step, e.g. 1.5..3:0.5)");
  replace(app, "--accept-rate", f.accept_rate, "per-token acceptance rates (list or range with a step)");
  app.remove_option(app.get_option("--allreduce"));
  app.add_option("--allreduce", f.allreduce,
                 "nccl | custom[:VARIANT] | fixed:US where US may be a list or range (fixed:10..200:10); repeatable");
}

}  // namespace

int cmd_sweep(int argc, char** argv) {
  CLI::App app{"specsim sweep: the run flags over a grid of values (lists A,B,C and ranges A..B[:STEP])"};
  app.name("specsim sweep");
  RunArgs args;
  ListFlags lists;
  SweepOutputs out;
  std::string scenario;
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  add_run_flags(app, args);
  add_list_flags(app, lists);
  app.add_option("--scenario", scenario,
                 "scenario file (as `specsim run --scenario` reads it, e.g. a measured run saved with --save-scenario "
                 "or written by diagnose -o): fills every flag not given, and its measurements anchor every point");
  app.add_option("-o,--output", out.csv_path,
                 "CSV file (default: stdout, unless --json or --plot is given; - for stdout)");
  app.add_option("--json", out.json_path, "also write the points as JSON to this file");
  app.add_option("--threads", threads, "worker threads (default: all cores)")->check(CLI::Range(1, 1024));
  app.add_option("--plot", out.plot_path, "draw a plot with gnuplot into FILE.png or FILE.svg");
  app.add_option("--plot-script", out.plot_script, "also keep the gnuplot script (data inline) in this file");
  app.add_option("--plot-kind", out.plot_kind, "tokps | heatmap | breakdown | auto (by what was swept)");
  return guarded(app, argc, argv, [&] {
    const SweepPlan plan = plan_sweep(args, lists, out, scenario);
    std::atomic<size_t> done{0};
    const auto t0 = std::chrono::steady_clock::now();
    SweepResult r;
    {
      std::optional<ProgressBar> bar;
      if (::isatty(2)) bar.emplace(done, plan.grid.size());
      r = run_sweep(SweepInput{plan.base, plan.grid, threads, &done, plan.file});
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cerr << sweep_summary(r, secs, threads);
    std::cout << write_sweep_outputs(r, plan, out, threads);
    return kExitOk;
  });
}

}  // namespace specsim::cli
