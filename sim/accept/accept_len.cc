#include "accept/accept_len.h"

#include <cmath>

#include "accept/fit.h"
#include "accept/tree_model.h"

namespace specsim {

double chain_accept_len(double a, int depth) {
  if (a >= 1.0) return depth + 1.0;
  return (1.0 - std::pow(a, depth + 1)) / (1.0 - a);
}

double chain_accept_rate(double accept_len, int depth) {
  if (accept_len <= 1.0) return 0.0;
  if (accept_len >= depth + 1.0) return 1.0;
  double lo = 0.0, hi = 1.0;  // chain_accept_len rises monotonically in a
  for (int i = 0; i < 100; ++i) {
    const double mid = 0.5 * (lo + hi);
    (chain_accept_len(mid, depth) < accept_len ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

}  // namespace specsim

namespace specsim {

double accept_len_at(double a, int steps, int topk, int draft_tokens) {
  if (topk <= 1) return chain_accept_len(a, steps);
  return accept::tree_accept_len(accept::shaped_acceptance(a, accept::kDefaultCoverageBeta, 1.0, steps, topk), steps,
                                 topk, draft_tokens);
}

double accept_rate_at(double accept_len, int steps, int topk, int draft_tokens) {
  if (topk <= 1) return chain_accept_rate(accept_len, steps);
  return accept::rate_for_accept_len(accept_len, steps, topk, draft_tokens);
}

}  // namespace specsim
