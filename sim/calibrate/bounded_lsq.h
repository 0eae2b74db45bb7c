#pragma once
// Linear least squares (Eigen) with parameters held: at a bound the solution left, at a value the
// data cannot constrain. Every fit of `specsim calibrate` solves through least_squares_over.
#include <Eigen/Dense>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace specsim {

/// Least squares of A x = b over the columns `cols` (in that order); every other column i is held
/// at held(i), moved to the right-hand side. `unit_columns`: solved with those columns scaled to
/// unit norm, for terms that differ by orders of magnitude (1 per graph, 1e6 bytes); the result is
/// in the columns' own units either way.
Eigen::VectorXd least_squares_over(const Eigen::MatrixXd& A, const Eigen::VectorXd& b, const std::vector<int>& cols,
                                   const Eigen::VectorXd& held, bool unit_columns);

/// A parameter of a bounded fit: its value, bounds, whether the points constrain it.
struct BoundedParam {
  std::string name;
  double value = 0;  ///< the starting value; the fitted or held one after solve_bounded
  double lo = 0, hi = 0;
  bool free = true;
  /// Where it is held when the solution leaves [lo, hi] (NaN: at the bound), and what to say then
  /// ("": the value the fit gave).
  double fallback = std::numeric_limits<double>::quiet_NaN();
  std::string on_bound;
  std::string why;                      ///< why it is held ("": free)
  std::function<double(double)> shown;  ///< the value as a note shows it (empty: as is), e.g. us/byte as GB/s
};

/// A free parameter starting at `value` within [lo, hi].
BoundedParam bounded_param(const std::string& name, double value, double lo, double hi);

/// Holds `p` at its current value, saying why.
void hold(BoundedParam& p, const std::string& why);

/// Whether the free parameters' columns of A are linearly independent (columns at unit norm).
bool free_columns_full_rank(const Eigen::MatrixXd& A, const std::vector<BoundedParam>& ps);

/// Holds parameters in `order` while the free columns are rank deficient.
void hold_until_full_rank(const Eigen::MatrixXd& A, std::vector<BoundedParam>& ps, const std::vector<int>& order);

/// Least squares of A x = b over the free parameters (unit-norm columns); a value outside its
/// bounds is held there (or at its fallback) and the rest solved again.
void solve_bounded(const Eigen::MatrixXd& A, const Eigen::VectorXd& b, std::vector<BoundedParam>& ps);

/// "NAME held at VALUE: WHY" for every parameter held with a reason.
std::vector<std::string> held_notes(const std::vector<BoundedParam>& ps);

}  // namespace specsim
