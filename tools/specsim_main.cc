// specsim: the command line. main() only picks the subcommand; each one parses its own flags
// and calls the stages in order (spec -> plan -> cost -> timeline -> report).
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>

#include "commands.h"
#include "report/report.h"

namespace {

struct Command {
  const char* name;
  const char* help;
  int (*run)(int argc, char** argv);
};

constexpr Command kCommands[] = {
    {"run", "predict one scenario's cycle cost and tok/s (the default)", specsim::cli::cmd_run},
    {"bench", "cycle evaluations per second on one core", specsim::cli::cmd_bench},
    {"replay", "run the cycle on this GPU and compare measured with predicted", specsim::cli::cmd_replay},
    {"sweep", "evaluate a grid of settings (lists, ranges) on all cores: CSV, JSON, plots", specsim::cli::cmd_sweep},
    {"check", "rerun a scenario and compare it with a baseline JSON (exit 1 on a regression)", specsim::cli::cmd_check},
    {"calibrate", "fit a hardware profile to measurements (nccl-tests logs, replay reports)",
     specsim::cli::cmd_calibrate},
    {"ingest", "read a torch-profiler trace, SGLang log or nccl-tests log and print what it holds",
     specsim::cli::cmd_ingest},
    {"diagnose", "an SGLang server log -> the scenario reproducing its tok/s, and where log and model disagree",
     specsim::cli::cmd_diagnose},
    {"validate", "predict the published measurements (traces/published/) and print the errors",
     specsim::cli::cmd_validate},
    {"tune", "rank draft settings (steps, topk, draft tokens) by tok/s per batch size from measured acceptance",
     specsim::cli::cmd_tune},
};

void usage() {
  fmt::print("specsim {}: speculative-decoding verify-cycle simulator\n\nusage: specsim [COMMAND] [FLAGS]\n\n",
             specsim::kSpecsimVersion);
  for (const auto& c : kCommands) fmt::print("  {:<10} {}\n", c.name, c.help);
  fmt::print(
      "\nWith no COMMAND, `run`. `specsim COMMAND --help` lists a command's flags; `specsim --version` prints "
      "the version.\n");
}

}  // namespace

int main(int argc, char** argv) {
  // NCCL reads this when it starts: never NVLink SHARP (multicast), whichever command starts NCCL
  // (replay, check --replay); kernels/replay refuses to start NCCL without it.
  ::setenv("NCCL_NVLS_ENABLE", "0", 1);
  if (argc >= 2 && !std::strcmp(argv[1], "--version")) {
    fmt::print("specsim {}\n", specsim::kSpecsimVersion);
    return 0;
  }
  if (argc >= 2 && (!std::strcmp(argv[1], "help") || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h"))) {
    usage();
    return 0;
  }
  if (argc >= 2 && argv[1][0] != '-') {
    for (const auto& c : kCommands)
      if (!std::strcmp(argv[1], c.name)) return c.run(argc - 1, argv + 1);
    fmt::print(stderr, "error: unknown command '{}' (run `specsim help` for the list)\n", argv[1]);
    return 2;
  }
  return specsim::cli::cmd_run(argc, argv);
}
