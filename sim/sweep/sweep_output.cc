#include "sweep/sweep_output.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>
#include <tuple>

#include "report/report.h"
#include "sweep/sweep_bands.h"

namespace specsim::sweep {

std::vector<std::string> csv_columns() {
  std::vector<std::string> c = {"tp_size", "dtype", "batch_size", "context_len", "cuda_graph_max_bs",
                                "speculative_num_steps", "speculative_eagle_topk", "speculative_num_draft_tokens",
                                // the rest of the parallel layout (first three columns kept: tp, dtype, batch)
                                "dp_size", "ep_size", "enable_dp_attention", "moe_a2a_backend", "allreduce",
                                "allreduce_fixed_us", "accept_len", "baseline_step_us", "baseline_tok_s", "cycle_us",
                                "spec_tok_s", "speedup", "breakeven_accept_len", "allreduce_share"};
  for (int p = 0; p < kNumPhaseKinds; ++p) c.push_back(std::string(phase_name(static_cast<PhaseKind>(p))) + "_us");
  for (int k = 0; k < kNumParts; ++k) c.push_back(std::string("cycle_") + part_name(k) + "_us");
  // The likely range of each tok/s from the held-out errors of the run's class (report/error_band.h).
  for (const char* b : {"baseline_tok_s_lo", "baseline_tok_s_hi", "spec_tok_s_lo", "spec_tok_s_hi"}) c.push_back(b);
  return c;
}

namespace {

enum class Style { Csv, Json };

// A number, shortest round-trip; non-finite as an empty cell or null.
void num(std::string& s, double v, Style st) {
  if (!std::isfinite(v))
    s += st == Style::Csv ? "" : "null";
  else
    fmt::format_to(std::back_inserter(s), "{}", v);
}

// The all-reduce label as a cell: a JSON string, or a CSV field quoted when it holds a comma
// (`fixed:40@verify,draft_extend`).
std::string label_cell(const std::string& label, Style st) {
  if (st == Style::Json) return nlohmann::json(label).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (label.find_first_of(",\"") == std::string::npos) return label;
  std::string q = "\"";
  for (const char c : label) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

void row(std::string& s, const PointResult& p, const std::vector<AllReduceChoice>& backends, const BandFactors& bands,
         Style st) {
  const char sep = ',';
  const char* q = st == Style::Json ? "\"" : "";
  const AllReduceChoice& b = backends[p.backend];
  auto out = std::back_inserter(s);
  if (st == Style::Json) s += '[';
  fmt::format_to(out, "{},{}{}{},{},{},{},{},{},{},{},{},{},{}{}{},{},", p.tp, q, dtype_name(p.dtype), q, p.batch,
                 p.context, p.graph_bs, p.steps, p.topk, p.draft_tokens, p.dp, p.ep, p.dp_attention ? 1 : 0, q,
                 a2a_backend_name(p.a2a), q, label_cell(b.label(), st));
  if (b.kind == AllReduceChoice::Kind::Fixed)
    num(s, b.fixed_us, st);
  else if (st == Style::Json)
    s += "null";
  for (const double v : {p.accept_len, p.baseline_step_us, p.baseline_tok_s, p.cycle_us, p.spec_tok_s, p.speedup,
                         p.breakeven_accept_len, p.allreduce_share}) {
    s += sep;
    num(s, v, st);
  }
  for (const double v : p.phase_us) {
    s += sep;
    if (v >= 0)
      num(s, v, st);
    else if (st == Style::Json)
      s += "null";
  }
  for (const double v : p.cycle_parts_us) {
    s += sep;
    num(s, v, st);
  }
  auto band = [&](const std::optional<ErrorBand>& e, double v, bool measured) {
    for (const double f : {e ? e->lo : 0.0, e ? e->hi : 0.0}) {
      s += sep;
      if (measured)
        num(s, v, st);  // measured at these settings: the band is the value, as `run` gives it
      else if (e)
        num(s, v * f, st);
      else if (st == Style::Json)
        s += "null";
    }
  };
  const BandRef at = bands.at(p.batch, p.topk);
  band(at.baseline, p.baseline_tok_s, p.baseline_measured);
  band(at.spec, p.spec_tok_s, p.spec_measured);
  s += st == Style::Json ? "]" : "\n";
}

// Rows of the evaluated points, formatted in `threads` contiguous slices joined in order.
std::string rows(const SweepResult& r, int threads, Style st) {
  const BandFactors bands = band_factors(r.base);
  const size_t n = r.points.size();
  const int t = std::max(1, std::min<int>(threads, int(n / 4096) + 1));
  std::vector<std::string> parts(t);
  auto slice = [&](int k) {
    std::string& s = parts[k];
    const size_t lo = n * k / t, hi = n * (k + 1) / t;
    s.reserve((hi - lo) * 300);
    for (size_t i = lo; i < hi; ++i) {
      if (!r.points[i].ok) continue;
      if (st == Style::Json && !s.empty()) s += ",\n";
      row(s, r.points[i], r.backends, bands, st);
    }
  };
  std::vector<std::thread> pool;
  for (int k = 1; k < t; ++k) pool.emplace_back(slice, k);
  slice(0);
  for (auto& th : pool) th.join();
  size_t total = 0;
  for (const auto& p : parts) total += p.size() + 2;
  std::string all;
  all.reserve(total);
  for (const auto& p : parts) {
    if (p.empty()) continue;
    if (st == Style::Json && !all.empty()) all += ",\n";
    all += p;
  }
  return all;
}

}  // namespace

std::string sweep_csv(const SweepResult& r, int threads) {
  std::string header;
  for (const auto& c : csv_columns()) header += (header.empty() ? "" : ",") + c;
  return header + "\n" + rows(r, threads, Style::Csv);
}

std::string sweep_json(const SweepResult& r, const Grid& grid, int threads) {
  using nlohmann::json;
  json axes = json::object();
  auto add = [&](int axis, const auto& values) {
    if (!values.empty()) axes[axis_flag(axis)] = values;
  };
  add(kTp, grid.tp), add(kDp, grid.dp), add(kEp, grid.ep), add(kDpAttn, grid.dp_attention);
  add(kDtype, grid.dtype), add(kBatch, grid.batch), add(kContext, grid.context);
  add(kGraphBs, grid.graph_bs), add(kTopk, grid.topk), add(kSteps, grid.steps), add(kDraftTokens, grid.draft_tokens);
  json ar = json::array();
  for (const auto& b : r.backends) ar.push_back(b.label());
  axes[axis_flag(kAllReduce)] = ar;
  add(kAcceptLen, grid.accept_len), add(kAcceptRate, grid.accept_rate);
  json skipped = json::array();
  for (const auto& s : r.skipped)
    skipped.push_back({{"reason", s.reason}, {"count", s.count}, {"first_point", s.first_point}});
  const json head = {{"specsim_version", kSpecsimVersion},
                     {"title", r.base.title},
                     {"model", r.base.target.name},
                     {"hardware", r.base.hw.spec},
                     {"axes", axes},
                     {"points", r.points.size()},
                     {"evaluated", r.evaluated},
                     {"skipped", skipped},
                     {"columns", csv_columns()},
                     {"tok_per_s_band", band_factors_json(band_factors(r.base))}};
  std::string text = head.dump(1, ' ', false, nlohmann::json::error_handler_t::replace);
  text.pop_back();  // the closing brace: the rows follow inside the same object
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text + ",\n \"rows\": [\n" + rows(r, threads, Style::Json) + "\n ]\n}\n";
}

namespace {

// The layout of a point in words: "tp 8, dp attention 8, ep 8, deepep".
std::string layout_words(const PointResult& p) {
  std::string w = fmt::format("tp {}", p.tp);
  if (p.dp_attention) w += fmt::format(", dp attention {}", p.dp);
  if (p.ep > 1) w += fmt::format(", ep {}", p.ep);
  if (p.a2a != A2aBackend::None) w += ", " + a2a_backend_name(p.a2a);
  return w;
}

// Which layout makes speculation pay: per layout evaluated (when more than one was), its best
// speculative tok/s and its best speedup over plain decoding, with the points they were found at.
std::string best_by_layout(const SweepResult& r) {
  struct Best {
    size_t tok = 0, speed = 0;
  };
  std::map<std::tuple<int, int, int, bool, int>, Best> best;
  std::vector<std::tuple<int, int, int, bool, int>> order;
  for (size_t i = 0; i < r.points.size(); ++i) {
    const PointResult& p = r.points[i];
    if (!p.ok) continue;
    const auto key = std::make_tuple(p.tp, p.dp, p.ep, p.dp_attention, static_cast<int>(p.a2a));
    auto [it, fresh] = best.try_emplace(key, Best{i, i});
    if (fresh) order.push_back(key);
    if (p.spec_tok_s > r.points[it->second.tok].spec_tok_s) it->second.tok = i;
    if (p.speedup > r.points[it->second.speed].speedup) it->second.speed = i;
  }
  if (best.size() < 2) return "";
  std::sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
    return r.points[best[a].tok].spec_tok_s > r.points[best[b].tok].spec_tok_s;
  });
  std::string out = "  by layout (best speculative tok/s first):\n";
  for (const auto& k : order) {
    const PointResult& t = r.points[best[k].tok];
    const PointResult& s = r.points[best[k].speed];
    out += fmt::format("    {}: best {:.1f} tok/s (point {}, {:.2f}x); best speedup {:.2f}x (point {}){}\n",
                       layout_words(t), t.spec_tok_s, best[k].tok, t.speedup, s.speedup, best[k].speed,
                       s.speedup > 1 ? "" : ": speculation does not pay");
  }
  return out;
}

}  // namespace

