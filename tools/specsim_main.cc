// specsim: the command line. main() only hands argv to dispatch (commands.cc), which picks the
// subcommand from the table; each one parses its own flags and calls the stages in order (spec -> plan -> cost ->
// timeline -> report).
#include <cstdlib>

#include "commands.h"
#include "error_boundary.h"

namespace {

int run_main(int argc, char** argv) {
  // NCCL reads this when it starts: never NVLink SHARP (multicast), whichever command starts NCCL
  // (replay, check --replay); kernels/replay refuses to start NCCL without it.
  ::setenv("NCCL_NVLS_ENABLE", "0", 1);
  return specsim::cli::dispatch(argc, argv);
}

}  // namespace

// What was printed must reach stdout: a full disk or a closed stdout is an environment failure.
int main(int argc, char** argv) { return specsim::cli::finish_stdout(run_main(argc, argv)); }
