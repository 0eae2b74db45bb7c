#pragma once
// N cycles in a row, each with its own accepted length. What changes from cycle to cycle, as in
// SGLang: the tokens each cycle emits (accept len) and, through them, the KV-cache length the
// next cycle's attention reads. What does not: the draft/verify/extend token counts (graphs are
// padded to the draft-token count), so every other op keeps its cost.
#include <cstdint>
#include <string>
#include <vector>

#include "evaluate/evaluate_scenario.h"
#include "timeline/accept_sampler.h"

namespace specsim {

struct CycleSample {
  int index = 0;
  long long context_len = 0;  ///< KV tokens per request at the cycle's start
  int tokens = 0;             ///< tokens emitted by the whole batch this cycle
  double cycle_us = 0;
  double tok_s = 0;  ///< tokens / cycle time
};

struct CycleStats {
  int n = 0;
  std::uint64_t seed = 0;
  std::string accept_source;
  double mean_accept_len = 0;  ///< per request
  double mean_us = 0, p50_us = 0, p90_us = 0, p99_us = 0;
  double tok_s = 0;  ///< all tokens over all time
  /// Of per-cycle tok/s, named as latency percentiles are: p90 and p99 the slow tail (the tok/s
  /// that 90% and 99% of cycles reach or beat), so tok_s_p99 <= tok_s_p90 <= tok_s_p50.
  double tok_s_p50 = 0, tok_s_p90 = 0, tok_s_p99 = 0;
};

/// The scenario's plan with a different KV length (the cycle's own).
CyclePlan plan_at_context(const Scenario& s, long long context_len);

/// The cost context of a backend in a scenario (the same one run_scenario used).
CostContext cost_context(const Scenario& s, const ScenarioResult& r, const AllReduceChoice& backend);

/// Simulates `n` cycles with `backend`, drawing each request's accept len from `sampler`.
std::vector<CycleSample> simulate_cycles(const Scenario& s, const ScenarioResult& r, const AllReduceChoice& backend,
                                         AcceptSampler& sampler, int n);

/// Percentiles (nearest rank) and means of the samples.
CycleStats cycle_stats(const std::vector<CycleSample>& samples, int batch);

/// Nearest-rank percentile q in [0, 1] of `v` (sorted in place).
double percentile(std::vector<double>& v, double q);

}  // namespace specsim
