#include "scenario/flag_values.h"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>

#include "util/error.h"

namespace specsim {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) {
      out.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  return out;
}

[[noreturn]] void malformed(std::string_view item, const std::string& flag, std::string_view why) {
  throw InputError(fmt::format("malformed value '{}': {} (use N, A..B or A..B:STEP, comma separated)", item, why),
                   flag);
}

// A finite number spelled whole (no trailing junk); `decimals` gets the digits after the point.
double number(std::string_view s, std::string_view item, const std::string& flag, int* decimals) {
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v))
    malformed(item, flag, fmt::format("'{}' is not a number", s));
  if (decimals) {
    const size_t dot = s.find('.');
    const bool exp = s.find_first_of("eE") != std::string_view::npos;
    *decimals = exp ? 12 : (dot == std::string_view::npos ? 0 : int(s.size() - dot - 1));
  }
  return v;
}

struct Range {
  double a = 0, b = 0, step = 1;
  int decimals = 0;  // most decimals among A, B and STEP
  bool has_step = false, is_range = false;
};

Range parse_item(std::string_view item, const std::string& flag) {
  if (item.empty()) malformed(item, flag, "empty item");
  Range r;
  const size_t dots = item.find("..");
  int d = 0;
  if (dots == std::string_view::npos) {
    if (item.find(':') != std::string_view::npos) malformed(item, flag, "a STEP needs a range A..B");
    r.a = r.b = number(item, item, flag, &d);
    r.decimals = d;
    return r;
  }
  r.is_range = true;
  std::string_view rest = item.substr(dots + 2);
  r.a = number(item.substr(0, dots), item, flag, &d);
  r.decimals = d;
  const size_t colon = rest.find(':');
  r.b = number(rest.substr(0, colon), item, flag, &d);
  r.decimals = std::max(r.decimals, d);
  if (colon != std::string_view::npos) {
    r.has_step = true;
    r.step = number(rest.substr(colon + 1), item, flag, &d);
    r.decimals = std::max(r.decimals, d);
    if (!(r.step > 0)) malformed(item, flag, "STEP must be positive");
  }
  if (r.b < r.a) malformed(item, flag, "the range runs backwards (B < A)");
  return r;
}

// Expands one range; values are A + i*STEP (no accumulated error), rounded to the written decimals.
void expand(const Range& r, std::string_view item, const std::string& flag, std::vector<double>& out) {
  if (!r.is_range) {
    out.push_back(r.a);
    return;
  }
  const double n = std::floor((r.b - r.a) / r.step + 1e-9) + 1;
  if (n + double(out.size()) > double(kMaxAxisValues))
    malformed(item, flag, fmt::format("expands to more than {} values", kMaxAxisValues));
  const double scale = std::pow(10.0, r.decimals);
  for (long long i = 0; i < static_cast<long long>(n); ++i) {
    const double v = r.a + double(i) * r.step;
    out.push_back(r.decimals < 12 ? std::round(v * scale) / scale : v);
  }
}

}  // namespace

std::vector<double> parse_double_values(std::string_view text, const std::string& flag) {
  std::vector<double> out;
  for (const auto item : split(text, ',')) {
    const Range r = parse_item(item, flag);
    if (r.is_range && !r.has_step && (r.a != std::floor(r.a) || r.b != std::floor(r.b)))
      malformed(item, flag, "a range of fractional numbers needs a STEP (A..B:STEP)");
    expand(r, item, flag, out);
  }
  return out;
}

std::vector<long long> parse_int_values(std::string_view text, const std::string& flag, long long lo, long long hi) {
  std::vector<long long> out;
  for (const auto item : split(text, ',')) {
    const Range r = parse_item(item, flag);
    if (r.a != std::floor(r.a) || r.b != std::floor(r.b) || r.step != std::floor(r.step))
      malformed(item, flag, "this flag takes whole numbers");
    std::vector<double> vals;
    expand(r, item, flag, vals);
    for (const double v : vals) {
      if (v < double(lo) || v > double(hi))
        throw InputError(fmt::format("value {:g} in '{}' is outside {}..{}", v, item, lo, hi), flag);
      out.push_back(static_cast<long long>(v));
    }
    if (out.size() > kMaxAxisValues) malformed(item, flag, fmt::format("more than {} values", kMaxAxisValues));
  }
  return out;
}

namespace {

bool is_phase_name(std::string_view s) {
  for (int i = 0; i < kNumPhaseKinds; ++i)
    if (s == phase_name(static_cast<PhaseKind>(i))) return true;
  return false;
}

// The phases of `@PHASES` (the text after '@'), as parse_allreduce() reads and checks them.
std::array<bool, kNumPhaseKinds> parse_scope(std::string_view phases, const std::string& flag) {
  return parse_allreduce("nccl@" + std::string(phases), flag).phases;
}

}  // namespace

