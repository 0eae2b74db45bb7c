#include "ingest/sglang_log.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "ingest/text_lines.h"

namespace specsim::ingest {

bool SglangLog::speculative() const {
  return std::any_of(decode.begin(), decode.end(), [](const DecodeLine& d) { return d.accept_len.has_value(); });
}

std::vector<double> SglangLog::accept_lens() const {
  std::vector<double> v;
  for (const auto& d : decode)
    if (d.accept_len) v.push_back(*d.accept_len);
  return v;
}

std::optional<double> SglangLog::baseline_tok_s() const {
  std::vector<double> v;
  for (const auto& d : decode)
    if (!d.accept_len && d.running_req == 1 && d.gen_tok_s > 0) v.push_back(d.gen_tok_s);
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::size_t SglangLog::baseline_lines() const {
  return static_cast<std::size_t>(std::count_if(decode.begin(), decode.end(), [](const DecodeLine& d) {
    return !d.accept_len && d.running_req == 1 && d.gen_tok_s > 0;
  }));
}

namespace {

constexpr double kMaxLoggedAcceptLen = 64;  // SGLang's num_steps stays far below this

// "key: value" fields after "Decode batch[,.] ", separated by ", ".
DecodeLine parse_decode(std::string_view rest, const std::string& file, std::size_t ln) {
  DecodeLine d;
  d.line = ln;
  bool have_running = false, have_tput = false;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(", ");
    std::string_view item = trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 2);
    if (item.empty()) continue;
    const std::size_t colon = item.rfind(": ");
    if (colon == std::string_view::npos)
      fail_at(file, ln, fmt::format("decode line field '{}' has no 'key: value'", item));
    const std::string_view key = trim(item.substr(0, colon)), val = trim(item.substr(colon + 2));
    double v = 0;
    auto number = [&](const char* what) {
      if (!parse_number(val, v) || v < 0) fail_at(file, ln, fmt::format("bad {} '{}' in the decode line", what, val));
      return v;
    };
    // Counts must be whole and fit their integer type (a fuzzed 1.8e58 once overflowed the cast).
    auto count = [&](const char* what, double max) {
      const double c = number(what);
      if (c != std::floor(c) || c > max)
        fail_at(file, ln, fmt::format("bad {} '{}': expected a whole count up to {:g}", what, val, max));
      return c;
    };
    if (key == "#running-req")
      d.running_req = static_cast<int>(count("#running-req", 1e9)), have_running = true;
    else if (key == "#token")
      d.tokens = static_cast<long long>(count("#token", 1e15));
    else if (key == "accept len") {
      d.accept_len = number("accept len");
      if (*d.accept_len > kMaxLoggedAcceptLen)
        fail_at(file, ln,
                fmt::format("accept len {:g} above {:g}: no draft is that deep", *d.accept_len, kMaxLoggedAcceptLen));
    } else if (key == "accept rate")
      d.accept_rate = number("accept rate");
    else if (key == "gen throughput (token/s)") {
      d.gen_tok_s = number("gen throughput"), have_tput = true;
      // No server decodes a billion tokens a second; such a figure would overflow what is derived.
      if (d.gen_tok_s > 1e9) fail_at(file, ln, fmt::format("gen throughput {:g} tok/s above 1e9", d.gen_tok_s));
    } else if (key == "cuda graph") {
      if (val != "True" && val != "False") fail_at(file, ln, fmt::format("bad cuda graph '{}' (True or False)", val));
      d.cuda_graph = val == "True";
    }
    // Other fields (token usage, #queue-req, #retracted-req, pre-allocated usage, ...) are not used.
  }
  if (!have_running || !have_tput)
    fail_at(file, ln, "decode line without #running-req and gen throughput (token/s) (truncated line?)");
  if (d.accept_len && *d.accept_len < 1)
    fail_at(file, ln, fmt::format("accept len {:g} below 1 (it counts the bonus token)", *d.accept_len));
  return d;
}

}  // namespace

SglangLog parse_sglang_log(const std::string& text, const std::string& file) {
  SglangLog log;
  const auto lines = split_lines(text);
  log.lines = lines.size();
  if (trim(text).empty()) fail_at(file, 1, "empty file: expected an SGLang server log");
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view l = lines[i];
    const std::size_t at = l.find("Decode batch");
    if (at != std::string_view::npos) {
      if (at + 13 > l.size() || (l[at + 12] != ',' && l[at + 12] != '.'))
        fail_at(file, i + 1, "'Decode batch' not followed by ',' or '.' and its fields (truncated line?)");
      log.decode.push_back(parse_decode(l.substr(at + 13), file, i + 1));
      if (!log.server_args.empty()) log.decode.back().server_args_index = log.server_args.size() - 1;
    } else if (is_server_args_line(l)) {
      log.server_args.push_back(parse_server_args(l, file, i + 1));
    } else if (l.find("Prefill batch") != std::string_view::npos) {
      ++log.prefill_lines;
    } else if (!trim(l).empty()) {
      ++log.unknown_lines;
    }
  }
  if (log.decode.empty())
    fail_at(file, lines.size(),
            fmt::format("no 'Decode batch' line in {} lines: not an SGLang server log?", lines.size()));
  return log;
}

}  // namespace specsim::ingest
