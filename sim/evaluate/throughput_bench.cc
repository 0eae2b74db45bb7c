#include "evaluate/throughput_bench.h"

#include <fmt/format.h>

#include <chrono>

#include "evaluate/evaluate_scenario.h"
#include "evaluate/result_checks.h"

namespace specsim {

std::string throughput_bench(const RunArgs& args, double seconds) {
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
  std::string out = fmt::format("model {} ({} kernels over {} phases), {} all-reduce, one core:\n", s.target.name,
                                kernels, r.plan.phases.size(), ctx.backend.label());
  out += fmt::format("  cycle evaluations per second: {:.0f}\n", evals);
  out += fmt::format("  plan builds per second:       {:.0f}\n", plans);
  out += fmt::format("  plan + evaluation per second: {:.0f}\n", 1.0 / (1.0 / evals + 1.0 / plans));
  return out;
}

}  // namespace specsim
