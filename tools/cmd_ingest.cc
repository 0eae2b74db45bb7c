// `specsim ingest`: read a measurement file and print what specsim takes from it. One mode per
// kind of file: --torch-trace, --sglang-log, --nccl-tests, --replay-report.
#include <iostream>

#include "cli_common.h"
#include "commands.h"
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
  app.add_option("--sglang-log", sglang, "SGLang server log: accept len and throughput");
  app.add_option("--nccl-tests", nccl, "nccl-tests output: the parsed tables");
  app.add_option("--replay-report", replay,
                 "specsim replay -o report: per-op measured vs predicted (with --trace/--csv)");
  app.add_option("--trace", trace_path, "with --replay-report: write a Chrome trace (measured beside predicted)");
  app.add_option("--csv", csv_path, "with --replay-report: write one CSV row per replayed op call");
  app.add_option("--steps", steps, "decode steps or cycles in the torch trace when it has no ProfilerStep markers");
  app.add_flag("--json", as_json, "print what was read as one JSON object (every kind of file)");
  return guarded(app, argc, argv, [&] {
    const int modes = !torch.empty() + !sglang.empty() + !nccl.empty() + !replay.empty();
    if (modes != 1)
      throw InputError("give exactly one of --torch-trace, --sglang-log, --nccl-tests, --replay-report",
                       "specsim ingest");
    if (replay.empty() && !(trace_path.empty() && csv_path.empty()))
      throw InputError("only with --replay-report", trace_path.empty() ? "--csv" : "--trace");
    check_outputs({{trace_path, "--trace"}, {csv_path, "--csv"}}, {replay});
    if (!replay.empty()) {
      std::cout << replay_report_summary(replay, trace_path, csv_path, as_json);
      return kExitOk;
    }
    if (steps < 0) throw InputError("must be positive", "--steps");
    std::cout << (!torch.empty()    ? torch_trace_summary(torch, steps, as_json)
                  : !sglang.empty() ? sglang_log_summary(sglang, as_json)
                                    : nccl_tests_summary(nccl, as_json));
    return kExitOk;
  });
}

}  // namespace specsim::cli
