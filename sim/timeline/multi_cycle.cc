#include "timeline/multi_cycle.h"

#include <algorithm>
#include <cmath>

#include "engine/cycle_eval.h"

namespace specsim {

CyclePlan plan_at_context(const Scenario& s, long long context_len) {
  RunSpec run = s.run;
  run.context_len = context_len;
  return build_plan(s.target, s.draft ? &*s.draft : nullptr, run);
}

CostContext cost_context(const Scenario& s, const ScenarioResult& r, const AllReduceChoice& backend) {
  return CostContext{&s.hw, &s.run, backend, r.anchors, s.run.tp_size, r.runtime.active ? &r.runtime : nullptr};
}

std::vector<CycleSample> simulate_cycles(const Scenario& s, const ScenarioResult& r, const AllReduceChoice& backend,
                                         AcceptSampler& sampler, int n) {
  const CostContext ctx = cost_context(s, r, backend);
  const int bs = s.run.batch_size;
  std::vector<CycleSample> out;
  out.reserve(static_cast<std::size_t>(std::max(0, n)));
  long long context = s.run.context_len;
  long long emitted_per_request = 0;  // summed over the batch, divided below
  for (int i = 0; i < n; ++i) {
    CycleSample c;
    c.index = i;
    c.context_len = context;
    const CycleResult cr = evaluate_cycle(plan_at_context(s, context), ctx, 1.0);
    // Without speculation a "cycle" is one plain decode step emitting one token per request.
    const bool spec = s.run.speculative();
    c.cycle_us = spec ? cr.cycle_us : cr.baseline_step_us;
    for (int b = 0; b < bs; ++b) c.tokens += spec ? sampler.draw() : 1;
    c.tok_s = c.cycle_us > 0 ? c.tokens * 1e6 / c.cycle_us : 0;
    emitted_per_request += c.tokens;
    context = s.run.context_len + emitted_per_request / bs;  // the batch's mean KV length
    out.push_back(c);
  }
  return out;
}

double percentile(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::clamp<std::size_t>(rank, 1, v.size()) - 1];
}

CycleStats cycle_stats(const std::vector<CycleSample>& samples, int batch) {
  CycleStats st;
  st.n = static_cast<int>(samples.size());
  if (samples.empty()) return st;
  std::vector<double> us, tps;
  double total_us = 0, tokens = 0;
  for (const auto& c : samples) {
    us.push_back(c.cycle_us);
    tps.push_back(c.tok_s);
    total_us += c.cycle_us;
    tokens += c.tokens;
  }
  st.mean_us = total_us / st.n;
  st.mean_accept_len = tokens / (static_cast<double>(st.n) * std::max(1, batch));
  st.tok_s = total_us > 0 ? tokens * 1e6 / total_us : 0;
  st.p50_us = percentile(us, 0.50), st.p90_us = percentile(us, 0.90), st.p99_us = percentile(us, 0.99);
  // Latency convention for tok/s too: p99 is the slow tail (the rate 99% of cycles reach or beat).
  st.tok_s_p50 = percentile(tps, 0.50), st.tok_s_p90 = percentile(tps, 0.10), st.tok_s_p99 = percentile(tps, 0.01);
  return st;
}

}  // namespace specsim
