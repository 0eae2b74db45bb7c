#include "anchors/anchors.h"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <cmath>
#include <functional>
#include <map>

#include "accept/accept_len.h"
#include "cost/allreduce_model.h"
#include "cost/runtime_cost.h"
#include "engine/cycle_eval.h"
#include "util/error.h"

namespace specsim {

namespace {

// Two measurements of one term further apart than this contradict each other.
constexpr double kContradictionShare = 0.05;

// What a measured step or cycle far shorter than the model's most likely comes from: the tok/s of
// more requests than the run's batch, a wrong unit, or a GPU profile far off for this model.
std::string far_under_hint(int batch) {
  return fmt::format("a wrong unit, tok/s of more requests than --batch-size {}, or this GPU's profile far off?",
                     batch);
}

// A measured step or cycle this many times the model's is used (eager phases, a slow host or
// interconnect can do that) but said, with what else it may be.
constexpr double kFarOverShare = 3.0;

std::string far_over_caution(double measured_us, double model_us, double tok_s, int batch) {
  if (!(measured_us > kFarOverShare * model_us)) return "";
  const std::string per_request =
      batch > 1 ? fmt::format(" one request's tok/s where the batch's is asked for (its {} requests: {:g} tok/s)?;",
                              batch, tok_s * batch)
                : "";
  return fmt::format(
      "the measurement takes {:.1f}x the modelled time:{} another GPU or dtype than --hardware and the "
      "weights?; phases run eagerly (--disable-cuda-graph, --eager-phases)? It is used as measured",
      measured_us / model_us, per_request);
}

struct Box {
  const MeasuredRun* m;
  CyclePlan plan;
  std::string key;
  RuntimeCost runtime;  ///< the serving runtime's own work on that box (inactive: none)
};

std::string mode_name(bool graph) { return graph ? "graph" : "eager"; }

// A measured all-reduce used on the box weighs in the modelled cycle: a refusal of the box's tok/s
// names it beside them, as one of the measurements that disagree.
const AnchorEntry* allreduce_on(const AnchorReport& rep, const std::string& box) {
  for (const auto& e : rep.entries)
    if (e.kind == AnchorKind::AllReduce && e.used && e.box == box) return &e;
  return nullptr;
}

std::string with_allreduce(const AnchorReport& rep, const Box& b) {
  const AnchorEntry* ar = allreduce_on(rep, b.key);
  if (!ar) return "";
  const PhasePlan* p = b.plan.find(ar->phase);
  const int n = p ? p->count_of(OpKind::AllReduce) : 0;
  return fmt::format(" (with the measured {:g} us per NCCL all-reduce: {} of them, {:.0f} us, in the {})", ar->measured,
                     n, n * ar->measured, phase_name(ar->phase));
}

std::string with_allreduce_source(const AnchorReport& rep, const Box& b, const std::string& source) {
  const AnchorEntry* ar = allreduce_on(rep, b.key);
  return ar ? source + ", " + ar->source : source;
}

bool verify_graphed(const CyclePlan& plan) {
  const PhasePlan* p = plan.find(PhaseKind::Verify);
  return p && p->graph;
}

const PhasePlan* allreduce_phase(const CyclePlan& plan) {
  const PhasePlan* p = plan.find(PhaseKind::Verify);
  if (!p) p = plan.find(PhaseKind::BaselineDecode);
  return p && p->count_of(OpKind::AllReduce) > 0 ? p : nullptr;
}

// Marks the earlier entry of the same term and place as replaced by the later one.
void resolve_same_place(std::vector<AnchorEntry>& es, std::size_t later, const std::string& place,
                        const std::function<bool(const AnchorEntry&)>& same, double later_value,
                        const std::function<double(const AnchorEntry&)>& value, const std::string& unit) {
  for (std::size_t i = 0; i < later; ++i) {
    AnchorEntry& e = es[i];
    if (!e.used || e.kind != es[later].kind || !same(e)) continue;
    const double v = value(e);
    const bool contradicts = std::abs(later_value - v) > kContradictionShare * std::max(std::abs(v), 1e-9);
    e.used = false;
    const AnchorEntry& l = es[later];  // its source may begin with its origin's name: said once
    const std::string named = l.source.rfind(l.origin, 0) == 0 ? l.source : l.origin + " " + l.source;
    e.conflict =
        fmt::format("{} by the {} ({}): that one is used", contradicts ? "contradicted" : "replaced", named, place);
    es[later].conflict = fmt::format("{} the {} {:g} {} ({}{})", contradicts ? "contradicts" : "agrees with", e.origin,
                                     e.measured, unit, place, contradicts ? "; this one is used" : "");
  }
}

// Plain-decode measurements of one box at different batch sizes do not contradict each other (the
// per-step overhead grows with the requests): the one at the run's batch anchors it, else the one
// nearest it (in ratio; the later on a tie); the others are kept in the report, not used.
void prefer_run_batch(std::vector<AnchorEntry>& es, std::size_t first, int run_batch) {
  std::map<std::string, std::size_t> best;  // box -> entry
  auto distance = [&](const AnchorEntry& e) { return std::abs(std::log(double(e.batch_size) / run_batch)); };
  for (std::size_t i = first; i < es.size(); ++i) {
    if (!es[i].used) continue;
    auto [it, fresh] = best.emplace(es[i].box, i);
    if (!fresh && distance(es[i]) <= distance(es[it->second])) it->second = i;
  }
  for (std::size_t i = first; i < es.size(); ++i) {
    AnchorEntry& e = es[i];
    if (!e.used || best[e.box] == i) continue;
    const AnchorEntry& used = es[best[e.box]];
    e.used = false;
    e.conflict = fmt::format("measured at bs {}; the {} {:g} tok/s at bs {} is {} this run's bs {}: that one is used",
                             e.batch_size, used.origin, used.measured, used.batch_size,
                             used.batch_size == run_batch ? "at" : "nearer", run_batch);
  }
}

// The unexplained cycle time of each box's cycle entries as per draft forward and per verify:
// least squares over residual = S a + b where two or more step counts were measured, else the
// mean residual split in proportion to the modelled time of the S draft forwards and of the
// verify. Proportion, not an even split: a draft forward costs a fraction of a verify, and an
// even split charges each added draft step the verify's share of the error (docs/model.md).
void fit_cycle_extras(std::vector<AnchorEntry>& es, std::size_t first, int run_batch,
                      std::map<std::string, Anchors>& by_box) {
  std::map<std::string, std::vector<AnchorEntry*>> per_box;
  for (std::size_t i = first; i < es.size(); ++i)
    if (es[i].used) per_box[es[i].box].push_back(&es[i]);
  for (auto& [box, list] : per_box) {
    // Cycles measured at the run's batch size, where there are some, are its terms: at another
    // batch the per-request work differs, so those are kept in the report and not fitted.
    std::vector<AnchorEntry*> at_batch;
    for (AnchorEntry* e : list)
      if (e->batch_size == run_batch) at_batch.push_back(e);
    if (!at_batch.empty() && at_batch.size() < list.size()) {
      for (AnchorEntry* e : list)
        if (e->batch_size != run_batch) {
          e->used = false;
          e->conflict = fmt::format("measured at bs {}; the {} cycle{} measured at this run's bs {} {} used",
                                    e->batch_size, at_batch.size(), at_batch.size() == 1 ? "" : "s", run_batch,
                                    at_batch.size() == 1 ? "is" : "are");
        }
      list = at_batch;
    }
    double step = 0, extend = 0, verify = 0;
    bool two_settings = false;
    for (const AnchorEntry* e : list) two_settings |= e->steps != list.front()->steps;
    if (two_settings) {
      Eigen::MatrixXd a(list.size(), 2);
      Eigen::VectorXd y(list.size());
      for (std::size_t i = 0; i < list.size(); ++i) a(i, 0) = list[i]->steps, a(i, 1) = 1.0, y(i) = list[i]->derived;
      const Eigen::Vector2d x = a.colPivHouseholderQr().solve(y);
      step = extend = x(0), verify = x(1);
    } else {
      // each forward carries its own modelled share: a draft extend that costs less than a draft
      // decode forward takes less, and none goes below zero for a cycle over half the modelled
      double mean = 0, share = 0, extend_share = 0;
      for (const AnchorEntry* e : list) {
        mean += e->derived / static_cast<double>(list.size());
        share += e->draft_share / static_cast<double>(list.size());
        extend_share += e->extend_share / static_cast<double>(list.size());
      }
      const int decode_forwards = list.front()->steps - 1;
      extend = mean * extend_share;
      step = decode_forwards > 0 ? mean * (share - extend_share) / decode_forwards : extend;
      verify = mean * (1.0 - share);
    }
    for (AnchorEntry* e : list) e->step_extra_us = step, e->extend_extra_us = extend, e->verify_extra_us = verify;
    by_box[box].spec_step_extra_us = step, by_box[box].spec_extend_extra_us = extend;
    by_box[box].spec_verify_extra_us = verify;
  }
}

}  // namespace

std::string_view anchor_kind_name(AnchorKind k) {
  switch (k) {
    case AnchorKind::AllReduce: return "allreduce";
    case AnchorKind::Baseline: return "baseline";
    case AnchorKind::Cycle: return "cycle";
    default: return "spec";
  }
}

const AnchorEntry* AnchorReport::acceptance() const {
  for (const auto& e : entries)
    if ((e.kind == AnchorKind::Spec || e.kind == AnchorKind::Cycle) && e.used) return &e;
  return nullptr;
}

double AnchorEntry::measured_accept_len() const { return kind == AnchorKind::Cycle ? accept_len : derived; }

std::string box_key(const Hardware& hw, const RunSpec& run, const ModelSpec& target) {
  return fmt::format("{}x {} on {}, tp {}, {}", hw.num_gpus, hw.gpu.name, hw.topo.name, run.tp_size,
                     dtype_name(run.dtype.value_or(target.weight_dtype)));
}

Anchors derive_anchors(const Scenario& s, const CyclePlan& run_plan, double given_accept, AnchorReport& rep) {
  rep = AnchorReport{};
  const ModelSpec* draft = s.draft ? &*s.draft : nullptr;
  std::vector<Box> boxes;
  for (const auto& m : s.measured) {
    validate_run(m.run);
    boxes.push_back({&m, build_plan(s.target, m.run.speculative() ? draft : nullptr, m.run),
                     box_key(m.hw, m.run, s.target), runtime_for(s, m.run, m.hw)});
  }
  std::map<std::string, Anchors> by_box;  // the terms found on each box
  // The all-reduce a measurement ran: NCCL, unless its run names only the stack's own
  // (--allreduce sglang|vllm: what that server runs, so what its tok/s were measured with).
  auto measured_with = [](const RunSpec& r) {
    const bool stack = r.allreduce.size() == 1 &&
                       (r.allreduce.front().kind_name() == "sglang" || r.allreduce.front().kind_name() == "vllm");
    return stack ? r.allreduce.front() : AllReduceChoice{};
  };
  auto taken_with = [&](const RunSpec& r) {
    const std::string k = measured_with(r).kind_name();
    return k == "sglang" ? std::string("SGLang's own all-reduce")
           : k == "vllm" ? std::string("vLLM's own all-reduce")
                         : std::string("NCCL");
  };
  auto ctx_of = [&](const Box& b) {
    return CostContext{&b.m->hw,      &b.m->run,        measured_with(b.m->run),
                       by_box[b.key], b.m->run.tp_size, b.runtime.active ? &b.runtime : nullptr};
  };

  // 1. All-reduce extras: the model alone explains the rest of an all-reduce.
  for (const Box& b : boxes) {
    if (!b.m->run.measured_allreduce_us) continue;
    const PhasePlan* p = allreduce_phase(b.plan);
    if (!p) throw InputError("there is no all-reduce to anchor at tp 1", b.m->allreduce_source);
    AnchorEntry e;
    e.kind = AnchorKind::AllReduce, e.origin = b.m->origin, e.source = b.m->allreduce_source;
    e.measured = *b.m->run.measured_allreduce_us;
    e.box = b.key, e.phase = p->kind, e.graph = p->graph, e.batch_size = b.m->run.batch_size;
    e.bytes = p->comm_bytes_of(OpKind::AllReduce) / p->count_of(OpKind::AllReduce);
    CostContext ctx = ctx_of(b);
    ctx.anchors = Anchors{};
    ctx.backend = AllReduceChoice{};  // a measured all-reduce is NCCL's (its extra is NCCL's)
    e.model = allreduce_us(e.bytes, ctx, p->graph);
    e.derived = e.measured - e.model;
    rep.entries.push_back(e);
    resolve_same_place(
        rep.entries, rep.entries.size() - 1, fmt::format("NCCL all-reduce, {} phases, {}", mode_name(e.graph), e.box),
        [&](const AnchorEntry& o) { return o.box == e.box && o.graph == e.graph; }, e.measured,
        [](const AnchorEntry& o) { return o.measured; }, "us");
  }
  for (const auto& e : rep.entries)
    if (e.used) (e.graph ? by_box[e.box].nccl_extra_graph_us : by_box[e.box].nccl_extra_eager_us) = e.derived;

  // 2. Overhead per target forward, with the all-reduce extras of its box.
  const std::size_t first_baseline = rep.entries.size();
  for (const Box& b : boxes) {
    if (!b.m->run.measured_baseline_tok_s) continue;
    AnchorEntry e;
    e.taken_with = taken_with(b.m->run);
    e.kind = AnchorKind::Baseline, e.origin = b.m->origin, e.source = b.m->baseline_source;
    e.measured = *b.m->run.measured_baseline_tok_s;
    e.box = b.key, e.phase = PhaseKind::BaselineDecode, e.batch_size = b.m->run.batch_size;
    const PhasePlan* p = b.plan.find(PhaseKind::BaselineDecode);
    e.graph = p->graph;
    e.model = time_phase(*p, ctx_of(b)).us;
    const double step_us = b.plan.batch * 1e6 / e.measured;
    // A step under half the modelled one would need an overhead cancelling over half the GPU work:
    // most likely a wrong figure (a unit, the tok/s of more requests than the batch), or a GPU
    // profile far off for this model; refused with the three named (far_under_hint).
    if (!(step_us >= 0.5 * e.model))
      throw MeasurementConflict(
          fmt::format("measured baseline {:g} tok/s means a {:.4g} us step, under half the modelled "
                      "{:.0f} us ({}): out of range",
                      e.measured, step_us, e.model, far_under_hint(b.plan.batch)),
          b.m->baseline_source);
    e.derived = step_us - e.model;
    e.caution = far_over_caution(step_us, e.model, e.measured, b.plan.batch);
    rep.entries.push_back(e);
    resolve_same_place(
        rep.entries, rep.entries.size() - 1, fmt::format("plain decode at bs {} on {}", e.batch_size, e.box),
        [&](const AnchorEntry& o) { return o.box == e.box && o.batch_size == e.batch_size; }, e.measured,
        [](const AnchorEntry& o) { return o.measured; }, "tok/s");
  }
  prefer_run_batch(rep.entries, first_baseline, s.run.batch_size);
  for (std::size_t i = first_baseline; i < rep.entries.size(); ++i)
    if (rep.entries[i].used) by_box[rep.entries[i].box].forward_overhead_us = rep.entries[i].derived;

  // 3. The cycle a speculative run measured with its accept len reveals, with the box's terms.
  const std::size_t first_cycle = rep.entries.size();
  for (const Box& b : boxes) {
    const RunSpec& r = b.m->run;
    if (!r.measured_spec_tok_s || !r.accept_len) continue;
    AnchorEntry e;
    e.taken_with = taken_with(b.m->run);
    e.kind = AnchorKind::Cycle, e.origin = b.m->origin, e.source = b.m->spec_source;
    e.measured = *r.measured_spec_tok_s, e.accept_len = *r.accept_len;
    e.box = b.key, e.phase = PhaseKind::Verify, e.batch_size = r.batch_size;
    e.graph = verify_graphed(b.plan);
    e.steps = r.num_steps, e.topk = r.topk, e.draft_tokens = r.num_draft_tokens;
    const CycleResult modelled = evaluate_cycle(b.plan, ctx_of(b), e.accept_len);
    e.model = modelled.cycle_us;
    double draft_us = 0, extend_us = 0;
    for (const PhaseTiming& t : modelled.phases) {
      if (t.kind == PhaseKind::DraftDecode || t.kind == PhaseKind::DraftExtend) draft_us += t.count * t.us;
      if (t.kind == PhaseKind::DraftExtend) extend_us += t.count * t.us;
    }
    e.draft_share = e.model > 0 ? draft_us / e.model : 0.0;
    e.extend_share = e.model > 0 ? extend_us / e.model : 0.0;
    const double cycle_us = e.accept_len * b.plan.batch * 1e6 / e.measured;
    // As for the baseline: a cycle under half the modelled one is a wrong figure, not overhead.
    if (!(cycle_us >= 0.5 * e.model))
      throw MeasurementConflict(
          fmt::format(
              "{:g} tok/s at accept len {:g} means a {:.0f} us cycle, under half the modelled {:.0f} us{} ({}): "
              "out of range",
              e.measured, e.accept_len, cycle_us, e.model, with_allreduce(rep, b), far_under_hint(b.plan.batch)),
          with_allreduce_source(rep, b, e.source));
    e.derived = cycle_us - e.model;
    e.caution = far_over_caution(cycle_us, e.model, e.measured, b.plan.batch);
    e.accept_rate = accept_rate_at(e.accept_len, r.num_steps, r.topk, r.num_draft_tokens,
                                   s.run.accept_decay);  // measured too
    rep.entries.push_back(e);
    resolve_same_place(
        rep.entries, rep.entries.size() - 1, fmt::format("speculative cycle at these settings on {}", e.box),
        [&](const AnchorEntry& o) {
          return o.box == e.box && o.steps == e.steps && o.topk == e.topk && o.draft_tokens == e.draft_tokens &&
                 o.batch_size == e.batch_size;
        },
        e.derived, [](const AnchorEntry& o) { return o.derived; }, "us");
  }
  fit_cycle_extras(rep.entries, first_cycle, s.run.batch_size, by_box);
  // One measured setting on a box: the runtime's host work that overlaps a forward hides part of
  // an extra placed in it (a shorter forward exposes more host time), so the split found above is
  // scaled, its proportion kept, until the measured setting comes back.
  for (const Box& b : boxes) {
    if (!b.m->run.measured_spec_tok_s || !b.m->run.accept_len) continue;
    AnchorEntry* only = nullptr;
    int n = 0;
    for (std::size_t i = first_cycle; i < rep.entries.size(); ++i)
      if (rep.entries[i].used && rep.entries[i].box == b.key) ++n, only = &rep.entries[i];
    if (n != 1 || only->source != b.m->spec_source || only->origin != b.m->origin) continue;
    AnchorEntry& e = *only;
    Anchors& terms = by_box[b.key];
    for (int it = 0; it < 20; ++it) {
      const double got = evaluate_cycle(b.plan, ctx_of(b), e.accept_len).cycle_us - e.model;
      if (std::abs(got - e.derived) <= 1e-9 * std::max(1.0, std::abs(e.derived)) || got * e.derived <= 0) break;
      const double scale = e.derived / got;
      terms.spec_step_extra_us *= scale, terms.spec_extend_extra_us *= scale, terms.spec_verify_extra_us *= scale;
    }
    e.step_extra_us = terms.spec_step_extra_us, e.extend_extra_us = terms.spec_extend_extra_us;
    e.verify_extra_us = terms.spec_verify_extra_us;
  }

  // 4. Acceptance, with every term of its box.
  for (const Box& b : boxes) {
    if (!b.m->run.measured_spec_tok_s || b.m->run.accept_len) continue;
    const RunSpec& r = b.m->run;
    AnchorEntry e;
    e.taken_with = taken_with(b.m->run);
    e.kind = AnchorKind::Spec, e.origin = b.m->origin, e.source = b.m->spec_source;
    e.measured = *r.measured_spec_tok_s;
    e.box = b.key, e.phase = PhaseKind::Verify, e.batch_size = r.batch_size;
    e.graph = verify_graphed(b.plan);
    e.steps = r.num_steps, e.topk = r.topk, e.draft_tokens = r.num_draft_tokens;
    e.model = evaluate_cycle(b.plan, ctx_of(b), 1.0).cycle_us;
    e.derived = e.measured * e.model / 1e6 / b.plan.batch;
    const int max_len = r.num_steps + 1;  // the bonus token plus one per draft step (tree depth = steps)
    if (e.derived < 1.0 || e.derived > max_len + 1e-9)
      throw MeasurementConflict(
          fmt::format("{:g} tok/s with a modelled cycle of {:.0f} us{} implies accept len {:.2f}, outside "
                      "[1, {}] (steps + 1): check the measurements",
                      e.measured, e.model, with_allreduce(rep, b), e.derived, max_len),
          with_allreduce_source(rep, b, e.source));
    e.accept_rate = accept_rate_at(e.derived, r.num_steps, r.topk, r.num_draft_tokens, s.run.accept_decay);
    rep.entries.push_back(e);
    resolve_same_place(
        rep.entries, rep.entries.size() - 1, "per-token acceptance of this draft",
        [](const AnchorEntry&) { return true; }, e.accept_rate, [](const AnchorEntry& o) { return o.accept_rate; },
        "tok/s");
  }

  // Where each applies to this run.
  const RunSpec& run = s.run;
  const std::string run_box = box_key(s.hw, run, s.target);
  std::string others;  // backends evaluated that are not NCCL
  for (const auto& c : run.allreduce)
    if (!allreduce_model(c).takes_nccl_anchors()) others += (others.empty() ? "" : ", ") + c.label();
  for (auto& e : rep.entries) {
    if (!e.used) {
      e.not_applies.push_back(e.conflict);
      continue;
    }
    if (e.kind == AnchorKind::Spec) {
      if (given_accept > 0) {
        e.used = false;
        e.not_applies.push_back(
            fmt::format("acceptance given on the command line (accept len {:.2f}) is used instead", given_accept));
        continue;
      }
      e.applies.push_back(
          "the per-token acceptance, on any box and batch size (a property of the draft and the "
          "text, not of the GPUs)");
      if (run.speculative() &&
          (run.num_steps != e.steps || run.topk != e.topk || run.num_draft_tokens != e.draft_tokens))
        e.applies.push_back(
            fmt::format("projected through {} from steps {}, topk {}, {} draft tokens to steps {}, "
                        "topk {}, {} draft tokens",
                        e.topk == 1 && run.topk == 1 ? "the chain formula" : "SGLang's draft tree", e.steps, e.topk,
                        e.draft_tokens, run.num_steps, run.topk, run.num_draft_tokens));
      continue;
    }
    if (e.box != run_box) {
      e.not_applies.push_back(fmt::format("this run's box ({}): taken on {}", run_box, e.box));
      continue;
    }
    if (e.kind == AnchorKind::Cycle) {
      if (!run.speculative()) {
        e.applies.push_back("no phase of this run (plain decoding runs no draft or verify)");
        continue;
      }
      e.applies.push_back(
          fmt::format("every speculative cycle: {:+.1f} us per draft decode forward ({} a cycle here), "
                      "{:+.1f} us per draft extend, {:+.1f} us per verify",
                      e.step_extra_us, std::max(0, run.num_steps - 1), e.extend_extra_us, e.verify_extra_us));
      if (run.num_steps != e.steps || run.topk != e.topk || run.num_draft_tokens != e.draft_tokens ||
          run.batch_size != e.batch_size)
        e.applies.push_back(
            fmt::format("carried from steps {}, topk {}, {} draft tokens at bs {} as per-forward "
                        "terms, as the serving runtime's own work is",
                        e.steps, e.topk, e.draft_tokens, e.batch_size));
      if (!others.empty()) e.applies.push_back("every all-reduce backend (" + others + " too): not NCCL's time");
      e.not_applies.push_back("baseline_decode (plain decoding runs no draft or verify)");
      continue;
    }
    std::string same, other;
    for (const auto& p : run_plan.phases) {
      const bool target_forward = p.kind == PhaseKind::Verify || p.kind == PhaseKind::BaselineDecode;
      const bool hit = e.kind == AnchorKind::AllReduce ? p.graph == e.graph : target_forward;
      (hit ? same : other) += fmt::format("{}{}", (hit ? same : other).empty() ? "" : ", ", phase_name(p.kind));
    }
    if (e.kind == AnchorKind::AllReduce) {
      e.applies.push_back(same.empty() ? std::string("no phase of this run (none runs ") + mode_name(e.graph) + ")"
                                       : fmt::format("NCCL all-reduces in {} ({})", same, mode_name(e.graph)));
      if (!other.empty())
        e.not_applies.push_back(fmt::format("{} ({}: another execution mode)", other, mode_name(!e.graph)));
      if (!others.empty()) e.not_applies.push_back(others + " (not NCCL)");
      if (run.batch_size != e.batch_size)
        e.applies.push_back(fmt::format(
            "carried from bs {} to bs {} as a per-call term (host synchronisation and rank skew, not bytes)",
            e.batch_size, run.batch_size));
    } else {
      e.applies.push_back(fmt::format("every target forward ({})", same));
      e.not_applies.push_back(fmt::format("draft forwards ({}: not measured)", other.empty() ? "none" : other));
      if (run.batch_size != e.batch_size)
        e.applies.push_back(fmt::format(
            "carried from bs {} to bs {} as a per-forward constant (scheduler and Python per step; per-request work "
            "grows with the batch, so it is a floor there); the bs {} baseline is derived, not measured",
            e.batch_size, run.batch_size, run.batch_size));
    }
  }
  const auto it = by_box.find(run_box);
  return it == by_box.end() ? Anchors{} : it->second;
}

}  // namespace specsim
