// specsim: the command line. main() only picks the subcommand from the table (commands.cc); each
// one parses its own flags and calls the stages in order (spec -> plan -> cost -> timeline -> report).
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>

#include "commands.h"
#include "error_boundary.h"
#include "report/report.h"
#include "util/error.h"

namespace {

void usage() {
  fmt::print("specsim {}: speculative-decoding verify-cycle simulator\n\nusage: specsim [COMMAND] [FLAGS]\n\n",
             specsim::kSpecsimVersion);
  for (const auto& c : specsim::cli::commands()) fmt::print("  {:<10} {}\n", c.name, c.help);
  fmt::print(
      "\nWith no COMMAND, `run`. `specsim COMMAND --help` lists a command's flags; `specsim --version` prints "
      "the version.\n");
}

int run_main(int argc, char** argv) {
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
  return specsim::cli::error_boundary([&] {
    if (argc >= 2 && argv[1][0] != '-') {
      for (const auto& c : specsim::cli::commands())
        if (!std::strcmp(argv[1], c.name)) return c.run(argc - 1, argv + 1);
      throw specsim::InputError(fmt::format("unknown command '{}'", argv[1]), "run `specsim help` for the list");
    }
    return specsim::cli::cmd_run(argc, argv);
  });
}

}  // namespace

// What was printed must reach stdout: a full disk or a closed stdout is an environment failure.
int main(int argc, char** argv) { return specsim::cli::finish_stdout(run_main(argc, argv)); }
