#include "calibrate/bounded_lsq.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace specsim {

namespace {

std::vector<int> free_cols(const std::vector<BoundedParam>& ps) {
  std::vector<int> c;
  for (int i = 0; i < int(ps.size()); ++i)
    if (ps[std::size_t(i)].free) c.push_back(i);
  return c;
}

// The columns `cols` of A scaled to unit norm (a zero column stays as it is), and the scales.
Eigen::MatrixXd unit_scaled(const Eigen::MatrixXd& A, const std::vector<int>& cols, Eigen::VectorXd& scale) {
  Eigen::MatrixXd S(A.rows(), Eigen::Index(cols.size()));
  scale.resize(Eigen::Index(cols.size()));
  for (std::size_t k = 0; k < cols.size(); ++k) {
    const double n = A.col(cols[k]).norm();
    scale(Eigen::Index(k)) = n > 0 ? n : 1.0;
    S.col(Eigen::Index(k)) = A.col(cols[k]) / scale(Eigen::Index(k));
  }
  return S;
}

Eigen::VectorXd values_of(const std::vector<BoundedParam>& ps) {
  Eigen::VectorXd x(Eigen::Index(ps.size()));
  for (std::size_t i = 0; i < ps.size(); ++i) x(Eigen::Index(i)) = ps[i].value;
  return x;
}

}  // namespace

Eigen::VectorXd least_squares_over(const Eigen::MatrixXd& A, const Eigen::VectorXd& b, const std::vector<int>& cols,
                                   const Eigen::VectorXd& held, bool unit_columns) {
  Eigen::VectorXd rhs = b;
  for (int i = 0; i < int(A.cols()); ++i)
    if (std::find(cols.begin(), cols.end(), i) == cols.end()) rhs -= A.col(i) * held(i);
  if (cols.empty()) return Eigen::VectorXd(0);
  if (!unit_columns) {
    Eigen::MatrixXd S(A.rows(), Eigen::Index(cols.size()));
    for (std::size_t k = 0; k < cols.size(); ++k) S.col(Eigen::Index(k)) = A.col(cols[k]);
    return S.colPivHouseholderQr().solve(rhs);
  }
  Eigen::VectorXd s;
  const Eigen::VectorXd y = unit_scaled(A, cols, s).colPivHouseholderQr().solve(rhs);
  return y.cwiseQuotient(s);
}

BoundedParam bounded_param(const std::string& name, double value, double lo, double hi) {
  BoundedParam p;
  p.name = name, p.value = value, p.lo = lo, p.hi = hi;
  return p;
}

void hold(BoundedParam& p, const std::string& why) { p.free = false, p.why = why; }

bool free_columns_full_rank(const Eigen::MatrixXd& A, const std::vector<BoundedParam>& ps) {
  const auto cols = free_cols(ps);
  if (cols.empty()) return true;
  Eigen::VectorXd s;
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(unit_scaled(A, cols, s));
  qr.setThreshold(1e-9);
  return qr.rank() == Eigen::Index(cols.size());
}

void hold_until_full_rank(const Eigen::MatrixXd& A, std::vector<BoundedParam>& ps, const std::vector<int>& order) {
  for (int i : order) {
    if (free_columns_full_rank(A, ps)) return;
    if (ps[std::size_t(i)].free) hold(ps[std::size_t(i)], "not separable from the other terms by these points");
  }
}

void solve_bounded(const Eigen::MatrixXd& A, const Eigen::VectorXd& b, std::vector<BoundedParam>& ps) {
  for (std::size_t round = 0; round <= ps.size(); ++round) {
    const auto cols = free_cols(ps);
    if (cols.empty()) return;
    const Eigen::VectorXd x = least_squares_over(A, b, cols, values_of(ps), /*unit_columns=*/true);
    bool inside = true;
    for (std::size_t k = 0; k < cols.size(); ++k) {
      BoundedParam& p = ps[std::size_t(cols[k])];
      const double v = x(Eigen::Index(k));
      if (v >= p.lo && v <= p.hi && std::isfinite(v)) {
        p.value = v;
        continue;
      }
      inside = false;
      p.value = std::isnan(p.fallback) ? std::clamp(v, p.lo, p.hi) : p.fallback;
      hold(p, p.on_bound.empty() ? fmt::format("the fit gave {:.4g}, outside [{:.4g}, {:.4g}]", v, p.lo, p.hi)
                                 : p.on_bound);
    }
    if (inside) return;
  }
}

std::vector<std::string> held_notes(const std::vector<BoundedParam>& ps) {
  std::vector<std::string> notes;
  for (const auto& p : ps)
    if (!p.free && !p.why.empty())
      notes.push_back(fmt::format("{} held at {:.4g}: {}", p.name, p.shown ? p.shown(p.value) : p.value, p.why));
  return notes;
}

}  // namespace specsim
