// The subcommand table (commands.h): a new subcommand is one row here; and the dispatch on it
// that `specsim` and the Python module's call() share.
#include "commands.h"

#include <fmt/format.h>

#include <cstring>
#include <iostream>

#include "error_boundary.h"
#include "report/report.h"
#include "util/error.h"

namespace specsim::cli {

namespace {

constexpr Command kCommands[] = {
    {"run", "predict one scenario's cycle cost and tok/s (the default)", cmd_run},
    {"bench", "cycle evaluations per second on one core", cmd_bench},
    {"replay", "run the cycle on this GPU and compare measured with predicted", cmd_replay},
    {"sweep", "evaluate a grid of settings (lists, ranges) on all cores: CSV, JSON, plots", cmd_sweep},
    {"check", "rerun a scenario and compare it with a baseline JSON (exit 1 on a regression)", cmd_check},
    {"calibrate", "fit a hardware profile to measurements (nccl-tests logs, replay reports)", cmd_calibrate},
    {"ingest", "read a torch-profiler trace, SGLang log or nccl-tests log and print what it holds", cmd_ingest},
    {"diagnose", "an SGLang server log -> the scenario reproducing its tok/s, and where log and model disagree",
     cmd_diagnose},
    {"validate", "predict the published measurements (traces/published/) and print the errors", cmd_validate},
    {"tune", "rank draft settings (steps, topk, draft tokens) by tok/s per batch size from measured acceptance",
     cmd_tune},
};

}  // namespace

std::span<const Command> commands() { return kCommands; }

namespace {

// Through std::cout, as every subcommand prints: the Python module captures that stream.
void usage() {
  std::cout << fmt::format(
      "specsim {}: speculative-decoding verify-cycle simulator\n\nusage: specsim [COMMAND] [FLAGS]\n\n",
      kSpecsimVersion);
  for (const auto& c : commands()) std::cout << fmt::format("  {:<10} {}\n", c.name, c.help);
  std::cout << "\nWith no COMMAND, `run`. `specsim COMMAND --help` lists a command's flags; `specsim --version` "
               "prints the version.\n";
}

}  // namespace

int dispatch(int argc, char** argv) {
  if (argc >= 2 && !std::strcmp(argv[1], "--version")) {
    std::cout << fmt::format("specsim {}\n", kSpecsimVersion);
    return 0;
  }
  if (argc >= 2 && (!std::strcmp(argv[1], "help") || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h"))) {
    usage();
    return 0;
  }
  return error_boundary([&] {
    if (argc >= 2 && argv[1][0] != '-') {
      for (const auto& c : commands())
        if (!std::strcmp(argv[1], c.name)) return c.run(argc - 1, argv + 1);
      throw InputError(fmt::format("unknown command '{}'", argv[1]), "run `specsim help` for the list");
    }
    return cmd_run(argc, argv);
  });
}

}  // namespace specsim::cli
