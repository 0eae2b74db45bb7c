#pragma once
// A speculative RunSpec by its draft shape (NCCL all-reduce), for the plan tests.
#include "scenario/run_spec.h"

namespace specsim::test {

inline RunSpec spec_run(int tp, int bs, int steps, int topk, int n) {
  RunSpec r;
  r.tp_size = tp, r.batch_size = bs, r.num_steps = steps, r.topk = topk, r.num_draft_tokens = n;
  r.allreduce = {parse_allreduce("nccl")};
  return r;
}

}  // namespace specsim::test
