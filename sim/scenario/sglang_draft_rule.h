#pragma once
// Which (steps, topk, draft tokens) SGLang runs, stated once for validate_run(), the acceptance
// model and `specsim tune` (docs/acceptance.md#settings-sglang-accepts).
#include <string>

namespace specsim::accept {

/// Draft candidates SGLang's EAGLE drafting scores per cycle: topk at depth 1, then topk*topk at
/// each further depth (the children of the topk nodes kept at the depth above).
long long tree_pool_size(int steps, int topk);

/// The most draft tokens (root included) SGLang's search script bench_speculative.py tries for
/// this steps and topk (`specsim tune` searches the same space): steps + 1 for a chain (topk 1),
/// topk * steps + 1 for a tree. The server itself runs up to tree_pool_size() + 1.
int max_draft_tokens(int steps, int topk);

/// Why SGLang does not run this combination ("" when it does): with topk 1 the draft tokens are
/// forced to steps + 1; with topk > 1 they must be in 2 .. tree_pool_size() + 1.
std::string draft_shape_problem(int steps, int topk, int draft_tokens);

/// draft_shape_problem() is empty.
inline bool sglang_accepts(int steps, int topk, int draft_tokens) {
  return draft_shape_problem(steps, topk, draft_tokens).empty();
}

}  // namespace specsim::accept
