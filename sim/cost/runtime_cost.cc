#include "cost/runtime_cost.h"

#include <fmt/format.h>

#include <algorithm>

namespace specsim {

double PhaseRuntime::exposed_us(double forward_us) const {
  if (overlapped) return gpu_eager_us + gpu_graphed_us + std::max(0.0, host_us - forward_us);
  return std::max(host_us, gpu_eager_us) + gpu_graphed_us;
}

namespace {

// Whether term t happens in this run. Greedy requests: sampling-only terms never apply.
bool applies(const RuntimeTerm& t, const RunSpec& run, int target_vocab, int draft_vocab) {
  switch (t.when) {
    case RuntimeTerm::When::Always: return true;
    case RuntimeTerm::When::Sampling: return false;
    case RuntimeTerm::When::Tree: return run.topk > 1;
    case RuntimeTerm::When::Eagle3: return run.algo == SpecAlgo::Eagle3;
    case RuntimeTerm::When::DraftVocabMap: return draft_vocab < target_vocab;
    // With one draft step SGLang builds no draft decode backend (draft_utils.py,
    // create_decode_backend), so FlashInfer's draft-side terms do not happen at all (where other
    // draft-step terms move onto verify).
    case RuntimeTerm::When::FlashInfer:
      return run.verify_custom_mask() && !(t.phase == PhaseKind::DraftDecode && run.num_steps <= 1);
  }
  return false;
}

}  // namespace

RuntimeCost runtime_cost(const RuntimeProfile& p, const RunSpec& run, const Hardware& hw, int target_vocab,
                         int draft_vocab) {
  RuntimeCost rc;
  rc.active = true;
  const double bs = run.batch_size;
  const int steps = run.num_steps;
  const int draft_forwards = steps > 1 ? steps - 1 : 0;
  // Host terms were counted at host_op_us per eager op; this box's host launches one at
  // host_launch_us. Kernel terms were counted at graphed_kernel_us per small kernel.
  const double host_ratio = p.host_scale * hw.gpu.host_launch_us / p.host_op_us;
  const double kernel_ratio = (hw.gpu.kernel_min_us + hw.gpu.kernel_switch_us) / p.graphed_kernel_us;
  const double bw_ratio = hw.gpu.mem_bw_gbps > 0 ? p.reference_mem_bw_gbps / hw.gpu.mem_bw_gbps : 1.0;
  std::array<double, kNumPhaseKinds> host{}, eager{}, graphed{}, fitted{};

  for (const auto& t : p.terms) {
    if (t.counted_by_forward || !applies(t, run, target_vocab, draft_vocab)) continue;
    const bool plain = t.section == RuntimeTerm::Section::PlainStep;
    if (!plain && !run.speculative()) continue;
    PhaseKind phase = t.cycle_phase ? PhaseKind::Verify : t.phase;
    if (phase == PhaseKind::DraftDecode && draft_forwards == 0) phase = PhaseKind::Verify;
    const bool draftish = t.phase == PhaseKind::DraftDecode || t.phase == PhaseKind::DraftExtend;

    double n = 1;  // occurrences per cycle (per plain step)
    if (t.section == RuntimeTerm::Section::DraftStep) n = t.times == RuntimeTerm::Times::Steps ? steps : draft_forwards;
    switch (t.per) {
      case RuntimeTerm::Per::Once: break;
      case RuntimeTerm::Per::Token:
        n *= plain                               ? bs
             : t.phase == PhaseKind::DraftDecode ? bs * run.topk
             : t.phase == PhaseKind::DraftExtend ? bs * (steps + 1)
                                                 : bs * run.num_draft_tokens;
        break;
      case RuntimeTerm::Per::AcceptedToken: n *= bs * (steps + 1); break;
      case RuntimeTerm::Per::Request: n *= bs; break;
    }
    double us = t.value_us * n;
    if (t.host) {
      us *= host_ratio;
    } else if (t.kernels > 0) {
      us *= kernel_ratio;
    } else {
      us *= bw_ratio;
      if (t.vocab_basis > 0) us *= (draftish ? draft_vocab : target_vocab) / t.vocab_basis;
    }
    const int i = static_cast<int>(phase);
    (t.host ? host : t.graphed ? graphed : eager)[i] += us;
    if (t.host && t.fitted) {
      fitted[i] += us;
      if (!plain) {
        rc.fitted_terms.push_back(fmt::format("{} {:g} us", t.name, t.value_us));
        if (std::find(rc.fitted_sources.begin(), rc.fitted_sources.end(), t.source) == rc.fitted_sources.end())
          rc.fitted_sources.push_back(t.source);
      }
    }
  }
  for (int i = 0; i < kNumPhaseKinds; ++i) {
    const double per = i == static_cast<int>(PhaseKind::DraftDecode) && draft_forwards > 0 ? draft_forwards : 1;
    auto& ph = rc.phase[i];
    ph.host_us = host[i] / per, ph.gpu_eager_us = eager[i] / per, ph.gpu_graphed_us = graphed[i] / per;
    ph.fitted_host_us = fitted[i] / per;
    ph.overlapped = i == static_cast<int>(PhaseKind::BaselineDecode)
                        ? p.overlap_plain_decode && !run.disable_overlap_schedule
                        : p.host_overlaps_forward[i] && !(p.overlap_lost_on_flashinfer[i] && run.verify_custom_mask());
  }
  return rc;
}

RuntimeCost runtime_for(const Scenario& s, const RunSpec& run, const Hardware& hw) {
  if (!s.runtime) return {};
  const int draft_vocab = s.draft ? (s.draft->draft_vocab > 0 ? s.draft->draft_vocab : s.draft->vocab) : 0;
  return runtime_cost(*s.runtime, run, hw, s.target.vocab, draft_vocab);
}

}  // namespace specsim
