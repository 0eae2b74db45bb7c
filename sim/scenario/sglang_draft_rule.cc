#include "scenario/sglang_draft_rule.h"

namespace specsim::accept {

long long tree_pool_size(int steps, int topk) {
  if (steps < 1 || topk < 1) return 0;
  return static_cast<long long>(topk) + static_cast<long long>(steps - 1) * topk * topk;
}

int max_draft_tokens(int steps, int topk) { return topk == 1 ? steps + 1 : topk * steps + 1; }

std::string draft_shape_problem(int steps, int topk, int draft_tokens) {
  if (steps < 1) return "num-steps must be at least 1";
  if (topk < 1) return "eagle-topk must be at least 1";
  if (topk == 1) {
    if (draft_tokens != steps + 1)
      return "with --speculative-eagle-topk 1 SGLang forces num-draft-tokens = num-steps + 1 (" +
             std::to_string(steps + 1) + ")";
    return "";
  }
  if (draft_tokens < 2) return "num-draft-tokens must be at least 2 (the root and one draft token)";
  // The server's own limit: the drafting's torch.topk picks draft tokens - 1 of the pool.
  if (draft_tokens - 1 > tree_pool_size(steps, topk))
    return "SGLang's drafting scores topk + (num-steps - 1) * topk^2 candidates, so num-draft-tokens is at most "
           "that + 1 (" +
           std::to_string(tree_pool_size(steps, topk) + 1) + ")";
  return "";
}

}  // namespace specsim::accept
