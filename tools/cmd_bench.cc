// `specsim bench`: how many cycle evaluations per second one core does (the sweep's budget).
#include <fmt/format.h>

#include <chrono>

#include "cli_common.h"
#include "commands.h"
#include "evaluate/result_checks.h"

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
    using clock = std::chrono::steady_clock;
    const Scenario s = resolve_scenario(args);
    const ScenarioResult r = run_scenario(s);  // anchors and accept len, once
    check_result_figures(s, r);
    CostContext ctx{&s.hw,     &s.run,        s.run.allreduce.front(),
                    r.anchors, s.run.tp_size, r.runtime.active ? &r.runtime : nullptr};

    volatile double sink = 0;  // each result is stored, so the compiler cannot drop the work
    auto rate = [&](auto&& once) {
      long n = 0;
      const auto t0 = clock::now();
      const auto stop = t0 + std::chrono::duration<double>(seconds);
      while (clock::now() < stop)
        for (int i = 0; i < 64; ++i, ++n) sink = once();
      const double dt = std::chrono::duration<double>(clock::now() - t0).count();
      return double(n) / dt;
    };
    const double evals = rate([&] { return evaluate_cycle(r.plan, ctx, r.accept_len).cycle_us; });
    const ModelSpec* draft = s.draft ? &*s.draft : nullptr;
    const double plans = rate([&] { return double(build_plan(s.target, draft, s.run).phases.size()); });
    int kernels = 0;
    for (const auto& p : r.plan.phases) kernels += p.kernels();
    fmt::print("model {} ({} kernels over {} phases), {} all-reduce, one core:\n", s.target.name, kernels,
               r.plan.phases.size(), ctx.backend.label());
    fmt::print("  cycle evaluations per second: {:.0f}\n", evals);
    fmt::print("  plan builds per second:       {:.0f}\n", plans);
    fmt::print("  plan + evaluation per second: {:.0f}\n", 1.0 / (1.0 / evals + 1.0 / plans));
    return kExitOk;
  });
}

}  // namespace specsim::cli
