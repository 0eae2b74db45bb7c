#pragma once
// Anchoring the model to measurements. Each measurement is kept on its own, with where it was
// taken (phase, execution mode, batch size, backend, box), and reveals one term beyond the model:
//  - an NCCL all-reduce time (in verify; in the decode step without speculation): measured -
//    model = extra per NCCL all-reduce in that execution mode on that box (rank skew, host
//    synchronisation of eager NCCL);
//  - a plain-decode tok/s: measured step - modelled step = unexplained time per target forward
//    on that box (scheduler, sampling, Python);
//  - a speculative tok/s: with the modelled cycle, an accept len and, through the chain formula,
//    a per-token acceptance that projects to other draft settings, boxes and batch sizes;
//  - a speculative tok/s with its accept len: the measured cycle - the modelled one = the cycle
//    time the model does not explain, split over the cycle's forwards by a stated rule: from one
//    setting, in proportion to the modelled time of the draft forwards and of the verify (the
//    model's error taken as a share of what it prices, not as a flat time per forward); per
//    draft step and per verify by least squares from two or more step counts on one box. It
//    carries to other settings, batch sizes and backends on that box, as the runtime's own terms
//    do.
// Terms compose: all-reduce extras first, then overheads (with the extras of their box), then
// acceptance (with both). Two measurements of the same term at the same place contradict: the
// command line's is used and the pair is reported, never silently dropped.
#include <string>
#include <vector>

#include "engine/op_cost.h"
#include "plan/cycle_plan.h"
#include "scenario/scenario.h"

namespace specsim {

enum class AnchorKind { AllReduce, Baseline, Spec, Cycle };

/// One measurement, where it was taken, what it reveals and where it applies to this run.
struct AnchorEntry {
  AnchorKind kind = AnchorKind::AllReduce;
  std::string origin;   ///< "built-in" or "command line"
  std::string source;   ///< the flag, file or reference it comes from
  double measured = 0;  ///< us (all-reduce) or tok/s (baseline, speculation)
  // Where it was taken.
  std::string box;                  ///< "8x rtx-pro-6000 on pcie-numa, tp 8, fp8"
  std::string taken_with = "NCCL";  ///< the all-reduce its run ran (the stack's own: "sglang", "vllm")
  PhaseKind phase = PhaseKind::Verify;
  bool graph = false;
  int batch_size = 1;
  int steps = 0, topk = 0, draft_tokens = 0;
  double bytes = 0;  ///< all-reduce payload
  // What it reveals.
  double model = 0;    ///< the model at the same place: all-reduce us, step us or cycle us
  double derived = 0;  ///< extra us per NCCL all-reduce, overhead us per target forward, or accept len
  double accept_rate = 0;
  double accept_len = 0;       ///< cycle: the accept len the measurement was taken with
  double draft_share = 0;      ///< cycle: the modelled draft forwards' share of the modelled cycle
  double extend_share = 0;     ///< cycle: of draft_share, the draft extend forward's
  double step_extra_us = 0;    ///< cycle: the fitted extra per draft decode forward on its box
  double extend_extra_us = 0;  ///< cycle: the fitted extra per draft extend forward on its box
  double verify_extra_us = 0;  ///< cycle: the fitted extra per verify on its box
  bool used = true;
  /// The accept len the measurement gives: stated with a cycle entry, implied by a spec entry.
  double measured_accept_len() const;
  std::string conflict;  ///< non-empty: how it meets another measurement of the same term
  std::string caution;   ///< non-empty: the measurement is far above the model, and what that may mean
  std::vector<std::string> applies, not_applies;  ///< to this run, in words
};

struct AnchorReport {
  std::vector<AnchorEntry> entries;
  bool any() const { return !entries.empty(); }
  /// The spec or cycle entry whose acceptance is used (nullptr when none).
  const AnchorEntry* acceptance() const;
};

std::string_view anchor_kind_name(AnchorKind k);

/// The box a run was measured or is evaluated on, in words (also the anchors' scope key).
std::string box_key(const Hardware& hw, const RunSpec& run, const ModelSpec& target);

/// Derives every measurement of `s.measured` and the anchors that apply to `s.run` on
/// `run_plan`. `given_accept` (accept len from the command line, else <= 0) outranks measured
/// acceptance. InputError when a measurement is impossible under the model.
Anchors derive_anchors(const Scenario& s, const CyclePlan& run_plan, double given_accept, AnchorReport& report);

}  // namespace specsim
