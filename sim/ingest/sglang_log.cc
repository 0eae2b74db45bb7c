#include "ingest/sglang_log.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "ingest/sglang_idle_gap.h"
#include "ingest/sglang_rank_tag.h"
#include "ingest/text_lines.h"
#include "util/error.h"

namespace specsim::ingest {

bool SglangLog::speculative() const {
  return spec_lines > 0 ||
         std::any_of(decode.begin(), decode.end(), [](const DecodeLine& d) { return d.accept_len.has_value(); });
}

std::vector<double> SglangLog::accept_lens() const {
  std::vector<double> v;
  for (const auto& d : decode)
    if (d.accept_len) v.push_back(*d.accept_len);
  return v;
}

namespace {

// The non-speculative lines at one running request with a positive throughput, idle gaps split off.
ThroughputLines baseline_split(const std::vector<DecodeLine>& decode) {
  std::vector<const DecodeLine*> v;
  for (const auto& d : decode)
    if (!d.accept_len && d.running_req == 1 && d.gen_tok_s > 0 && d.unsteady.empty()) v.push_back(&d);
  return split_idle_gaps(v);
}

}  // namespace

std::optional<double> SglangLog::baseline_tok_s() const {
  if (spec_lines > 0) return std::nullopt;  // a vLLM line without its SpecDecoding line is no plain step
  const ThroughputLines t = baseline_split(decode);
  if (t.kept.empty()) return std::nullopt;
  std::vector<double> v;
  for (const DecodeLine* d : t.kept) v.push_back(d->gen_tok_s);
  return median_of(v);
}

std::size_t SglangLog::baseline_lines() const { return spec_lines > 0 ? 0 : baseline_split(decode).kept.size(); }

std::size_t SglangLog::baseline_idle_lines() const { return spec_lines > 0 ? 0 : baseline_split(decode).idle.size(); }

std::vector<BatchFigures> SglangLog::by_batch() const {
  std::map<int, std::vector<const DecodeLine*>> at;
  for (const auto& d : decode)
    if (d.gen_tok_s > 0) at[d.running_req].push_back(&d);
  std::vector<BatchFigures> out;
  for (const auto& [running_req, run] : at) {
    // lines whose interval did not decode at one batch size are left out as idle gaps are
    std::vector<const DecodeLine*> steady;
    for (const DecodeLine* d : run)
      if (d->unsteady.empty()) steady.push_back(d);
    const ThroughputLines t = split_idle_gaps(steady);
    std::vector<double> tps;
    for (const DecodeLine* d : t.kept) tps.push_back(d->gen_tok_s);
    // The accept len does not depend on time: idle-gap lines count in its mean.
    double accept_sum = 0;
    std::size_t accept_n = 0;
    for (const DecodeLine* d : run)
      if (d->accept_len) accept_sum += *d->accept_len, ++accept_n;
    BatchFigures b{running_req,   t.kept.size(),
                   t.idle.size(), tps.empty() ? 0.0 : median_of(tps),
                   std::nullopt,  run.size() - steady.size()};
    if (accept_n) b.accept_len = accept_sum / static_cast<double>(accept_n);
    out.push_back(b);
  }
  return out;
}

namespace {

constexpr double kMaxLoggedAcceptLen = 64;  // SGLang's num_steps stays far below this

// "key: value" fields after "Decode batch[ [N]][,.] ", separated by ", ".
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
    d.keys.emplace_back(key);
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
    else if (key == "#token" || key == "#gpu-token" || key == "#full token") {
      // `#token` where logged; newer SGLang logs `#gpu-token` (HiSparse) or `#full token` (hybrid
      // attention) instead: the same count of the running requests' KV tokens.
      const auto n = static_cast<long long>(count(std::string(key).c_str(), 1e15));
      if (d.tokens_key.empty() || key == "#token") d.tokens = n, d.tokens_key = std::string(key);
    } else if (key == "accept len") {
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

// A line whose fields are the first ones of its launch's previous decode line, fewer of them (the
// last perhaps cut inside its name): the same line format, cut off. A line of another format
// (a plain run's after a speculative one's) differs in its names, not only in their number.
bool cut_short(const DecodeLine& d, const SglangLog& log) {
  // the launch as a plain pair (has one, its index): GCC 13 misreads an optional compared in a loop
  // as maybe uninitialized
  const bool has_launch = !log.server_args.empty();
  const std::size_t launch = has_launch ? log.server_args.size() - 1 : 0;
  for (auto it = log.decode.rbegin(); it != log.decode.rend(); ++it) {
    const bool same_launch =
        it->server_args_index.has_value() == has_launch && (!has_launch || *it->server_args_index == launch);
    if (!same_launch) continue;
    const auto& prev = it->keys;
    if (d.keys.empty() || d.keys.size() >= prev.size()) return false;
    for (std::size_t k = 0; k + 1 < d.keys.size(); ++k)
      if (d.keys[k] != prev[k]) return false;
    return prev[d.keys.size() - 1].rfind(d.keys.back(), 0) == 0;
  }
  return false;
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
      // The file's last line without its newline may be cut off mid-field (a copied excerpt, a
      // log still being written): one that does not parse, or has fewer fields than the decode
      // line before it, is left out and said (SglangLog::cut_last_line).
      const bool unterminated = i + 1 == lines.size() && !text.empty() && text.back() != '\n';
      DecodeLine d;
      try {
        std::size_t sep = at + 12;
        // SGLANG_LOG_FORWARD_ITERS adds the forward count: "Decode batch [123], ..."
        if (sep + 2 < l.size() && l[sep] == ' ' && l[sep + 1] == '[') {
          const std::size_t close = l.find(']', sep + 2);
          if (close == std::string_view::npos || close == sep + 2 ||
              l.substr(sep + 2, close - sep - 2).find_first_not_of("0123456789") != std::string_view::npos)
            fail_at(file, i + 1, "'Decode batch [' not followed by a forward count and ']' (truncated line?)");
          sep = close + 1;
        }
        if (sep + 1 > l.size() || (l[sep] != ',' && l[sep] != '.'))
          fail_at(file, i + 1, "'Decode batch' not followed by ',' or '.' and its fields (truncated line?)");
        d = parse_decode(l.substr(sep + 1), file, i + 1);
      } catch (const InputError&) {
        if (!unterminated || log.decode.empty()) throw;
        log.cut_last_line = i + 1;
        continue;
      }
      if (unterminated && cut_short(d, log)) {
        log.cut_last_line = i + 1;
        continue;
      }
      if (!log.server_args.empty()) d.server_args_index = log.server_args.size() - 1;
      d.time = find_log_timestamp(l.substr(0, at));
      d.dp_rank = find_dp_rank(l.substr(0, at));
      // Launches only follow one another: the previous decode line of this launch (of the same DP
      // rank, where ranks interleave) is the last such one.
      const DecodeLine* prev = nullptr;
      for (auto it = log.decode.rbegin(); it != log.decode.rend() && it->server_args_index == d.server_args_index; ++it)
        if (it->dp_rank == d.dp_rank) {
          prev = &*it;
          break;
        }
      d.first_of_launch = !prev;
      if (prev && prev->time && d.time) d.since_previous_s = seconds_between(*prev->time, *d.time);
      log.decode.push_back(std::move(d));
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
