#pragma once
// Expected accept length of an EAGLE draft tree as SGLang builds it (docs/acceptance.md).
// The acceptance of a draft is described per depth d = 1.. (the d-th drafted token) by its top-k
// coverage c_d(k): the probability that the target's token is among the draft's k most likely
// tokens there, given every token above it was accepted. c_d(1) is the per-depth acceptance rate
// of a chain. The tree keeps the candidates of highest draft score; the model takes the draft as
// calibrated, so a node's score is the probability that the target walks through it, and the
// expected accept length is 1 (the bonus token) + the sum of the scores of the tree's nodes.
#include <vector>

namespace specsim::accept {

/// Deepest tree and widest top-k the model tabulates (SGLang's flags go further; deeper depths
/// reuse the last depth and wider k the last coverage).
constexpr int kMaxDepth = 64;

/// Top-k coverage per depth.
struct TreeAcceptance {
  /// coverage[d][k-1]: c_{d+1}(k). Every row non-empty, non-decreasing in k, within [0, 1].
  std::vector<std::vector<double>> coverage;

  /// c_depth(k) for depth >= 1, k >= 1: the last row past the table, the row's last value past it.
  double coverage_at(int depth, int k) const;
  /// c_depth(1): the chance the draft's first choice at this depth is the target's token.
  double rate(int depth) const { return coverage_at(depth, 1); }
};

/// Default coverage shape: 1 - c_d(k) = (1 - a_d) * k^-beta, with a_d = rate * decay^(d-1)
/// (capped below 1). `depths` rows of `max_k` values.
TreeAcceptance shaped_acceptance(double rate, double beta, double decay = 1.0, int depths = 8, int max_k = 8);

/// The default coverage exponent beta (docs/acceptance.md#default-coverage-shape).
constexpr double kDefaultCoverageBeta = 0.5;

/// Expected accept len (accepted draft tokens + the bonus token) of SGLang's tree for these
/// settings. Needs 1 <= draft_tokens - 1 <= the candidate pool (tree_pool_size()).
double tree_accept_len(const TreeAcceptance& acc, int steps, int topk, int draft_tokens);

/// tree_accept_len() for every draft-token count at once: element i is draft tokens i + 2, up to
/// the whole candidate pool + 1 (capped at `max_draft_tokens`).
std::vector<double> tree_accept_lens(const TreeAcceptance& acc, int steps, int topk, int max_draft_tokens);

}  // namespace specsim::accept
