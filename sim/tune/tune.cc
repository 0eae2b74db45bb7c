#include "tune/tune.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "cost/allreduce_model.h"
#include "evaluate/evaluate_scenario.h"
#include "evaluate/result_checks.h"
#include "scenario/memory_fit.h"
#include "scenario/sglang_draft_rule.h"
#include "util/error.h"

namespace specsim::tune {

double TuneBatch::best_plain_tok_s() const {
  double best = 0;
  for (const auto& p : plain) best = std::max(best, p.tok_s);
  return best;
}

std::optional<int> TuneResult::stops_paying_at() const {
  std::vector<const TuneBatch*> by_size;
  for (const auto& b : batches) by_size.push_back(&b);
  std::sort(by_size.begin(), by_size.end(), [](auto* a, auto* b) { return a->batch_size < b->batch_size; });
  for (const auto* b : by_size)
    if (!b->plain.empty() && !b->pays()) return b->batch_size;
  return std::nullopt;
}

std::vector<DraftSetting> draft_settings(int max_steps, int max_topk, int max_draft_tokens) {
  std::vector<DraftSetting> out;
  for (int steps = 1; steps <= max_steps; ++steps)
    for (int topk = 1; topk <= max_topk; ++topk)
      for (int n = 2; n <= std::min(max_draft_tokens, accept::max_draft_tokens(steps, topk)); ++n)
        if (accept::sglang_accepts(steps, topk, n)) out.push_back({steps, topk, n});
  return out;
}

TuneResult run_tune(const TuneInput& in) {
  TuneResult out;
  out.backends = in.backends;
  // Not given: NCCL and the custom kernel, as `specsim run` shows them; at tp 1 there is no
  // all-reduce, so one backend stands for all.
  if (out.backends.empty())
    out.backends = in.scenario.run.tp_size > 1
                       ? std::vector<AllReduceChoice>{parse_allreduce("nccl"), parse_allreduce("custom")}
                       : std::vector<AllReduceChoice>{parse_allreduce("nccl")};
  for (const auto& b : out.backends) allreduce_model(b);  // an unknown backend fails first
  const std::vector<DraftSetting> settings = draft_settings(in.max_steps, in.max_topk, in.max_draft_tokens);
  out.settings = settings.size();

  // Accept lens per (steps, topk), for every draft-token count at once.
  std::map<std::pair<int, int>, std::vector<double>> lens;
  for (const auto& d : settings)
    if (!lens.count({d.steps, d.topk}))
      lens[{d.steps, d.topk}] = accept::tree_accept_lens(in.acceptance, d.steps, d.topk, in.max_draft_tokens);

  const Scenario& base = in.scenario;
  const ModelSpec* draft = base.draft ? &*base.draft : nullptr;
  std::vector<bool> ever_ran(out.backends.size(), false);
  for (const int bs : in.batch_sizes) {
    TuneBatch tb;
    tb.batch_size = bs;
    // The anchors of this box at this batch size (they do not depend on the draft shape).
    Scenario s = base;
    s.run.batch_size = bs;
    s.run.algo = s.run.speculative() ? s.run.algo : SpecAlgo::Eagle3;
    // A batch size `specsim run` refuses is not ranked: its weights and KV cache must fit.
    if (auto e = fit_refusal(s)) {
      tb.refused = std::move(e);
      out.batches.push_back(std::move(tb));
      continue;
    }
    s.run.num_steps = 1, s.run.topk = 1, s.run.num_draft_tokens = 2;
    s.run.accept_len = 1.0, s.run.accept_rate.reset(), s.run.measured_spec_tok_s.reset();
    s.run.allreduce = {AllReduceChoice{}};
    s.backends_defaulted = true;
    const ScenarioResult anchor = run_scenario(s);
    std::vector<bool> refused_here(out.backends.size(), false), plain_done(out.backends.size(), false);
    for (const auto& d : settings) {
      // The engine's bound on tokens per forward (validate_run's): larger batches skip the setting.
      if (double(bs) * d.draft_tokens > double(1 << 24)) {
        out.skipped += out.backends.size();
        continue;
      }
      RunSpec run = s.run;
      run.num_steps = d.steps, run.topk = d.topk, run.num_draft_tokens = d.draft_tokens;
      const CyclePlan plan = build_plan(base.target, draft, run);
      const RuntimeCost runtime = runtime_for(base, run, base.hw);
      const double accept_len = lens[{d.steps, d.topk}][d.draft_tokens - 2];
      for (std::size_t b = 0; b < out.backends.size(); ++b) {
        if (refused_here[b]) continue;
        const CostContext ctx{&base.hw,       &run,        out.backends[b],
                              anchor.anchors, run.tp_size, runtime.active ? &runtime : nullptr};
        if (const std::string why = refusal(plan, ctx); !why.empty()) {
          // A backend refused for the plain step is refused at this batch size; for one setting,
          // only that setting is left out.
          if (!plain_done[b])
            refused_here[b] = true, out.refused.push_back({b, bs, why});
          else
            ++out.skipped;
          continue;
        }
        const CycleResult c = evaluate_cycle(plan, ctx, accept_len);
        if (const std::string why = figure_problem(run, c); !why.empty()) throw InputError(why, "");
        ++out.evaluated;
        if (!plain_done[b]) {
          plain_done[b] = true, ever_ran[b] = true;
          tb.plain.push_back({b, c.baseline_step_us, c.baseline_tok_s});
        }
        tb.ranked.push_back({d.steps, d.topk, d.draft_tokens, b, c.accept_len, c.cycle_us, c.spec_tok_s, c.speedup});
      }
    }
    std::stable_sort(tb.ranked.begin(), tb.ranked.end(), [](const TuneRow& a, const TuneRow& b) {
      if (a.tok_s != b.tok_s) return a.tok_s > b.tok_s;
      // Equal tok/s: the smaller draft (fewer tokens verified, less KV cache) first.
      return std::tie(a.draft_tokens, a.steps, a.topk, a.backend) <
             std::tie(b.draft_tokens, b.steps, b.topk, b.backend);
    });
    out.batches.push_back(std::move(tb));
  }
  if (!out.batches.empty() &&
      std::all_of(out.batches.begin(), out.batches.end(), [](const TuneBatch& b) { return b.refused.has_value(); }))
    throw *out.batches.front().refused;  // nothing fits: what `run` says at the first batch size
  for (std::size_t b = 0; b < out.backends.size(); ++b)
    if (!ever_ran[b] && in.backends_given) {
      const Refusal* r = nullptr;
      for (const auto& x : out.refused)
        if (x.backend == b) r = &x;
      throw InputError(fmt::format("all-reduce {} cannot run at any batch size asked{}", out.backends[b].label(),
                                   r ? ": " + r->reason : std::string()),
                       "--allreduce");
    }
  bool any = false;
  for (const auto& tb : out.batches) any = any || !tb.ranked.empty();
  if (!any) throw InputError("no all-reduce backend can run this scenario", "--allreduce");
  return out;
}

}  // namespace specsim::tune
