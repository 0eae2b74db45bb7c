#pragma once
// A speculative RunSpec by its draft shape (NCCL all-reduce), and the plan of a zoo model under
// it, for the plan tests.
#include <string>

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

}  // namespace specsim::test
