#include "tune/tune_output.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/gnuplot.h"

namespace specsim::tune {

namespace {

std::size_t shown(const TuneReport& r, const TuneBatch& b) {
  return r.top == 0 ? b.ranked.size() : std::min(r.top, b.ranked.size());
}

std::string backend_label(const TuneReport& r, std::size_t b) { return r.result.backends[b].label(); }

}  // namespace

std::string tune_text(const TuneReport& r) {
  const TuneResult& res = r.result;
  const Scenario& s = r.in.scenario;
  std::string o = fmt::format("specsim tune: {} on {}x {} ({}), tp {}\n", s.target.name, s.hw.num_gpus, s.hw.gpu.name,
                              s.hw.topo.name, s.run.tp_size);
  o += fmt::format("acceptance: {}\n  {}\n", r.acceptance.from, r.acceptance.note);
  for (const auto& w : r.acceptance.warnings) o += "warning: " + w + "\n";
  if (r.acceptance.fit)
    for (const auto& p : r.acceptance.fit->points)
      o += fmt::format("  steps {} topk {} draft tokens {}: measured accept len {:.3f}, model {:.3f}\n", p.steps,
                       p.topk, p.draft_tokens, p.measured, p.fitted);
  o += fmt::format("  per-depth rate (depth 1..8):");
  for (int d = 1; d <= 8; ++d) o += fmt::format(" {:.3f}", r.in.acceptance.rate(d));
  o += fmt::format("\n  top-k coverage at depth 1 (k 1..8):");
  for (int k = 1; k <= 8; ++k) o += fmt::format(" {:.3f}", r.in.acceptance.coverage_at(1, k));
  o += fmt::format(
      "\nsearch: {} draft settings SGLang runs (steps 1..{}, topk 1..{}, draft tokens <= {}) x {} "
      "all-reduce backends; {} cycles evaluated in {:.3f} s\n",
      res.settings, r.in.max_steps, r.in.max_topk, r.in.max_draft_tokens, res.backends.size(), res.evaluated,
      r.elapsed_s);
  for (const auto& x : res.refused)
    o += fmt::format("  {} refused at batch size {}: {}\n", backend_label(r, x.backend), x.batch_size, x.reason);
  std::string unfit;
  for (const auto& b : res.batches)
    if (b.refused) unfit += fmt::format("{}{}", unfit.empty() ? "" : ", ", b.batch_size);
  if (!unfit.empty()) o += fmt::format("  batch sizes skipped (they do not fit GPU memory; see below): {}\n", unfit);
  for (const auto& b : res.batches) {
    if (b.refused) {
      o += fmt::format("\nbatch size {}: skipped, `specsim run` refuses it: {}\n", b.batch_size, b.refused->line());
      continue;
    }
    o += fmt::format("\nbatch size {}: plain decoding", b.batch_size);
    for (const auto& p : b.plain) o += fmt::format(" {:.1f} tok/s ({})", p.tok_s, backend_label(r, p.backend));
    if (b.plain.empty()) {
      o += " -- nothing could be evaluated at this batch size\n";
      continue;
    }
    o += b.pays() ? " -- speculation pays\n" : " -- speculation does not pay: run without it\n";
    o += fmt::format("  {:>4} {:>5} {:>4} {:>6} {:<10} {:>10} {:>10} {:>10} {:>8}\n", "rank", "steps", "topk", "draft",
                     "allreduce", "accept len", "cycle us", "tok/s", "speedup");
    for (std::size_t i = 0; i < shown(r, b); ++i) {
      const TuneRow& x = b.ranked[i];
      o += fmt::format("  {:>4} {:>5} {:>4} {:>6} {:<10} {:>10.3f} {:>10.1f} {:>10.1f} {:>7.2f}x\n", i + 1, x.steps,
                       x.topk, x.draft_tokens, backend_label(r, x.backend), x.accept_len, x.cycle_us, x.tok_s,
                       x.speedup);
    }
  }
  const auto stop = res.stops_paying_at();
  if (stop) {
    o +=
        fmt::format("\nspeculation stops paying at batch size {} (the best setting falls below plain decoding)", *stop);
    std::string again;  // larger sizes where it pays once more (the cycle is not monotone in batch)
    for (const auto& b : res.batches)
      if (b.batch_size > *stop && !b.plain.empty() && b.pays())
        again += fmt::format("{}{}", again.empty() ? "" : ", ", b.batch_size);
    o += again.empty() ? "\n" : "; it pays again at batch size " + again + "\n";
  } else
    o += unfit.empty() ? "\nspeculation pays at every batch size asked\n"
                       : "\nspeculation pays at every batch size asked that fits GPU memory\n";
  return o;
}

nlohmann::json tune_json(const TuneReport& r) {
  using nlohmann::json;
  const TuneResult& res = r.result;
  const Scenario& s = r.in.scenario;
  json j;
  j["model"] = s.target.name;
  j["hardware"] = {{"gpu", s.hw.gpu.name}, {"topology", s.hw.topo.name}, {"num_gpus", s.hw.num_gpus}};
  j["tp_size"] = s.run.tp_size;
  json acc = {{"from", r.acceptance.from}, {"note", r.acceptance.note}, {"warnings", r.acceptance.warnings}};
  json rates = json::array(), cov = json::array();
  for (int d = 1; d <= r.in.max_steps; ++d) {
    rates.push_back(r.in.acceptance.rate(d));
    json row = json::array();
    for (int k = 1; k <= r.in.max_topk; ++k) row.push_back(r.in.acceptance.coverage_at(d, k));
    cov.push_back(row);
  }
  acc["depth_rates"] = rates;
  acc["topk_coverage"] = cov;
  if (r.acceptance.fit) {
    const auto& f = *r.acceptance.fit;
    json pts = json::array();
    for (const auto& p : f.points)
      pts.push_back({{"steps", p.steps},
                     {"topk", p.topk},
                     {"draft_tokens", p.draft_tokens},
                     {"measured_accept_len", p.measured},
                     {"model_accept_len", p.fitted},
                     {"observations", p.count}});
    acc["fit"] = {{"rate", f.rate},
                  {"beta", f.beta},
                  {"decay", f.decay},
                  {"beta_fitted", f.beta_fitted},
                  {"decay_fitted", f.decay_fitted},
                  {"rms_error", f.rms_error},
                  {"points", pts}};
  }
  j["acceptance"] = acc;
  json backends = json::array();
  for (const auto& b : res.backends) backends.push_back(b.label());
  json refused = json::array();
  for (const auto& x : res.refused)
    refused.push_back({{"allreduce", backend_label(r, x.backend)}, {"batch_size", x.batch_size}, {"reason", x.reason}});
  j["search"] = {{"max_steps", r.in.max_steps},
                 {"max_topk", r.in.max_topk},
                 {"max_draft_tokens", r.in.max_draft_tokens},
                 {"draft_settings", res.settings},
                 {"batch_sizes", r.in.batch_sizes},
                 {"allreduce", backends},
                 {"refused", refused},
                 {"evaluated", res.evaluated},
                 {"skipped", res.skipped}};
  json batches = json::array();
  for (const auto& b : res.batches) {
    json plain = json::array();
    for (const auto& p : b.plain)
      plain.push_back({{"allreduce", backend_label(r, p.backend)}, {"step_us", p.step_us}, {"tok_s", p.tok_s}});
    json ranked = json::array();
    for (std::size_t i = 0; i < shown(r, b); ++i) {
      const TuneRow& x = b.ranked[i];
      ranked.push_back({{"rank", i + 1},
                        {"steps", x.steps},
                        {"topk", x.topk},
                        {"draft_tokens", x.draft_tokens},
                        {"allreduce", backend_label(r, x.backend)},
                        {"accept_len", x.accept_len},
                        {"cycle_us", x.cycle_us},
                        {"tok_s", x.tok_s},
                        {"speedup", x.speedup}});
    }
    batches.push_back({{"batch_size", b.batch_size},
                       {"skipped_reason", b.refused ? json(b.refused->line()) : json(nullptr)},
                       {"plain", plain},
                       {"plain_best_tok_s", b.best_plain_tok_s()},
                       {"pays", b.pays()},
                       {"settings_ranked", b.ranked.size()},
                       {"ranked", ranked}});
  }
  j["batches"] = batches;
  const auto stop = res.stops_paying_at();
  j["speculation_stops_paying_at_batch_size"] = stop ? json(*stop) : json(nullptr);
  j["elapsed_s"] = r.elapsed_s;
  return j;
}

std::string tune_csv(const TuneReport& r) {
  std::string o = "batch_size,rank,steps,topk,draft_tokens,allreduce,accept_len,cycle_us,tok_s,speedup,plain_tok_s\n";
  for (const auto& b : r.result.batches)
    for (std::size_t i = 0; i < shown(r, b); ++i) {
      const TuneRow& x = b.ranked[i];
      o += fmt::format("{},{},{},{},{},{},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g}\n", b.batch_size, i + 1, x.steps, x.topk,
                       x.draft_tokens, backend_label(r, x.backend), x.accept_len, x.cycle_us, x.tok_s, x.speedup,
                       b.best_plain_tok_s());
    }
  return o;
}

void draw_tune_plot(const TuneReport& r, const std::string& path, const std::string& script_path) {
  const TuneResult& res = r.result;
  check_plot_names(r.in.scenario);
  auto quote = [](const std::string& t) {
    plot_safe(t, "plot text", "--plot");
    std::string out = "'";
    for (const char c : t) out += c == '\'' ? std::string("''") : std::string(1, c);
    return out + "'";
  };
  // Columns: batch size, best plain decoding tok/s, then per backend the best setting's tok/s over
  // it ("NaN" where the backend does not run), rows by batch size.
  std::vector<const TuneBatch*> rows;
  for (const auto& b : res.batches)
    if (!b.refused) rows.push_back(&b);  // a batch size that does not fit has nothing to draw
  std::sort(rows.begin(), rows.end(), [](auto* a, auto* b) { return a->batch_size < b->batch_size; });
  std::string data, winners;
  for (const auto* b : rows) {
    const double plain = b->best_plain_tok_s();
    // The winning setting over every backend, labelled at its point: which setting to run, read
    // off the picture at each batch size.
    const TuneRow* win = nullptr;
    for (const auto& x : b->ranked)
      if (!win || x.tok_s > win->tok_s) win = &x;
    if (win && plain > 0)
      winners += fmt::format("set label {} at {},{:.6g} center offset 0,1.2 font ',9'\n",
                             quote(fmt::format("s{} k{} d{}{}", win->steps, win->topk, win->draft_tokens,
                                               res.backends.size() > 1 ? " " + backend_label(r, win->backend) : "")),
                             b->batch_size, win->tok_s / plain);
    data += fmt::format("{} {:.6g}", b->batch_size, plain);
    for (std::size_t k = 0; k < res.backends.size(); ++k) {
      double best = NAN;
      for (const auto& x : b->ranked)
        if (x.backend == k) {
          best = x.tok_s;
          break;
        }
      data += std::isnan(best) || plain <= 0 ? std::string(" NaN") : fmt::format(" {:.6g}", best / plain);
    }
    data += "\n";
  }
  const Scenario& s = r.in.scenario;
  std::string cmd = "set datafile missing 'NaN'\nset logscale x 2\nset grid\nset key top right\n";
  cmd += "set xlabel 'batch size (running requests)'\nset ylabel 'best setting tok/s / plain decoding tok/s'\n";
  cmd += "set yrange [0:*]\nset offsets graph 0.04, graph 0.04, graph 0.1, 0\n";
  cmd += winners;
  cmd += "set title " +
         quote(fmt::format("specsim tune: {} on {}x {}, tp {}: the best draft setting against plain decoding",
                           s.target.name, s.hw.num_gpus, s.hw.gpu.name, s.run.tp_size)) +
         "\n";
  if (const auto stop = res.stops_paying_at())
    cmd += fmt::format(
        "set arrow from {0},graph 0 to {0},graph 1 nohead dt 2 lc rgb 'gray40'\n"
        "set label {1} at {0},graph 0.05 right offset -0.5,0\n",
        *stop, quote(fmt::format("stops paying at bs {}", *stop)));
  cmd +=
      "set label 'labels: the winning setting (s steps, k topk, d draft tokens)' at graph 0.01,graph 0.97 left "
      "font ',9'\n";
  cmd += "plot 1 with lines dt 2 lw 2 lc rgb 'black' title 'plain decoding (best backend)'";
  for (std::size_t k = 0; k < res.backends.size(); ++k)
    cmd += fmt::format(", $DATA using 1:{} with linespoints lw 2 title {}", k + 3,
                       quote("best draft setting, " + res.backends[k].label()));
  cmd += "\n";
  render_gnuplot(path, script_path, data, cmd);
}

}  // namespace specsim::tune
