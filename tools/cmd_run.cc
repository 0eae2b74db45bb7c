// `specsim [run]`: the analytic cycle report for one scenario (the built-in one by default).
#include <iostream>

#include "cli_common.h"
#include "commands.h"
#include "timeline/run_command.h"
#include "util/error.h"

namespace specsim::cli {

namespace {

constexpr int kMaxCycles = 1'000'000;

// --trace, --csv, --cycles, --seed and the measurement files.
void add_cycle_flags(CLI::App& app, RunRequest& q) {
  app.add_option("--trace", q.cycles.trace,
                 "write a Chrome/Perfetto trace (JSON) of the simulated cycles: every backend, op slices named as the "
                 "runtime's kernels");
  app.add_option("--csv", q.cycles.csv, "write one CSV row per op per rank per cycle per backend");
  app.add_option("--trace-cycles", q.cycles.trace_cycles,
                 "most cycles --trace/--csv draw, evenly spaced (default: as many as keep the trace near 60 MB)")
      ->check(CLI::Range(1, kMaxCycles));
  app.add_option("--cycles", q.cycles.cycles,
                 "simulate N cycles, each with its own accept length (p50/p90/p99 in the report)")
      ->check(CLI::Range(1, kMaxCycles));
  app.add_option("--seed", q.cycles.seed, "seed of the accept-length draws (default 1)")->check(whole_number);
  app.add_option("--accept-from", q.files.accept_from,
                 "SGLang server log: draw accept lengths from its logged accept len");
  app.add_option(
      "--baseline-from", q.files.baseline_from,
      "SGLang server log without speculation: its gen throughput at 1 running request is the measured baseline");
  app.add_option("--anchor-trace", q.files.anchor_trace,
                 "torch profiler trace: its mean NCCL all-reduce kernel time becomes --measured-allreduce-us");
}

}  // namespace

int cmd_run(int argc, char** argv) {
  CLI::App app{"specsim run: predicted EAGLE-3 cycle cost and tok/s against plain decoding"};
  app.name("specsim run");
  RunArgs args;
  RunRequest q;
  add_run_flags(app, args);
  add_cycle_flags(app, q);
  app.add_flag("--json", q.json, "print the report as one JSON object");
  app.add_option("--scenario", q.scenario_file,
                 "scenario file: JSON as --save-scenario writes it, or a flat YAML/JSON mapping of flags as SGLang's "
                 "--config (model-path: ..., tp-size: 8); flags override it");
  app.add_option("--sglang-args", q.sglang_args,
                 "an SGLang launch command as one string (\"python -m sglang.launch_server --model-path ... --tp 8\"); "
                 "flags given to specsim override it");
  app.add_option("sglang_command", q.sglang_tokens,
                 "after --: an SGLang or vLLM launch command, pasted as is (python -m sglang.launch_server ..., "
                 "vllm serve MODEL ...); every flag is classed by models/stacks/");
  app.add_option("--save-scenario", q.save_scenario, "write the resolved scenario to FILE (JSON) for --scenario");
  return guarded(app, argc, argv, [&] {
    // Flags that shape the simulated cycles do nothing without them: refused, not ignored.
    const bool files = !q.cycles.trace.empty() || !q.cycles.csv.empty();
    if (app.count("--trace-cycles") && !files)
      throw InputError("--trace-cycles picks the cycles --trace and --csv draw: give one of them, or drop it",
                       "--trace-cycles");
    if (app.count("--seed") && !files && app.count("--cycles") == 0)
      throw InputError(
          "--seed seeds the accept-length draws of --cycles, --trace or --csv: give one of them, or drop it", "--seed");
    std::cout << run_command(args, q);
    return kExitOk;
  });
}

}  // namespace specsim::cli
