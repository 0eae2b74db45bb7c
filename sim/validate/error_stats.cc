#include "validate/error_stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace specsim {

using nlohmann::json;

namespace {

double target_value(const Target& t) { return t.median ? t.stats.median_abs_pct : std::fabs(t.stats.worst_pct); }

}  // namespace

double error_pct(double predicted, double measured) { return 100.0 * (predicted - measured) / measured; }

ErrorStats error_stats(const std::vector<ErrorPoint>& points) {
  ErrorStats s;
  std::vector<double> abs;
  for (const auto& p : points) {
    const double e = error_pct(p.predicted, p.measured);
    abs.push_back(std::fabs(e));
    if (std::fabs(e) >= std::fabs(s.worst_pct)) s.worst_pct = e, s.worst_id = p.id;
  }
  s.n = static_cast<int>(abs.size());
  if (s.n) {
    std::sort(abs.begin(), abs.end());
    s.median_abs_pct = s.n % 2 ? abs[s.n / 2] : 0.5 * (abs[s.n / 2 - 1] + abs[s.n / 2]);
  }
  return s;
}

std::string value_cell(std::optional<double> v, const char* format) {
  return v ? fmt::format(fmt::runtime(format), *v) : std::string("-");
}

std::string error_cell(std::optional<double> p, std::optional<double> m) {
  return p && m ? fmt::format("{:+.0f}%", error_pct(*p, *m)) : std::string("-");
}

bool Target::met() const { return stats.n && target_value(*this) <= limit_pct; }

std::string stats_text(const std::string& what, const ErrorStats& s) {
  if (!s.n) return fmt::format("  {:<24} {:>3}  -\n", what, 0);
  return fmt::format("  {:<24} {:>3}  median {:>5.1f}%  worst {:+6.1f}% ({})\n", what, s.n, s.median_abs_pct,
                     s.worst_pct, s.worst_id);
}

json stats_json(const ErrorStats& s) {
  return {{"n", s.n},
          {"median_abs_error_pct", s.n ? json(s.median_abs_pct) : json(nullptr)},
          {"worst_error_pct", s.n ? json(s.worst_pct) : json(nullptr)},
          {"worst_case", s.n ? json(s.worst_id) : json(nullptr)}};
}

std::string targets_text(const std::vector<Target>& targets) {
  std::string out = "\ntargets:\n";
  for (const auto& t : targets) {
    const double v = target_value(t);
    out += t.stats.n ? fmt::format("  {:<34} <= {:>2.0f}%: {:5.1f}%  {}\n", t.what, t.limit_pct, v,
                                   t.met() ? fmt::format("met, {:.1f} points to spare", t.limit_pct - v)
                                           : fmt::format("missed by {:.1f} points", v - t.limit_pct))
                     : fmt::format("  {:<34} <= {:>2.0f}%: no case to score  missed\n", t.what, t.limit_pct);
    if (t.stats.n && t.floor_pct && *t.floor_pct > t.limit_pct)
      out += fmt::format(
          "  {:<34}    {:>5.1f}%  at best, from the measurements alone ({}): out of reach for any "
          "prediction that keeps the anchor\n",
          "", *t.floor_pct, t.floor_id);
  }
  return out;
}

json targets_json(const std::vector<Target>& targets) {
  json out = json::array();
  for (const auto& t : targets)
    out.push_back({{"what", t.what},
                   {"limit_pct", t.limit_pct},
                   {"statistic", t.median ? "median" : "worst"},
                   {"value_pct", t.stats.n ? json(target_value(t)) : json(nullptr)},
                   {"data_floor_pct", t.floor_pct ? json(*t.floor_pct) : json(nullptr)},
                   {"data_floor_case", t.floor_pct ? json(t.floor_id) : json(nullptr)},
                   {"met", t.met()}});
  return out;
}

}  // namespace specsim
