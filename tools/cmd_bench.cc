// `specsim bench`: how many cycle evaluations per second one core does (the sweep's budget).
#include <iostream>

#include "cli_common.h"
#include "commands.h"
#include "evaluate/throughput_bench.h"

namespace specsim::cli {

int cmd_bench(int argc, char** argv) {
  CLI::App app{"specsim bench: cycle evaluations per second on one core"};
  app.name("specsim bench");
  RunArgs args;
  double seconds = 2.0;
  add_run_flags(app, args);
  app.add_option("--seconds", seconds, "how long to run each measurement")
      ->check(CLI::Range(0.05, 600.0))
      ->check(finite_number);
  return guarded(app, argc, argv, [&] {
    std::cout << throughput_bench(args, seconds);
    return kExitOk;
  });
}

}  // namespace specsim::cli
