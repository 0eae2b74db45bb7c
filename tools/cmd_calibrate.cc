// `specsim calibrate`: measurements in, a hardware profile out. One mode per kind of measurement
// (today: --nccl-tests); each mode reads, fits, and writes a profile load_hardware() accepts.
#include <iostream>

#include "calibrate/calibrate_from_nccl_tests.h"
#include "calibrate/calibrate_from_replay.h"
#include "calibrate/replay_fp8_fit.h"
#include "cli_common.h"
#include "commands.h"
#include "util/error.h"
#include "util/output_files.h"

namespace specsim::cli {

namespace {

struct CalibrateArgs {
  std::string nccl_tests;                  ///< mode: an nccl-tests all_reduce_perf log
  std::string gemmbench;                   ///< mode: a specsim-gemmbench --json file
  std::vector<std::string> from, holdout;  ///< mode: specsim replay reports (and held-out ones)
  std::string hardware;                    ///< the base profile: GPU:TOPOLOGY or a profile path
  std::string out;
  int world = 0;  ///< which table when a log has several world sizes
};

}  // namespace

int cmd_calibrate(int argc, char** argv) {
  CLI::App app{"specsim calibrate: fit a hardware profile to measurements"};
  app.name("specsim calibrate");
  CalibrateArgs a;
  app.add_option("--nccl-tests", a.nccl_tests, "mode: an nccl-tests all_reduce_perf log (several tables allowed)");
  app.add_option("--hardware", a.hardware, "the base profile: GPU:TOPOLOGY or a profile JSON path")->required();
  app.add_option("-o,--output", a.out, "the profile JSON to write")->required();
  app.add_option("--from", a.from,
                 "mode: specsim replay -o reports (repeatable): fit the compute efficiencies (and the all-reduce model "
                 "when several GPUs ran)");
  app.add_option("--gemmbench", a.gemmbench,
                 "mode: a specsim-gemmbench --json file: fit the replay's block-fp8 GEMM price (gpu.replay_block_fp8)");
  app.add_option("--holdout", a.holdout, "with --from: replay reports predicted, not fitted (repeatable)");
  app.add_option("--world", a.world,
                 "with --nccl-tests: the world size to fit when the log holds several; the ranks of a points file");
  return guarded(app, argc, argv, [&] {
    std::vector<std::string> inputs = {a.nccl_tests, a.gemmbench, a.hardware};
    inputs.insert(inputs.end(), a.from.begin(), a.from.end());
    inputs.insert(inputs.end(), a.holdout.begin(), a.holdout.end());
    check_outputs({{a.out, "-o"}}, inputs);
    if (int(!a.nccl_tests.empty()) + int(!a.from.empty()) + int(!a.gemmbench.empty()) > 1)
      throw InputError("give one mode: --nccl-tests, --from or --gemmbench", "specsim calibrate");
    if (app.count("--world") && a.nccl_tests.empty())
      throw InputError("--world picks a table of an nccl-tests log: only with --nccl-tests", "--world");
    if (app.count("--world") && (a.world < 2 || a.world > 1024))
      throw InputError("must be a world size in 2..1024 (the log's ranks)", "--world");
    if (!a.gemmbench.empty()) {
      calibrate_from_gemmbench(a.gemmbench, a.out, a.hardware, std::cout);
      return kExitOk;
    }
    if (!a.from.empty()) return calibrate_from_replay(a.from, a.out, a.hardware, a.holdout, std::cout);
    if (!a.holdout.empty()) throw InputError("--holdout needs --from", "--holdout");
    if (!a.nccl_tests.empty()) {
      calibrate_from_nccl_tests(a.nccl_tests, a.out, a.hardware, a.world, std::cout);
      return kExitOk;
    }
    throw InputError("nothing to calibrate from: give --nccl-tests LOG, --from REPLAY.json or --gemmbench BENCH.json",
                     "specsim calibrate");
  });
}

}  // namespace specsim::cli
