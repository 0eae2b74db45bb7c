// The least-squares solver of `specsim calibrate` (calibrate/bounded_lsq.h) on small problems
// solved by hand: the free solution, a bound that binds (held there, the rest solved again), a
// fallback, a rank-deficient pair, and held columns moved to the right-hand side.
#include <catch2/catch.hpp>

#include "calibrate/bounded_lsq.h"

using namespace specsim;

namespace {

// Three rows, two unknowns: x0 = 1, x1 = 2, x0 + x1 = 4 (b given per case).
Eigen::MatrixXd three_rows() {
  Eigen::MatrixXd A(3, 2);
  A << 1, 0, 0, 1, 1, 1;
  return A;
}
Eigen::VectorXd vec(std::initializer_list<double> v) {
  Eigen::VectorXd x(Eigen::Index(v.size()));
  Eigen::Index i = 0;
  for (double e : v) x(i++) = e;
  return x;
}
const double kInf = std::numeric_limits<double>::infinity();

}  // namespace

TEST_CASE("unbounded: the normal equations' solution") {
  // A^T A = [[2, 1], [1, 2]], A^T b = [5, 6]: x = [4/3, 7/3].
  std::vector<BoundedParam> ps = {bounded_param("x0", 0, -kInf, kInf), bounded_param("x1", 0, -kInf, kInf)};
  solve_bounded(three_rows(), vec({1, 2, 4}), ps);
  CHECK(ps[0].value == Approx(4.0 / 3));
  CHECK(ps[1].value == Approx(7.0 / 3));
  CHECK(ps[0].free);
  CHECK(ps[1].free);
  CHECK(held_notes(ps).empty());
  // Unit-norm columns or not, the same solution in the columns' own units.
  for (bool unit : {false, true}) {
    const Eigen::VectorXd x = least_squares_over(three_rows(), vec({1, 2, 4}), {0, 1}, vec({0, 0}), unit);
    CHECK(x(0) == Approx(4.0 / 3));
    CHECK(x(1) == Approx(7.0 / 3));
  }
}

TEST_CASE("an upper bound that binds: held at the bound, the other solved again") {
  // x1 = 7/3 > 2: held at 2; then x0 fits [1, 2] - [0, 2] = rows x0 = 1, x0 = 2 -> 3/2.
  std::vector<BoundedParam> ps = {bounded_param("x0", 0, -kInf, kInf), bounded_param("x1", 0, 0, 2)};
  solve_bounded(three_rows(), vec({1, 2, 4}), ps);
  CHECK(ps[1].value == 2);
  CHECK_FALSE(ps[1].free);
  CHECK(ps[0].value == Approx(1.5));
  CHECK(ps[0].free);
  const auto notes = held_notes(ps);
  REQUIRE(notes.size() == 1);
  CHECK(notes[0] == "x1 held at 2: the fit gave 2.333, outside [0, 2]");
}

TEST_CASE("a lower bound that binds") {
  // b = [3, -1, 2]: A^T b = [5, 1], x = [3, -1]; x1 >= 0 binds: x1 = 0, x0 = (3 + 2) / 2.
  std::vector<BoundedParam> ps = {bounded_param("x0", 0, 0, kInf), bounded_param("x1", 0, 0, kInf)};
  solve_bounded(three_rows(), vec({3, -1, 2}), ps);
  CHECK(ps[1].value == 0);
  CHECK_FALSE(ps[1].free);
  CHECK(ps[0].value == Approx(2.5));
}

TEST_CASE("a fallback: held there, not at the bound, with its own words and shown in its own unit") {
  // x1 held at 1: x0 fits rows x0 = 1 and x0 = 4 - 1 -> 2.
  std::vector<BoundedParam> ps = {bounded_param("x0", 0, -kInf, kInf), bounded_param("x1", 0, 0, 2)};
  ps[1].fallback = 1, ps[1].on_bound = "kept from the base";
  ps[1].shown = [](double v) { return 10 * v; };
  solve_bounded(three_rows(), vec({1, 2, 4}), ps);
  CHECK(ps[1].value == 1);
  CHECK(ps[0].value == Approx(2));
  REQUIRE(held_notes(ps).size() == 1);
  CHECK(held_notes(ps)[0] == "x1 held at 10: kept from the base");
}

TEST_CASE("columns the points cannot separate: one is held at its value, the other fitted around it") {
  Eigen::MatrixXd A(3, 2);
  A << 1, 1, 2, 2, 3, 3;  // the same column twice
  std::vector<BoundedParam> ps = {bounded_param("a", 0, -kInf, kInf), bounded_param("b", 0.5, -kInf, kInf)};
  CHECK_FALSE(free_columns_full_rank(A, ps));
  hold_until_full_rank(A, ps, {1, 0});
  CHECK(ps[0].free);
  CHECK_FALSE(ps[1].free);
  CHECK(ps[1].why == "not separable from the other terms by these points");
  CHECK(free_columns_full_rank(A, ps));
  // b = [1, 2, 3] - 0.5 x column = [0.5, 1, 1.5]: a = 0.5.
  solve_bounded(A, vec({1, 2, 3}), ps);
  CHECK(ps[0].value == Approx(0.5));
  CHECK(ps[1].value == 0.5);
}

TEST_CASE("held columns move to the right-hand side; nothing free: nothing solved") {
  // x1 held at 3: x0 fits rows x0 = 1, 0 = 2 - 3 (no x0), x0 = 4 - 3 -> 1.
  const Eigen::VectorXd x = least_squares_over(three_rows(), vec({1, 2, 4}), {0}, vec({0, 3}), false);
  REQUIRE(x.size() == 1);
  CHECK(x(0) == Approx(1));
  CHECK(least_squares_over(three_rows(), vec({1, 2, 4}), {}, vec({0, 3}), true).size() == 0);
  std::vector<BoundedParam> ps = {bounded_param("x0", 7, 0, 1)};
  hold(ps[0], "fixed by hand");
  solve_bounded(three_rows().leftCols(1), vec({1, 2, 4}), ps);
  CHECK(ps[0].value == 7);
}
