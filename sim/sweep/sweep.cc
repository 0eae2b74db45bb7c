#include "sweep/sweep.h"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "accept/accept_len.h"
#include "cost/allreduce_model.h"
#include "evaluate/result_checks.h"
#include "report/error_band.h"
#include "scenario/load_scenario.h"
#include "scenario/memory_fit.h"
#include "util/error.h"

namespace specsim::sweep {

const char* part_name(int part) {
  static constexpr const char* kNames[kNumParts] = {"gemm",  "attention", "allreduce", "allgather",
                                                    "other", "launch",    "overhead",  "runtime"};
  return part >= 0 && part < kNumParts ? kNames[part] : "?";
}

namespace {

using Index = std::array<size_t, kNumAxes>;

// A scenario per value of the axes before kFirstGroupAxis (tp, the layout, dtype): resolving
// reads files and checks the layout, so it happens once per combination, up front.
struct Resolved {
  std::optional<Scenario> scenario;
  std::string error;
  std::string skip_key;  // a refused layout: counted by the flag refused, not by its numbers
};

bool layout_flag(const std::string& where) {
  for (const char* f : {"--dp-size", "--ep-size", "--enable-dp-attention", "--moe-a2a-backend"})
    if (where.find(f) != std::string::npos) return true;
  return false;
}

// The run flags of one combination of the scenario axes (`ix`: those axes' value indices).
RunArgs scenario_args(const SweepInput& in, const Index& ix) {
  const Grid& g = in.grid;
  RunArgs a = in.base;
  if (!g.tp.empty()) a.tp_size = static_cast<int>(g.tp[ix[kTp]]);
  if (!g.dp.empty()) a.parallel.dp_size = static_cast<int>(g.dp[ix[kDp]]);
  if (!g.ep.empty()) a.parallel.ep_size = static_cast<int>(g.ep[ix[kEp]]);
  if (!g.dp_attention.empty()) a.parallel.enable_dp_attention = g.dp_attention[ix[kDpAttn]] != 0;
  if (!g.dtype.empty()) a.dtype = g.dtype[ix[kDtype]];
  return a;
}

std::vector<Resolved> resolve_all(const SweepInput& in) {
  const Grid& g = in.grid;
  bool swept = false;
  for (int a = 0; a < kFirstGroupAxis; ++a) swept = swept || g.swept(a);
  std::vector<Resolved> out(g.scenarios());
  for (size_t k = 0; k < out.size(); ++k) {
    Resolved& r = out[k];
    try {
      RunArgs a = scenario_args(in, g.decode(k * g.points_per_scenario()));
      r.scenario = load_scenario(in.file, a);
    } catch (const InputError& e) {
      if (!swept) throw;  // nothing else to sweep: plain bad input
      r.error = e.line();
      if (layout_flag(e.where()))
        r.skip_key = "layout refused (" + e.where() + ")";
      else if (r.error.find("does not fit") != std::string::npos)
        r.skip_key = "does not fit GPU memory (" + e.where() + ")";
    }
  }
  return out;
}

// What one worker keeps between points: the plan of the current plan-shaping combination.
struct Group {
  size_t id = SIZE_MAX;
  std::string error;  // non-empty: every point of this group is skipped for this reason
  // Groups the count of refusals whose text differs only in its numbers (a context, a batch): one
  // line per cause, with the message of its first point (empty: the reason itself).
  std::string skip_key;
  Scenario s;
  ScenarioResult r;
};

void prepare_group(const SweepInput& in, const std::vector<Resolved>& resolved, size_t id, const Index& ix, Group& g) {
  const Grid& grid = in.grid;
  g.id = id;
  g.error.clear();
  g.skip_key.clear();
  const Resolved& res = resolved[id * grid.points_per_plan() / grid.points_per_scenario()];
  if (!res.scenario) {
    g.error = res.error;
    g.skip_key = res.skip_key;
    return;
  }
  g.s = *res.scenario;
  RunSpec& run = g.s.run;
  if (!grid.batch.empty()) run.batch_size = static_cast<int>(grid.batch[ix[kBatch]]);
  if (!grid.context.empty()) run.context_len = grid.context[ix[kContext]];
  if (!grid.graph_bs.empty()) run.cuda_graph_max_bs = static_cast<int>(grid.graph_bs[ix[kGraphBs]]);
  // The scenario was resolved without the swept draft-shape flags: apply them as a run does.
  auto value = [&](const std::vector<long long>& axis, int a) {
    return axis.empty() ? std::nullopt : std::optional<int>(static_cast<int>(axis[ix[a]]));
  };
  apply_draft_shape(run, value(grid.topk, kTopk), value(grid.steps, kSteps), value(grid.draft_tokens, kDraftTokens));
  // Swept acceptance is applied per point; the group only needs a valid placeholder.
  if (!grid.accept_len.empty() || !grid.accept_rate.empty()) {
    run.accept_len = 1.0;
    run.accept_rate.reset();
  }
  // What `specsim run` refuses at these settings, in its order: the settings SGLang rejects, the
  // context beyond the model's positions, then the static memory (weights and KV cache) over the
  // GPU's budget (with the largest batch that fits).
  try {
    validate_run(run);
  } catch (const InputError& e) {
    g.error = e.line();
    // the launch command's limits: one skip line per cause, whatever batch or context went over
    if (e.line().find("the launch's") != std::string::npos)
      g.skip_key = "beyond the launch command's limits (" + e.where() + ")";
    return;
  }
  if (g.s.target.max_position > 0 && run.context_len > g.s.target.max_position) {
    g.error = InputError(fmt::format("{} tokens of context exceed {}'s max_position_embeddings ({})", run.context_len,
                                     g.s.target.name, g.s.target.max_position),
                         "--context-len")
                  .line();
    g.skip_key = "context beyond max_position_embeddings";
    return;
  }
  if (const auto e = fit_refusal(g.s)) {
    g.error = e->line();
    g.skip_key = "does not fit GPU memory (" + e->where() + ")";  // by cause: weights, or KV cache
    return;
  }
  // Plan and anchors only: one cheap NCCL evaluation, the backends come per point.
  run.allreduce = {AllReduceChoice{}};
  g.s.backends_defaulted = true;
  try {
    g.r = run_scenario(g.s);
  } catch (const InputError& e) {
    g.error = e.line();
  }
}

struct Worker {
  std::map<std::string, SkipReason> skips;  // by key: the reason, or its cause (Group::skip_key)
  size_t evaluated = 0;
  void skip(std::string why, size_t i, const std::string& key = "") {
    auto& s = skips[key.empty() ? why : key];
    if (s.count++ == 0 || i < s.first_point) s.reason = std::move(why), s.first_point = i;
  }
};

void eval_point(const SweepInput& in, const std::vector<AllReduceChoice>& backends, const Group& g, const Index& ix,
                size_t i, PointResult& out, Worker& w) {
  const Grid& grid = in.grid;
  const RunSpec& run = g.s.run;
  double accept = g.r.accept_len;
  if (run.speculative() && !grid.accept_len.empty()) {
    accept = grid.accept_len[ix[kAcceptLen]];
    if (!(accept >= 1.0 && accept <= run.num_steps + 1))
      return w.skip(fmt::format("accept len {:g} outside [1, {}] (1 bonus token .. steps + 1) (--accept-len)", accept,
                                run.num_steps + 1),
                    i);
  } else if (run.speculative() && !grid.accept_rate.empty()) {
    const double rate = grid.accept_rate[ix[kAcceptRate]];
    if (!(rate >= 0 && rate < 1))
      return w.skip(fmt::format("accept rate {:g} outside [0, 1) (--accept-rate)", rate), i);
    accept = accept_len_at(rate, run.num_steps, run.topk, run.num_draft_tokens, run.accept_decay);
  }
  const AllReduceChoice& backend = backends[ix[kAllReduce]];
  const CostContext ctx{&g.s.hw, &run, backend, g.r.anchors, run.tp_size, g.r.runtime.active ? &g.r.runtime : nullptr};
  if (const std::string why = refusal(g.r.plan, ctx); !why.empty())
    return w.skip(allreduce_refused(backend, why).line(), i);
  const CycleResult c = evaluate_cycle(g.r.plan, ctx, accept);
  if (const std::string why = figure_problem(run, c); !why.empty()) return w.skip(why, i);
  out.ok = true;
  out.tp = run.tp_size, out.dp = run.layout.dp_attention ? run.layout.dp : 1, out.ep = run.layout.ep;
  out.dp_attention = run.layout.dp_attention;
  out.a2a = run.layout.a2a;
  out.batch = run.batch_size, out.graph_bs = run.cuda_graph_max_bs;
  out.steps = run.num_steps, out.topk = run.topk, out.draft_tokens = run.num_draft_tokens;
  out.context = run.context_len;
  out.dtype = run.dtype.value_or(g.s.target.weight_dtype);
  out.backend = static_cast<uint32_t>(ix[kAllReduce]);
  out.accept_len = c.accept_len, out.baseline_step_us = c.baseline_step_us, out.baseline_tok_s = c.baseline_tok_s;
  out.cycle_us = c.cycle_us, out.spec_tok_s = c.spec_tok_s, out.speedup = c.speedup;
  out.breakeven_accept_len = c.breakeven_accept_len, out.allreduce_share = c.allreduce_share;
  // as `run` reports it: a figure measured at these settings has no band but itself
  const MeasuredFigures measured = measured_figures(g.s, g.r, c);
  out.baseline_measured = measured.baseline;
  out.spec_measured = measured.spec && accept == g.r.accept_len;
  out.phase_us.fill(-1);
  out.cycle_parts_us.fill(0);
  for (const auto& p : c.phases) {
    out.phase_us[static_cast<int>(p.kind)] = p.us;
    const bool in_cycle = run.speculative() ? p.kind != PhaseKind::BaselineDecode : p.kind == PhaseKind::BaselineDecode;
    if (!in_cycle) continue;
    const double n = run.speculative() ? p.count : 1;
    // the all-to-alls of expert parallelism and the pipeline's stage sends sit with the all-gathers:
    // collectives beside the all-reduce
    const double parts[kNumParts] = {
        p.gemm_us,  p.attention_us, p.allreduce_us, p.allgather_us + p.alltoall_us + p.p2p_us,
        p.other_us, p.launch_us,    p.overhead_us,  p.spec_overhead_us};
    for (int k = 0; k < kNumParts; ++k) out.cycle_parts_us[k] += n * parts[k];
  }
  ++w.evaluated;
}

}  // namespace

SweepResult run_sweep(const SweepInput& in) {
  const Grid& grid = in.grid;
  if (!grid.accept_len.empty() && !grid.accept_rate.empty())
    throw InputError("give --accept-len or --accept-rate, not both", "--accept-rate");
  const std::vector<Resolved> resolved = resolve_all(in);

  SweepResult out;
  for (const auto& r : resolved)
    if (r.scenario) {
      out.base = *r.scenario;
      break;
    }
  // No --allreduce: the scenario's default backends (what `specsim run` shows side by side).
  out.backends = !grid.allreduce.empty() ? grid.allreduce : out.base.run.allreduce;
  if (out.backends.empty()) out.backends = {parse_allreduce("nccl"), parse_allreduce("custom")};
  for (const auto& b : out.backends) allreduce_model(b);  // an unknown backend fails before any point
  Grid eff = grid;                                        // the all-reduce axis always has values from here on
  eff.allreduce = out.backends;
  const size_t total = eff.size();
  SweepInput run_in = in;
  run_in.grid = eff;
  out.points.resize(total);

  const size_t per_plan = eff.points_per_plan();
  constexpr size_t kChunk = 2048;
  std::atomic<size_t> next{0};
  const int threads = std::max(1, std::min<int>(in.threads, int((total + kChunk - 1) / kChunk)));
  std::vector<Worker> workers(threads);
  std::exception_ptr failure;
  std::mutex failure_mu;
  auto work = [&](Worker& w) {
    try {
      Group g;
      for (size_t lo; (lo = next.fetch_add(kChunk)) < total;) {
        const size_t hi = std::min(total, lo + kChunk);
        for (size_t i = lo; i < hi; ++i) {
          const Index ix = eff.decode(i);
          if (i / per_plan != g.id) prepare_group(run_in, resolved, i / per_plan, ix, g);
          if (!g.error.empty())
            w.skip(g.error, i, g.skip_key);
          else
            eval_point(run_in, out.backends, g, ix, i, out.points[i], w);
        }
        if (in.progress) in.progress->fetch_add(hi - lo, std::memory_order_relaxed);
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(failure_mu);
      if (!failure) failure = std::current_exception();
      next.store(total);
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work, std::ref(workers[t]));
  work(workers[0]);
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);

  std::map<std::string, SkipReason> merged;
  for (const auto& w : workers) {
    out.evaluated += w.evaluated;
    for (const auto& [why, s] : w.skips) {
      auto& m = merged[why];
      if (m.count == 0 || s.first_point < m.first_point) m.first_point = s.first_point, m.reason = s.reason;
      m.count += s.count;
    }
  }
  for (auto& [why, s] : merged) out.skipped.push_back(std::move(s));
  std::sort(out.skipped.begin(), out.skipped.end(),
            [](const SkipReason& a, const SkipReason& b) { return a.first_point < b.first_point; });
  return out;
}

}  // namespace specsim::sweep
