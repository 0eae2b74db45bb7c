#include "ingest/bench_speculative.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "ingest/text_lines.h"
#include "util/error.h"
#include "util/json_io.h"

namespace specsim::ingest {
namespace {

// A whole number within [lo, hi] in `o[key]`; fails at FILE:LINE naming the field.
int whole(const nlohmann::json& o, const char* key, int lo, int hi, const std::string& file, std::size_t line) {
  if (!o.contains(key) || !o[key].is_number())
    fail_at(file, line,
            fmt::format("\"{}\" missing or not a number: bench_speculative.py writes it on every line", key));
  const double v = o[key].get<double>();
  if (!std::isfinite(v) || v != std::floor(v) || v < lo || v > hi)
    fail_at(file, line, fmt::format("\"{}\" is {}: a whole number in {}..{}", key, json_excerpt(o[key]), lo, hi));
  return static_cast<int>(v);
}

double positive(const nlohmann::json& o, const char* key, const std::string& file, std::size_t line) {
  if (!o.contains(key) || !o[key].is_number())
    fail_at(file, line,
            fmt::format("\"{}\" missing or not a number: bench_speculative.py writes it on every line", key));
  const double v = o[key].get<double>();
  if (!std::isfinite(v) || v <= 0)
    fail_at(file, line, fmt::format("\"{}\" is {}: must be > 0", key, json_excerpt(o[key])));
  return v;
}

}  // namespace

std::vector<BenchSpecRow> read_bench_speculative(const std::string& path, const std::string& flag) {
  const std::string text = read_text(path, flag);
  std::vector<BenchSpecRow> rows;
  const auto lines = split_lines(text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view l = trim(lines[i]);
    if (l.empty()) continue;
    const std::size_t n = i + 1;
    nlohmann::json o;
    try {
      o = parse_json_text(std::string(l), fmt::format("{}:{}", path, n));
    } catch (const InputError&) {
      fail_at(path, n, "not a JSON object: bench_speculative.py's --output has one object per line");
    }
    if (!o.is_object()) fail_at(path, n, "not a JSON object: bench_speculative.py's --output has one object per line");
    BenchSpecRow r;
    r.line = static_cast<int>(n);
    r.batch_size = whole(o, "batch_size", 1, 1024, path, n);
    r.steps = whole(o, "steps", 0, 1024, path, n);
    r.topk = whole(o, "topk", 0, 1024, path, n);
    r.num_draft_tokens = whole(o, "num_draft_tokens", 0, 1024, path, n);
    r.step_time_s = positive(o, "step_time", path, n);
    r.speed = positive(o, "speed", path, n);
    r.acc_length = positive(o, "acc_length", path, n);
    if (r.speculative() && (r.topk == 0 || r.num_draft_tokens == 0))
      fail_at(path, n, "a speculative row (steps > 0) needs topk and num_draft_tokens > 0");
    if (!r.speculative() && (r.topk != 0 || r.num_draft_tokens != 0))
      fail_at(path, n, "steps 0 is plain decoding: topk and num_draft_tokens must be 0 too");
    if (r.acc_length < 1 || r.acc_length > r.steps + 1 + 1e-9)
      fail_at(path, n, fmt::format("\"acc_length\" {} outside 1..steps + 1 = {}", r.acc_length, r.steps + 1));
    // The script computes speed = acc_length / step_time (rounded to 3 and 5 decimals).
    if (std::fabs(r.speed * r.step_time_s / r.acc_length - 1) > 0.01)
      fail_at(path, n,
              fmt::format("\"speed\" {} is not acc_length / step_time = {:.3f}: not bench_speculative.py's output",
                          r.speed, r.acc_length / r.step_time_s));
    rows.push_back(r);
  }
  if (rows.empty())
    throw InputError("no rows: bench_speculative.py writes one JSON object per setting", flag + " " + path);
  return rows;
}

}  // namespace specsim::ingest
