#pragma once
// Errors of predictions against measurements: one figure's median and worst over a group of
// cases, and the accuracy targets the validate commands print as met or missed.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace specsim {

/// Error of a prediction against a measurement, percent (positive: predicted too fast).
double error_pct(double predicted, double measured);

/// One prediction beside its measurement.
struct ErrorPoint {
  double predicted = 0, measured = 0;
  std::string id;  ///< the case
};

/// Absolute errors of one figure over a group of cases.
struct ErrorStats {
  int n = 0;
  double median_abs_pct = 0, worst_pct = 0;  ///< worst keeps its sign
  std::string worst_id;
};

/// The median and worst |error| of `points` (n = 0 when empty).
ErrorStats error_stats(const std::vector<ErrorPoint>& points);

/// An accuracy goal printed with met / missed.
struct Target {
  Target(std::string what_, double limit, ErrorStats s, bool median_)
      : what(std::move(what_)), limit_pct(limit), stats(std::move(s)), median(median_) {}
  std::string what;
  double limit_pct = 0;
  ErrorStats stats;
  bool median = true;  ///< median (else worst) against the limit
  /// The best value the cases' own measurements allow (a worst target: the largest error no
  /// prediction consistent with its anchor can avoid), and the case that sets it.
  std::optional<double> floor_pct;
  std::string floor_id;
  bool met() const;
};

/// "  WHAT  N  median M%  worst W% (ID)" (one line).
std::string stats_text(const std::string& what, const ErrorStats& s);
nlohmann::json stats_json(const ErrorStats& s);

/// A figure for a table ("-" when none); `format` is fmt's, e.g. "{:.2f}".
std::string value_cell(std::optional<double> v, const char* format = "{:.1f}");
/// Its error as "+12%" ("-" unless both are there).
std::string error_cell(std::optional<double> predicted, std::optional<double> measured);

/// "targets:" and a line per target: the value against the limit, met or missed by how much.
std::string targets_text(const std::vector<Target>& targets);
nlohmann::json targets_json(const std::vector<Target>& targets);

}  // namespace specsim