std::vector<AllReduceChoice> parse_allreduce_values(const std::vector<std::string>& values, const std::string& flag) {
  std::vector<AllReduceChoice> out;
  for (const auto& value : values) {
    bool in_fixed = false;          // a bare number continues the previous fixed: list
    bool fixed_closed = false;      // ... unless that list ended with @PHASES
    size_t fixed_from = 0;          // where the current fixed: list's values start in `out`
    size_t scoped_from = SIZE_MAX;  // values the last @PHASES applies to: a phase name after it adds to them
    for (auto item : split(value, ',')) {
      if (item.empty()) malformed(value, flag, "empty item");
      if (scoped_from != SIZE_MAX && is_phase_name(item)) {  // `@verify,draft_extend`: one more phase
        const std::array<bool, kNumPhaseKinds> more = parse_scope(item, flag);
        for (size_t i = scoped_from; i < out.size(); ++i)
          for (int p = 0; p < kNumPhaseKinds; ++p) out[i].phases[p] = out[i].phases[p] || more[p];
        continue;
      }
      scoped_from = SIZE_MAX;
      const bool fixed = item.rfind("fixed:", 0) == 0;
      const bool bare = !item.empty() && (std::isdigit(static_cast<unsigned char>(item[0])) || item[0] == '.');
      if (bare && fixed_closed && !fixed)
        throw InputError(fmt::format("'{}' follows a fixed: list that ended with @PHASES: start its values again with "
                                     "fixed: (e.g. fixed:5..250:5@verify,fixed:{})",
                                     item, item),
                         flag);
      if (!fixed && !(bare && in_fixed)) {
        in_fixed = false, fixed_closed = false;
        const size_t at = out.size();
        out.push_back(parse_allreduce(item, flag));
        if (out.back().scoped) scoped_from = at;
        continue;
      }
      if (fixed) fixed_from = out.size(), fixed_closed = false;
      in_fixed = true;
      std::string_view spec = fixed ? item.substr(6) : item;
      const size_t at_sign = spec.find('@');
      const std::string_view phases = at_sign == std::string_view::npos ? std::string_view() : spec.substr(at_sign + 1);
      if (at_sign != std::string_view::npos) spec = spec.substr(0, at_sign);
      std::vector<double> us;
      const Range r = parse_item(spec, flag);
      if (r.is_range && !r.has_step && (r.a != std::floor(r.a) || r.b != std::floor(r.b)))
        malformed(item, flag, "a range of fractional latencies needs a STEP (fixed:A..B:STEP)");
      expand(r, item, flag, us);
      for (const double v : us) {
        if (!(v > 0 && v <= 1e7))
          throw InputError(fmt::format("fixed:US needs a latency in microseconds in (0, 1e7], got {:g}", v), flag);
        AllReduceChoice c;
        c.kind = AllReduceChoice::Kind::Fixed;
        c.fixed_us = v;
        out.push_back(c);
      }
      if (at_sign != std::string_view::npos) {
        // `fixed:A..B:STEP@PHASES` ends the fixed: list: every value of it replaces NCCL in those
        // phases only (the baseline decode stays on NCCL unless named), as `run --allreduce fixed:US@PHASES`.
        const std::array<bool, kNumPhaseKinds> scope = parse_scope(phases, flag);
        for (size_t i = fixed_from; i < out.size(); ++i) out[i].phases = scope, out[i].scoped = true;
        scoped_from = fixed_from;
        in_fixed = false, fixed_closed = true;
      }
      if (out.size() > kMaxAxisValues) malformed(item, flag, fmt::format("more than {} values", kMaxAxisValues));
    }
  }
  return out;
}

double parse_measurement(std::string_view text, const std::string& flag) {
  const std::string_view t = trim(text);
  if (t.find(',') != std::string_view::npos || t.find("..") != std::string_view::npos)
    throw InputError(fmt::format("'{}' is a list or range, but a measured value is one measurement taken at one "
                                 "setting, not a setting to sweep: give one number (run once per measurement)",
                                 text),
                     flag);
  const std::string_view digits = !t.empty() && t.front() == '+' ? t.substr(1) : t;
  double v = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size())
    throw InputError(fmt::format("'{}' is not a number: give the one measured value", text), flag);
  return v;  // its range (positive, finite) is validate_run's
}

std::vector<std::string> parse_word_values(std::string_view text, const std::string& flag) {
  std::vector<std::string> out;
  for (const auto item : split(text, ',')) {
    if (item.empty()) malformed(text, flag, "empty item");
    out.emplace_back(item);
  }
  return out;
}

}  // namespace specsim
