#pragma once
// A speculative RunSpec by its draft shape (NCCL all-reduce), and the plan of a zoo model under
// it, for the plan tests.
#include <stdexcept>
#include <string>
#include <vector>

#include "plan/cycle_plan.h"
#include "scenario/model_spec.h"
#include "scenario/run_spec.h"

namespace specsim::test {

inline RunSpec spec_run(int tp, int bs, int steps, int topk, int n) {
  RunSpec r;
  r.tp_size = tp, r.batch_size = bs, r.num_steps = steps, r.topk = topk, r.num_draft_tokens = n;
  r.allreduce = {parse_allreduce("nccl")};
  return r;
}

/// The cycle plan of zoo model `model` (and its zoo draft when `run` speculates) under `run`.
inline CyclePlan zoo_plan(const std::string& model, const RunSpec& run) {
  const std::string cfg = resolve_model_config(model, "--model-path");
  const ModelSpec target = model_from_config(cfg, "--model-path");
  const ModelSpec draft = model_from_config(zoo_draft_config(cfg), "draft");
  return build_plan(target, run.speculative() ? &draft : nullptr, run);
}

/// Phase `kind`'s first op named `name`; std::logic_error where there is none.
inline const Op& op_named(const CyclePlan& plan, PhaseKind kind, const std::string& name) {
  for (const auto& b : plan.find(kind)->blocks)
    for (const auto& o : b.ops)
      if (o.name == name) return o;
  throw std::logic_error("no op " + name);
}

/// The attention kernel of phase `kind`'s ops named `name`; std::logic_error where there is none
/// or they disagree.
inline AttentionKernel kernel_of(const CyclePlan& plan, PhaseKind kind, const std::string& name) {
  std::vector<AttentionKernel> seen;
  for (const auto& b : plan.find(kind)->blocks)
    for (const auto& o : b.ops)
      if (o.name == name) seen.push_back(o.attention_kernel);
  if (seen.empty()) throw std::logic_error("no op " + name);
  for (AttentionKernel k : seen)
    if (k != seen.front()) throw std::logic_error("the ops named " + name + " run different kernels");
  return seen.front();
}

}  // namespace specsim::test
