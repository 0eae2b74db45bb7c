// `specsim ingest`: read a measurement file and print what specsim takes from it. One mode per
// kind of file: --torch-trace, --sglang-log, --nccl-tests, --replay-report.
#include <iostream>

#include "cli_common.h"
#include "commands.h"
#include "diagnose/bench_scenario.h"
#include "ingest/bench_speculative.h"
#include "report/ingest_report.h"
#include "timeline/replay_summary.h"
#include "util/error.h"
#include "util/output_files.h"

namespace specsim::cli {

int cmd_ingest(int argc, char** argv) {
  CLI::App app{"specsim ingest: read a measurement file and print what specsim takes from it"};
  app.name("specsim ingest");
  std::string torch, sglang, nccl, replay, trace_path, csv_path;
  int steps = 0;
  bool as_json = false;
  app.add_option("--torch-trace", torch,
                 "torch profiler Chrome trace (SGLang --profile): kernel time per kind per step");
  app.add_option("--sglang-log,--server-log", sglang, "SGLang or vLLM server log: accept len and throughput");
  app.add_option("--nccl-tests", nccl, "nccl-tests output: the parsed tables");
  app.add_option("--replay-report", replay,
                 "specsim replay -o report: per-op measured vs predicted (with --trace/--csv)");
  app.add_option("--trace", trace_path, "with --replay-report: write a Chrome trace (measured beside predicted)");
  app.add_option("--csv", csv_path, "with --replay-report: write one CSV row per replayed op call");
  app.add_option("--steps", steps,
                 "with --torch-trace: decode steps or cycles in the trace when it has no ProfilerStep markers");
  app.add_flag("--json", as_json, "print what was read as one JSON object (every kind of file)");
  // bench_speculative.py's results, and the scenario anchored to all of them.
  std::string bench, save_scenario;
  BenchDeployment dep;
  dep.algorithm = "EAGLE";
  app.add_option("--bench-speculative", bench,
                 "SGLang bench_speculative.py --output (JSON lines): the settings and tok/s it measured");
  app.add_option("--save-scenario", save_scenario,
                 "with --bench-speculative: write the scenario anchored to every row (for run/tune --scenario)");
  app.add_option("--model-path", dep.model, "with --save-scenario: the model the script ran (zoo name or config.json)");
  app.add_option("--speculative-draft-model-path", dep.draft, "with --save-scenario: its draft (default: the zoo's)");
  app.add_option("--hardware", dep.hardware, "with --save-scenario: GPU:TOPOLOGY it ran on");
  app.add_option("--tp-size", dep.tp_size, "with --save-scenario: its --tp-size")->check(CLI::Range(1, 1024));
  app.add_option("--speculative-algorithm", dep.algorithm,
                 "with --save-scenario: EAGLE (the script's own) or EAGLE3 (an EAGLE-3 draft)");
  return guarded(app, argc, argv, [&] {
    const int modes = !torch.empty() + !sglang.empty() + !nccl.empty() + !replay.empty() + !bench.empty();
    if (modes != 1)
      throw InputError(
          "give exactly one of --torch-trace, --sglang-log, --nccl-tests, --replay-report, --bench-speculative",
          "specsim ingest");
    if (!bench.empty()) {
      const bool deployment = !dep.model.empty() || !dep.hardware.empty() || !dep.draft.empty();
      if (save_scenario.empty() && deployment)
        throw InputError("the deployment flags describe the scenario to save: add --save-scenario FILE",
                         "--model-path");
      check_outputs({{save_scenario, "--save-scenario"}}, {bench, dep.model, dep.draft, dep.hardware});
      const auto rows = ingest::read_bench_speculative(bench, "--bench-speculative");
      if (!save_scenario.empty()) {
        if (dep.model.empty()) throw InputError("the results do not name the model: give it", "--model-path");
        if (dep.hardware.empty()) throw InputError("the results do not name the GPUs: give GPU:TOPOLOGY", "--hardware");
        dep.file = bench;
        write_bench_scenario(rows, dep, save_scenario);
      }
      std::cout << bench_rows_text(rows, as_json);
      if (!save_scenario.empty() && !as_json)
        std::cout << "wrote " << save_scenario << " (specsim run --scenario " << save_scenario << ")\n";
      return kExitOk;
    }
    if (!save_scenario.empty()) throw InputError("only with --bench-speculative", "--save-scenario");
    // The deployment flags describe a bench_speculative.py scenario; nothing else reads them.
    for (const char* flag :
         {"--model-path", "--speculative-draft-model-path", "--hardware", "--tp-size", "--speculative-algorithm"})
      if (app.count(flag))
        throw InputError(std::string(flag) +
                             " describes --bench-speculative's scenario (with --save-scenario): the "
                             "other files say what they measured themselves; drop it",
                         flag);
    if (app.count("--steps") && torch.empty())
      throw InputError("only with --torch-trace (a trace without ProfilerStep markers)", "--steps");
    if (replay.empty() && !(trace_path.empty() && csv_path.empty()))
      throw InputError("only with --replay-report", trace_path.empty() ? "--csv" : "--trace");
    check_outputs({{trace_path, "--trace"}, {csv_path, "--csv"}}, {replay});
    if (!replay.empty()) {
      std::cout << replay_report_summary(replay, trace_path, csv_path, as_json);
      return kExitOk;
    }
    if (app.count("--steps") && steps < 1) throw InputError("must be at least 1", "--steps");
    std::cout << (!torch.empty()    ? torch_trace_summary(torch, steps, as_json)
                  : !sglang.empty() ? sglang_log_summary(sglang, as_json)
                                    : nccl_tests_summary(nccl, as_json));
    return kExitOk;
  });
}

}  // namespace specsim::cli
