#include "accept/acceptance_file.h"

#include <fmt/format.h>

#include <cmath>

#include "util/bounded_read.h"
#include "util/error.h"
#include "util/json_io.h"

namespace specsim::accept {

namespace {

constexpr double kCoverageSlack = 1e-9;  // rounding allowed in "non-decreasing" and "first = rate"

double unit_number(const nlohmann::json& v, const std::string& where) {
  if (!v.is_number()) throw InputError("must be a number in [0, 1], not " + json_excerpt(v), where);
  const double x = v.get<double>();
  if (!std::isfinite(x) || x < 0 || x > 1) throw InputError(fmt::format("{:g} is outside [0, 1]", x), where);
  return x;
}

/// Refuses `a` unless it is an array of 1..max entries. (Checked at the call site rather than
/// returned: GCC 13's -Wdangling-reference takes a reference returned from a call with a
/// temporary argument for a reference into that temporary.)
void check_array(const nlohmann::json& a, std::size_t max, const std::string& where) {
  if (!a.is_array() || a.empty() || a.size() > max)
    throw InputError(fmt::format("must be an array of 1..{} entries", max), where);
}

}  // namespace

AcceptanceFile acceptance_from_json(const nlohmann::json& j, const std::string& file) {
  if (!j.is_object()) throw InputError("must be a JSON object with depth_rates", file);
  if (j.contains("depth_decay") && !j.contains("depth_rates"))
    throw InputError(
        "a draft's depth-decay file (models/MODEL/DRAFT/acceptance.json): it holds no acceptance level, "
        "and the draft's path already applies it (--speculative-draft-model-path); give the level with "
        "--accept-len, --accept-from or --scenario instead of --acceptance",
        file);
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key() != "depth_rates" && it.key() != "topk_coverage" && it.key() != "source")
      throw InputError("unknown key '" + it.key() + "': use depth_rates, topk_coverage, source", file + ":" + it.key());
  if (!j.contains("depth_rates")) throw InputError("missing depth_rates (per-depth acceptance rates)", file);
  AcceptanceFile out;
  if (j.contains("source")) out.source = json_string(j, "source", file);
  const auto& rates = j.at("depth_rates");
  check_array(rates, kMaxDepth, file + ":depth_rates");
  std::vector<double> a;
  for (std::size_t d = 0; d < rates.size(); ++d)
    a.push_back(unit_number(rates[d], fmt::format("{}:depth_rates[{}]", file, d)));

  if (!j.contains("topk_coverage")) {
    for (double ad : a)
      out.model.coverage.push_back(shaped_acceptance(ad, kDefaultCoverageBeta, 1.0, 1, 64).coverage[0]);
    out.note = fmt::format("top-k coverage not given: default shape 1 - c(k) = (1 - rate) k^-{:g} at every depth",
                           kDefaultCoverageBeta);
    return out;
  }
  const auto& cov = j.at("topk_coverage");
  check_array(cov, kMaxDepth, file + ":topk_coverage");
  if (cov.size() != a.size())
    throw InputError(fmt::format("has {} rows, depth_rates {}: give one row per depth", cov.size(), a.size()),
                     file + ":topk_coverage");
  for (std::size_t d = 0; d < cov.size(); ++d) {
    const std::string row_where = fmt::format("{}:topk_coverage[{}]", file, d);
    if (!cov[d].is_array() || cov[d].empty() || cov[d].size() > 64)
      throw InputError("must be an array of 1..64 coverages (k = 1, 2, ...)", row_where);
    std::vector<double> row;
    for (std::size_t k = 0; k < cov[d].size(); ++k) {
      const std::string where = fmt::format("{}[{}]", row_where, k);
      const double c = unit_number(cov[d][k], where);
      if (!row.empty() && c < row.back() - kCoverageSlack)
        throw InputError(fmt::format("coverage {:g} at k {} is below {:g} at k {}: coverage cannot fall as k grows", c,
                                     k + 1, row.back(), k),
                         where);
      row.push_back(c);
    }
    if (std::abs(row[0] - a[d]) > 1e-6)
      throw InputError(fmt::format("starts at {:g} but depth_rates[{}] is {:g}: coverage at k 1 is the depth's rate",
                                   row[0], d, a[d]),
                       row_where + "[0]");
    out.model.coverage.push_back(std::move(row));
  }
  out.note = "per-depth rates and top-k coverage as given (beyond the last k: no further coverage)";
  return out;
}

AcceptanceFile read_acceptance_file(const std::string& path) {
  return acceptance_from_json(parse_json_text(read_bounded(path, "--acceptance"), path), path);
}

}  // namespace specsim::accept
