#include "accept/fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "accept/sglang_draft_rule.h"
#include "util/error.h"

namespace specsim::accept {

namespace {

constexpr double kMaxRate = 0.9999;
constexpr double kBetaLo = 0.05, kBetaHi = 4.0;
constexpr double kDecayLo = 0.5, kDecayHi = 1.1;

double model_len(double a, double beta, double decay, int steps, int topk, int n) {
  return tree_accept_len(shaped_acceptance(a, beta, decay, std::min(steps, kMaxDepth), topk), steps, topk, n);
}

// Golden-section search for the minimum of f on [lo, hi].
template <class F>
double golden_min(F f, double lo, double hi, int iters = 60) {
  const double g = 0.5 * (std::sqrt(5.0) - 1.0);
  double x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo), f1 = f(x1), f2 = f(x2);
  for (int i = 0; i < iters; ++i) {
    if (f1 < f2)
      hi = x2, x2 = x1, f2 = f1, x1 = hi - g * (hi - lo), f1 = f(x1);
    else
      lo = x1, x1 = x2, f1 = f2, x2 = lo + g * (hi - lo), f2 = f(x2);
  }
  return 0.5 * (lo + hi);
}

}  // namespace

double rate_for_accept_len(double accept_len, int steps, int topk, int draft_tokens, double beta, double decay) {
  double lo = 0.0, hi = kMaxRate;
  if (model_len(hi, beta, decay, steps, topk, draft_tokens) <= accept_len) return hi;
  for (int i = 0; i < 80; ++i) {
    const double mid = 0.5 * (lo + hi);
    (model_len(mid, beta, decay, steps, topk, draft_tokens) < accept_len ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

AcceptFit fit_acceptance(const std::vector<AcceptObservation>& obs) {
  if (obs.empty()) throw InputError("no accept len to fit the acceptance model to", "");
  // Average per setting, checking each observation.
  std::map<std::tuple<int, int, int>, std::pair<double, int>> by_setting;
  for (const auto& o : obs) {
    if (const std::string why = draft_shape_problem(o.steps, o.topk, o.draft_tokens); !why.empty())
      throw InputError(fmt::format("steps {}, topk {}, draft tokens {}: {}", o.steps, o.topk, o.draft_tokens, why),
                       o.source);
    if (!std::isfinite(o.accept_len) || o.accept_len < 1.0 || o.accept_len > o.steps + 1 + 1e-9)
      throw InputError(
          fmt::format("accept len {:g} outside [1, {}] (1 bonus token .. steps + 1)", o.accept_len, o.steps + 1),
          o.source);
    auto& s = by_setting[{o.steps, o.topk, o.draft_tokens}];
    s.first += o.accept_len, ++s.second;
  }
  AcceptFit fit;
  std::set<int> depths;
  bool any_tree = false;
  for (const auto& [k, v] : by_setting) {
    const auto [steps, topk, n] = k;
    fit.points.push_back({steps, topk, n, v.first / v.second, 0, v.second});
    depths.insert(steps);
    any_tree = any_tree || topk > 1;
  }
  const std::size_t settings = fit.points.size();
  fit.beta_fitted = settings >= 2 && any_tree;
  fit.decay_fitted = depths.size() >= 2 && settings >= 2 + (fit.beta_fitted ? 1 : 0);

  auto sse = [&](double a, double beta, double decay) {
    double s = 0;
    for (const auto& p : fit.points) {
      const double e = model_len(a, beta, decay, p.steps, p.topk, p.draft_tokens) - p.measured;
      s += e * e;
    }
    return s;
  };
  const auto& first = fit.points.front();
  fit.rate = rate_for_accept_len(first.measured, first.steps, first.topk, first.draft_tokens);
  if (settings > 1) {
    // Coordinate descent: each free parameter in turn, the others held.
    for (int round = 0; round < 25; ++round) {
      fit.rate = golden_min([&](double a) { return sse(a, fit.beta, fit.decay); }, 0.0, kMaxRate);
      if (fit.beta_fitted)
        fit.beta = golden_min([&](double b) { return sse(fit.rate, b, fit.decay); }, kBetaLo, kBetaHi);
      if (fit.decay_fitted)
        fit.decay = golden_min([&](double g) { return sse(fit.rate, fit.beta, g); }, kDecayLo, kDecayHi);
    }
  }
  fit.model = shaped_acceptance(fit.rate, fit.beta, fit.decay, kMaxDepth, 64);
  double sum = 0;
  for (auto& p : fit.points) {
    p.fitted = tree_accept_len(fit.model, p.steps, p.topk, p.draft_tokens);
    sum += (p.fitted - p.measured) * (p.fitted - p.measured);
  }
  fit.rms_error = std::sqrt(sum / double(settings));
  std::string fitted = "first-choice rate a";
  if (fit.beta_fitted) fitted += ", coverage exponent beta";
  if (fit.decay_fitted) fitted += ", per-depth decay gamma";
  std::string assumed;
  if (!fit.beta_fitted)
    assumed += fmt::format("coverage exponent beta {:g} (default: 1 - coverage(k) = (1 - a) k^-beta)", fit.beta);
  if (!fit.decay_fitted)
    assumed += fmt::format("{}per-depth decay gamma 1 (same rate at every depth)", assumed.empty() ? "" : "; ");
  fit.note = fmt::format("fitted {} to {} setting{}", fitted, settings, settings == 1 ? "" : "s");
  if (!assumed.empty()) fit.note += "; assumed " + assumed;
  return fit;
}

}  // namespace specsim::accept
