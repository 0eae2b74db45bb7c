#pragma once
// How many independently routed tokens a request's draft tree counts as when the verify's MoE
// layers read the union of the experts its tokens pick (docs/model.md#moe-tree-routing).
namespace specsim {

/// The share of a token's routing that it has in common with the other candidates for the same
/// tree position (models/kernels/moe_tree_routing.json, `alternative_overlap`, in [0, 1]).
double tree_alternative_overlap();

/// Independently routed tokens that one request's `draft_tokens` verify tokens count as. A tree of
/// `steps` draft steps covers at most D = min(draft_tokens, steps + 1) positions (the root and one
/// per step); one token per position routes on its own, every further candidate for a position
/// shares `overlap` of its routing with it: D + (draft_tokens - D) x (1 - overlap). A chain
/// (draft_tokens <= steps + 1) and plain decode give draft_tokens back, unchanged.
double tree_routed_tokens(int draft_tokens, int steps, double overlap);

}  // namespace specsim
