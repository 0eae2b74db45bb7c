#include "accept/fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "scenario/draft_acceptance.h"
#include "scenario/sglang_draft_rule.h"
#include "util/error.h"

namespace specsim::accept {

namespace {

constexpr double kMaxRate = 0.9999;
constexpr double kBetaLo = 0.05, kBetaHi = 4.0;
constexpr double kDecayLo = kDepthDecayLo, kDecayHi = kDepthDecayHi;  // scenario/draft_acceptance.h

double model_len(double a, double beta, double decay, int steps, int topk, int n) {
  return tree_accept_len(shaped_acceptance(a, beta, decay, std::min(steps, kMaxDepth), topk), steps, topk, n);
}

// Nelder-Mead minimisation of f from x0 with an initial simplex of `step` along each axis.
template <class F>
std::vector<double> nelder_mead(F f, std::vector<double> x0, double step, int iters = 400) {
  const std::size_t n = x0.size();
  std::vector<std::vector<double>> p(n + 1, x0);
  for (std::size_t i = 0; i < n; ++i) p[i + 1][i] += step;
  std::vector<double> v(n + 1);
  for (std::size_t i = 0; i <= n; ++i) v[i] = f(p[i]);
  auto along = [&](const std::vector<double>& c, const std::vector<double>& w, double t) {
    std::vector<double> r(n);
    for (std::size_t k = 0; k < n; ++k) r[k] = c[k] + t * (w[k] - c[k]);
    return r;
  };
  for (int it = 0; it < iters; ++it) {
    std::vector<std::size_t> o(n + 1);
    for (std::size_t i = 0; i <= n; ++i) o[i] = i;
    std::sort(o.begin(), o.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
    const std::size_t best = o[0], worst = o[n], second = o[n - 1];
    if (v[worst] - v[best] < 1e-14) break;
    std::vector<double> c(n, 0.0);  // centroid of all but the worst
    for (std::size_t i = 0; i <= n; ++i)
      if (i != worst)
        for (std::size_t k = 0; k < n; ++k) c[k] += p[i][k] / double(n);
    const auto r = along(c, p[worst], -1.0);
    const double fr = f(r);
    if (fr < v[best]) {
      const auto e = along(c, p[worst], -2.0);
      const double fe = f(e);
      if (fe < fr)
        p[worst] = e, v[worst] = fe;
      else
        p[worst] = r, v[worst] = fr;
    } else if (fr < v[second]) {
      p[worst] = r, v[worst] = fr;
    } else {
      const auto k = along(c, p[worst], 0.5);
      const double fk = f(k);
      if (fk < v[worst]) {
        p[worst] = k, v[worst] = fk;
      } else {  // shrink towards the best
        for (std::size_t i = 0; i <= n; ++i)
          if (i != best) p[i] = along(p[best], p[i], 0.5), v[i] = f(p[i]);
      }
    }
  }
  std::size_t best = 0;
  for (std::size_t i = 1; i <= n; ++i)
    if (v[i] < v[best]) best = i;
  return p[best];
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

AcceptFit fit_acceptance(const std::vector<AcceptObservation>& obs, double held_decay) {
  if (obs.empty()) throw InputError("no accept len to fit the acceptance model to", "");
  if (!(held_decay >= kDecayLo && held_decay <= kDecayHi))
    throw InputError(fmt::format("per-depth decay {:g} outside [{:g}, {:g}]", held_decay, kDecayLo, kDecayHi),
                     "depth_decay");
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
  fit.decay = held_decay;
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
  fit.rate =
      rate_for_accept_len(first.measured, first.steps, first.topk, first.draft_tokens, kDefaultCoverageBeta, fit.decay);
  if (settings > 1) {
    // The free parameters as a vector, clamped into their ranges.
    auto unpack = [&](const std::vector<double>& x, double& a, double& b, double& g) {
      std::size_t i = 0;
      a = std::clamp(x[i++], 0.0, kMaxRate);
      b = fit.beta_fitted ? std::clamp(x[i++], kBetaLo, kBetaHi) : kDefaultCoverageBeta;
      g = fit.decay_fitted ? std::clamp(x[i++], kDecayLo, kDecayHi) : held_decay;
    };
    auto objective = [&](const std::vector<double>& x) {
      double a, b, g;
      unpack(x, a, b, g);
      return sse(a, b, g);
    };
    std::vector<double> x{fit.rate};
    if (fit.beta_fitted) x.push_back(fit.beta);
    if (fit.decay_fitted) x.push_back(fit.decay);
    // Nelder-Mead, restarted from its own result until it stops improving (the objective has kinks
    // where the tree's chosen nodes change, which a single run can stall on).
    for (int restart = 0; restart < 6; ++restart) x = nelder_mead(objective, x, 0.05);
    unpack(x, fit.rate, fit.beta, fit.decay);
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
    assumed += held_decay == 1.0
                   ? fmt::format("{}per-depth decay gamma 1 (same rate at every depth)", assumed.empty() ? "" : "; ")
                   : fmt::format("{}per-depth decay gamma {:g} (the draft's own depth_decay)",
                                 assumed.empty() ? "" : "; ", held_decay);
  fit.note = fmt::format("fitted {} to {} setting{}", fitted, settings, settings == 1 ? "" : "s");
  if (!assumed.empty()) fit.note += "; assumed " + assumed;
  return fit;
}

}  // namespace specsim::accept
