#include "plan/tree_routing.h"

#include <algorithm>
#include <string>

#include "scenario/model_constant.h"

namespace specsim {

double tree_alternative_overlap() {
  static const double overlap = model_constant("kernels/moe_tree_routing.json", "alternative_overlap", 0, 1,
                                               "0: a position's candidates route independently, 1: as one token");
  return overlap;
}

double tree_routed_tokens(int draft_tokens, int steps, double overlap) {
  if (draft_tokens <= 0) return 0;
  // Candidates for one position share their request's whole context (the prefix and their
  // ancestors) and differ in their own token; tokens at different positions are routed apart.
  const double positions = std::min(draft_tokens, std::max(steps, 0) + 1);
  return positions + (draft_tokens - positions) * (1.0 - std::clamp(overlap, 0.0, 1.0));
}

}  // namespace specsim
