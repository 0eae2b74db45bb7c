#include "ingest/sglang_idle_gap.h"

#include <fmt/format.h>

#include <algorithm>

namespace specsim::ingest {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

ThroughputLines split_idle_gaps(const std::vector<const DecodeLine*>& lines) {
  ThroughputLines out;
  if (lines.empty()) return out;
  std::vector<double> tps, intervals;
  for (const DecodeLine* d : lines) {
    tps.push_back(d->gen_tok_s);
    if (d->since_previous_s) intervals.push_back(*d->since_previous_s);
  }
  const double steady = median_of(tps);
  const double usual = std::max(intervals.empty() ? 0.0 : median_of(intervals), kLogTimestampResolutionS);
  for (const DecodeLine* d : lines) {
    const bool slow = d->gen_tok_s < kIdleGapShare * steady;
    const bool long_interval = !d->since_previous_s || *d->since_previous_s > kIdleGapIntervals * usual;
    if (!slow || !long_interval) {
      out.kept.push_back(d);
      continue;
    }
    std::string why =
        d->since_previous_s
            ? fmt::format("{:.0f} s after the previous decode line (usually {:.0f} s)", *d->since_previous_s, usual)
        : d->first_of_launch ? "the first decode line of its launch in the log: its interval began before the log shows"
                             : "no timestamp to bound its interval";
    out.idle.push_back({d->line, d->gen_tok_s,
                        fmt::format("{:.2f} tok/s against {:.2f}, the median of all {} lines with it; {}", d->gen_tok_s,
                                    steady, lines.size(), why)});
  }
  return out;
}

}  // namespace specsim::ingest
