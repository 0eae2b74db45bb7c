#include "accept/tree_model.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "scenario/sglang_draft_rule.h"

namespace specsim::accept {

double TreeAcceptance::coverage_at(int depth, int k) const {
  if (coverage.empty() || depth < 1 || k < 1) return 0.0;
  const auto& row = coverage[std::min<std::size_t>(depth, coverage.size()) - 1];
  return row[std::min<std::size_t>(k, row.size()) - 1];
}

TreeAcceptance shaped_acceptance(double rate, double beta, double decay, int depths, int max_k) {
  TreeAcceptance t;
  double a = rate;
  for (int d = 0; d < depths; ++d, a *= decay) {
    const double ad = std::clamp(a, 0.0, 1.0);
    std::vector<double> row(max_k);
    for (int k = 1; k <= max_k; ++k) row[k - 1] = 1.0 - (1.0 - ad) * std::pow(double(k), -beta);
    t.coverage.push_back(std::move(row));
  }
  return t;
}

namespace {

// Probability that the target's token is the draft's r-th choice at this depth.
double rank_share(const TreeAcceptance& acc, int depth, int r) {
  return std::max(0.0, acc.coverage_at(depth, r) - acc.coverage_at(depth, r - 1));
}

// Every candidate's score in the order SGLang lists them: depth 1's topk, then topk*topk per
// further depth, each depth's expanded from the topk best of the depth above.
std::vector<double> candidate_scores(const TreeAcceptance& acc, int steps, int topk) {
  std::vector<double> all, frontier, next;
  for (int r = 1; r <= topk; ++r) frontier.push_back(rank_share(acc, 1, r));
  all = frontier;
  for (int d = 2; d <= steps; ++d) {
    next.clear();
    for (const double parent : frontier)
      for (int r = 1; r <= topk; ++r) next.push_back(parent * rank_share(acc, d, r));
    all.insert(all.end(), next.begin(), next.end());
    // The topk best children are drafted further (ties: the earlier one, as a stable top-k would).
    std::vector<double> kept = next;
    std::stable_sort(kept.begin(), kept.end(), std::greater<>());
    kept.resize(topk);
    frontier = std::move(kept);
  }
  return all;
}

}  // namespace

std::vector<double> tree_accept_lens(const TreeAcceptance& acc, int steps, int topk, int max_draft_tokens) {
  std::vector<double> scores = candidate_scores(acc, steps, topk);
  // The tree: the root plus the draft_tokens - 1 best-scoring candidates. A child never scores above
  // its parent, and a stable sort puts the parent (listed earlier) first on a tie, so every prefix
  // of this order is a tree.
  std::stable_sort(scores.begin(), scores.end(), std::greater<>());
  const std::size_t n = std::min<std::size_t>(scores.size(), std::max(0, max_draft_tokens - 1));
  std::vector<double> out(n);
  double sum = 1.0;
  for (std::size_t i = 0; i < n; ++i) out[i] = sum += scores[i];
  return out;
}

double tree_accept_len(const TreeAcceptance& acc, int steps, int topk, int draft_tokens) {
  if (steps < 1 || topk < 1 || draft_tokens < 2) return 1.0;
  const std::vector<double> lens = tree_accept_lens(acc, steps, topk, draft_tokens);
  return lens.empty() ? 1.0 : lens.back();
}

}  // namespace specsim::accept