std::string sweep_summary(const SweepResult& r, double seconds, int threads) {
  size_t skipped = 0;
  for (const auto& s : r.skipped) skipped += s.count;
  std::string out = fmt::format("sweep: {} points, {} evaluated, {} skipped, {:.2f} s on {} thread{}\n",
                                r.points.size(), r.evaluated, skipped, seconds, threads, threads == 1 ? "" : "s");
  // Reasons that carry a size (a backend refusing large messages) differ per point: past the
  // first kMaxSkipLines the rest are counted on one line; --json keeps every reason.
  constexpr size_t kMaxSkipLines = 10;
  size_t rest_points = 0;
  for (size_t i = 0; i < r.skipped.size(); ++i) {
    const auto& s = r.skipped[i];
    if (i < kMaxSkipLines)
      out += fmt::format("  skipped {} point{} (first: point {}): {}\n", s.count, s.count == 1 ? "" : "s",
                         s.first_point, s.reason);
    else
      rest_points += s.count;
  }
  if (r.skipped.size() > kMaxSkipLines)
    out += fmt::format("  ... and {} more skip reasons ({} points); --json lists every reason\n",
                       r.skipped.size() - kMaxSkipLines, rest_points);
  return out + best_by_layout(r);
}

}  // namespace specsim::sweep
