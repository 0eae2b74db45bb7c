// `specsim check --baseline BASELINE.json [run flags]`: reruns the scenario and compares every
// phase time and the tok/s with the baseline (`specsim run --json > BASELINE.json`).
// Exit 0: all within tolerance; 1: something regressed (a diff table says what); 2: bad input.
#include <algorithm>
#include <iostream>

#include "check/check_command.h"
#include "cli_common.h"
#include "commands.h"
#ifdef SPECSIM_WITH_REPLAY
#include "allreduce_verify.h"
#include "replay_exec.h"
#endif

namespace specsim::cli {

namespace {

// The GPU work of --replay, where kernels/replay was built: the library times phase `us` only.
const check::ReplayGpu* replay_gpu() {
#ifdef SPECSIM_WITH_REPLAY
  static const check::ReplayGpu gpu{replay::cuda_device_count, replay::verify_allreduces,
                                    [](const CyclePlan& plan, int iters, int warmup) {
                                      replay::ReplayOptions opt;
                                      opt.iters = iters, opt.warmup = warmup, opt.op_passes = 1, opt.gemm_chain = false;
                                      return replay::replay_plan(plan, opt);
                                    }};
  return &gpu;
#else
  return nullptr;
#endif
}

// The options given on the command line other than `own`, as typed: "--batch-size 4", "--flag".
std::vector<std::string> given_flags(const CLI::App& app, const std::vector<std::string>& own) {
  std::vector<std::string> out;
  for (const CLI::Option* o : app.get_options()) {
    const std::string name = o->get_name();
    if (o->count() == 0 || std::find(own.begin(), own.end(), name) != own.end()) continue;
    std::string typed = name;
    if (o->get_type_size() != 0)
      for (const auto& v : o->results()) typed += " " + v;
    out.push_back(typed);
  }
  return out;
}

}  // namespace

int cmd_check(int argc, char** argv) {
  CLI::App app{"specsim check: rerun a scenario and compare it with a baseline from `specsim run --json`"};
  app.name("specsim check");
  RunArgs args;
  check::CheckRequest q;
  add_run_flags(app, args);
  app.add_option("--gate", q.gate,
                 "what may fail the check: tok_per_s (default), cycle_us (cycle and step time) or phases (every "
                 "phase time); the others are shown, not gated");
  app.add_flag("--json", q.json, "print the rows and the verdict as one JSON object (for CI)");
  app.add_option("--accept-from", q.accept_from,
                 "SGLang server log: its mean logged accept len is the rerun's accept len");
  app.add_option("--baseline", q.baseline, "baseline JSON written by `specsim run --json`")->required();
  app.add_option("--tolerance", q.tolerance, "allowed slowdown: a fraction (0.03) or a percentage (3%), default 3%");
  app.add_flag("--replay", q.replay,
               "verify every all-reduce on the GPU, then replay the plan and compare measured phase times with a "
               "`specsim replay -o` baseline");
  app.add_option("--iters", q.iters, "--replay: timed graph replays per phase")->check(CLI::Range(1, 100000));
  app.add_option("--warmup", q.warmup, "--replay: untimed replays first")->check(CLI::Range(0, 100000));
  app.add_flag("--allow-different-settings", q.allow_different,
               "for a baseline that holds no scenario (a replay report, or one made before baselines carried "
               "theirs): compare even when the rerun's model, hardware or settings differ from the baseline's");
  app.add_option("--junit", q.junit, "also write the figures and the verdict as JUnit XML to FILE (for CI)");
  // What is not one of these is a run flag: given beside the baseline, the change under test.
  const std::vector<std::string> own = {"--help",     "--gate",      "--json",
                                        "--baseline", "--tolerance", "--replay",
                                        "--iters",    "--warmup",    "--allow-different-settings",
                                        "--junit"};
  return guarded(app, argc, argv, [&] {
    q.changes = given_flags(app, own);
    return check::run_check(args, q, replay_gpu(), std::cout, std::cerr) ? kExitRegression : kExitOk;
  });
}

}  // namespace specsim::cli
