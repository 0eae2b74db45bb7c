#include "check/junit.h"

#include <fmt/format.h>

#include "report/report.h"

namespace specsim::check {

namespace {

// Text and attribute values: the five XML entities, control characters dropped (XML 1.0 has no
// way to write them).
std::string xml(const std::string& s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\n' || c == '\t') out += c;
    }
  }
  return out;
}

std::string row_line(const CheckRow& r) {
  if (!r.numeric) return fmt::format("{} {}: {}", r.scenario, r.figure, r.status);
  return fmt::format("{} {}: baseline {:.2f}, now {:.2f} ({:+.2f}%): {}", r.scenario, r.figure, r.baseline, r.now,
                     100 * r.delta, r.status);
}

}  // namespace

std::string check_junit(const std::vector<CheckRow>& rows, Gate gate, double tol, const CheckContext& c) {
  std::size_t failures = 0;
  for (const auto& r : rows) failures += r.regressed;
  const std::string suite = fmt::format("specsim check (gate {}, tolerance {:g}%)", gate_name(gate), 100 * tol);
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"specsim check\" tests=\"{}\" failures=\"{}\">\n", rows.size(), failures);
  out += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"0\">\n", xml(suite),
                     rows.size(), failures);
  out += "    <properties>\n";
  auto prop = [&](const std::string& k, const std::string& v) {
    out += fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", xml(k), xml(v));
  };
  prop("specsim_version", kSpecsimVersion);
  prop("baseline", c.baseline_file);
  prop("baseline_specsim_version", c.baseline_version);
  for (const auto& ch : c.changes) prop("change_under_test", ch);
  for (const auto& d : c.differences) prop("input_difference", d);
  out += "    </properties>\n";
  for (const auto& r : rows) {
    out += fmt::format("    <testcase classname=\"specsim.check.{}\" name=\"{}\"", xml(r.scenario), xml(r.figure));
    if (r.regressed)
      out += fmt::format(">\n      <failure message=\"{}\" type=\"regression\">{}</failure>\n    </testcase>\n",
                         xml(r.status), xml(row_line(r)));
    else
      out += fmt::format(">\n      <system-out>{}</system-out>\n    </testcase>\n", xml(row_line(r)));
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace specsim::check
