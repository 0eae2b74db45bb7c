#include "accept/accept_len.h"

#include <algorithm>
#include <cmath>

#include "accept/fit.h"
#include "accept/tree_model.h"

namespace specsim {

namespace {

// A chain whose depth-d token is accepted (its parent accepted) with a x decay^(d-1), at most 1.
double decayed_chain_len(double a, double decay, int depth) {
  double len = 1.0, reach = 1.0;
  for (int d = 1; d <= depth; ++d) {
    reach *= std::min(1.0, a * std::pow(decay, d - 1));
    len += reach;
  }
  return len;
}

// The rate in [0, 1] whose chain length len(rate) equals `accept_len` (len rises monotonically
// in the rate), by bisection.
template <class Len>
double rate_with_len(const Len& len, double accept_len) {
  if (accept_len <= 1.0) return 0.0;
  if (len(1.0) <= accept_len) return 1.0;
  double lo = 0.0, hi = 1.0;
  for (int i = 0; i < 100; ++i) {
    const double mid = 0.5 * (lo + hi);
    (len(mid) < accept_len ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

}  // namespace

double chain_accept_len(double a, int depth) {
  if (a >= 1.0) return depth + 1.0;
  return (1.0 - std::pow(a, depth + 1)) / (1.0 - a);
}

double chain_accept_rate(double accept_len, int depth) {
  return rate_with_len([depth](double a) { return chain_accept_len(a, depth); }, accept_len);
}

double accept_len_at(double a, int steps, int topk, int draft_tokens, double decay) {
  if (topk <= 1) return decay == 1.0 ? chain_accept_len(a, steps) : decayed_chain_len(a, decay, steps);
  return accept::tree_accept_len(accept::shaped_acceptance(a, accept::kDefaultCoverageBeta, decay, steps, topk), steps,
                                 topk, draft_tokens);
}

double accept_rate_at(double accept_len, int steps, int topk, int draft_tokens, double decay) {
  if (topk > 1)
    return accept::rate_for_accept_len(accept_len, steps, topk, draft_tokens, accept::kDefaultCoverageBeta, decay);
  if (decay == 1.0) return chain_accept_rate(accept_len, steps);
  return rate_with_len([decay, steps](double a) { return decayed_chain_len(a, decay, steps); }, accept_len);
}

}  // namespace specsim
