#include "ingest/log_timestamp.h"

namespace specsim::ingest {

namespace {

constexpr double kSecondsPerDay = 24 * 60 * 60;

bool digits_at(std::string_view t, std::size_t at, std::size_t n, int& out) {
  if (at + n > t.size()) return false;
  int v = 0;
  for (std::size_t i = at; i < at + n; ++i) {
    if (t[i] < '0' || t[i] > '9') return false;
    v = v * 10 + (t[i] - '0');
  }
  out = v;
  return true;
}

// Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's days_from_civil).
long long days_from_civil(int y, int m, int d) {
  y -= m <= 2;
  const long long era = (y >= 0 ? y : y - 399) / 400;
  const long long yoe = y - era * 400;
  const long long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const long long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// HH:MM:SS[.,fraction] at `at`: seconds since midnight, or nullopt.
std::optional<double> time_at(std::string_view t, std::size_t at) {
  int h = 0, m = 0, s = 0;
  if (!digits_at(t, at, 2, h) || at + 8 > t.size() || t[at + 2] != ':' || !digits_at(t, at + 3, 2, m) ||
      t[at + 5] != ':' || !digits_at(t, at + 6, 2, s))
    return std::nullopt;
  if (h > 23 || m > 59 || s > 60) return std::nullopt;  // 60: a leap second
  double v = h * 3600.0 + m * 60.0 + s;
  std::size_t p = at + 8;
  if (p + 1 < t.size() && (t[p] == '.' || t[p] == ',') && t[p + 1] >= '0' && t[p + 1] <= '9') {
    double scale = 0.1;
    for (++p; p < t.size() && t[p] >= '0' && t[p] <= '9' && scale > 1e-9; ++p, scale /= 10) v += (t[p] - '0') * scale;
  }
  return v;
}

bool boundary_before(std::string_view t, std::size_t at) { return at == 0 || !(t[at - 1] >= '0' && t[at - 1] <= '9'); }

}  // namespace

std::optional<LogTimestamp> find_log_timestamp(std::string_view t) {
  for (std::size_t at = 0; at + 8 <= t.size(); ++at) {
    if (!boundary_before(t, at)) continue;
    int y = 0, mo = 0, d = 0;
    if (digits_at(t, at, 4, y) && at + 11 <= t.size() && t[at + 4] == '-' && digits_at(t, at + 5, 2, mo) &&
        t[at + 7] == '-' && digits_at(t, at + 8, 2, d) && (t[at + 10] == ' ' || t[at + 10] == 'T')) {
      if (mo < 1 || mo > 12 || d < 1 || d > 31) return std::nullopt;
      const auto tod = time_at(t, at + 11);
      if (!tod) return std::nullopt;
      return LogTimestamp{static_cast<double>(days_from_civil(y, mo, d)) * kSecondsPerDay + *tod, true};
    }
    if (const auto tod = time_at(t, at)) return LogTimestamp{*tod, false};
  }
  return std::nullopt;
}

std::optional<double> seconds_between(const LogTimestamp& earlier, const LogTimestamp& later) {
  if (earlier.date != later.date) return std::nullopt;
  double dt = later.s - earlier.s;
  if (dt < 0 && !later.date) dt += kSecondsPerDay;
  if (dt < 0) return std::nullopt;
  return dt;
}

}  // namespace specsim::ingest
