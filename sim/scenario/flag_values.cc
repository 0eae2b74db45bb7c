#include "scenario/flag_values.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

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

std::vector<AllReduceChoice> parse_allreduce_values(const std::vector<std::string>& values, const std::string& flag) {
  std::vector<AllReduceChoice> out;
  for (const auto& value : values) {
    bool in_fixed = false;  // a bare number continues the previous fixed: list
    for (auto item : split(value, ',')) {
      if (item.empty()) malformed(value, flag, "empty item");
      const bool fixed = item.rfind("fixed:", 0) == 0;
      const bool bare = !item.empty() && (std::isdigit(static_cast<unsigned char>(item[0])) || item[0] == '.');
      if (!fixed && !(bare && in_fixed)) {
        in_fixed = false;
        out.push_back(parse_allreduce(item, flag));
        continue;
      }
      in_fixed = true;
      const std::string_view spec = fixed ? item.substr(6) : item;
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
      if (out.size() > kMaxAxisValues) malformed(item, flag, fmt::format("more than {} values", kMaxAxisValues));
    }
  }
  return out;
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
