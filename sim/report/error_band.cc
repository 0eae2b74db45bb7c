// Looks up the held-out error band of a run's class in models/accuracy/error-bands.json.
#include "report/error_band.h"

#include <fmt/format.h>

#include <mutex>
#include <nlohmann/json.hpp>

#include "anchors/anchors.h"
#include "scenario/paths.h"
#include "util/error.h"
#include "util/json_io.h"

namespace specsim {
namespace {

using nlohmann::json;

const json& bands_table() {
  static json table;
  static std::once_flag once;
  std::call_once(once, [] { table = read_json_file(models_dir() + "/accuracy/error-bands.json"); });
  return table;
}

const char* figure_key(BandFigure f) {
  switch (f) {
    case BandFigure::BaselineTokS: return "baseline_tok_s";
    case BandFigure::SpecTokS: return "spec_tok_s";
    case BandFigure::Speedup: return "speedup";
  }
  return "";
}

const char* anchoring_key(BandAnchoring how) {
  switch (how) {
    case BandAnchoring::Unanchored: return "unanchored";
    case BandAnchoring::Anchored: return "anchored";
    case BandAnchoring::OtherBatch: return "anchored_other_batch";
    case BandAnchoring::OtherTopk: return "anchored_other_topk";
  }
  return "";
}

// Calls f with the settings of every set of measurements that may anchor the run: its own, then
// the saved ones (no allocation: a sweep asks once per row).
template <typename F>
void for_each_anchor_run(const Scenario& s, F f) {
  f(s.run);
  for (const MeasuredRun& m : s.measured) f(m.run);
}

}  // namespace

bool run_is_anchored(const Scenario& s) {
  return !s.measured.empty() || s.run.measured_baseline_tok_s || s.run.measured_spec_tok_s ||
         s.run.measured_allreduce_us;
}

BandAnchoring band_anchoring(const Scenario& s, int batch) {
  if (!run_is_anchored(s)) return BandAnchoring::Unanchored;
  bool tok_s = false, at_batch = false;
  for_each_anchor_run(s, [&](const RunSpec& r) {
    if (r.measured_baseline_tok_s || r.measured_spec_tok_s) tok_s = true, at_batch |= r.batch_size == batch;
  });
  return tok_s && !at_batch ? BandAnchoring::OtherBatch : BandAnchoring::Anchored;
}

BandAnchoring spec_band_anchoring(const Scenario& s, int batch, int topk) {
  const BandAnchoring how = band_anchoring(s, batch);
  if (how != BandAnchoring::Anchored) return how;
  bool spec = false, at_topk = false;
  for_each_anchor_run(s, [&](const RunSpec& r) {
    if (r.measured_spec_tok_s && r.batch_size == batch) spec = true, at_topk |= r.topk == topk;
  });
  return spec && !at_topk ? BandAnchoring::OtherTopk : how;
}

std::optional<ErrorBand> error_band(const Scenario& s, BandFigure figure, double predicted, BandAnchoring how) {
  const json& t = bands_table();
  const std::string where = "models/accuracy/error-bands.json";
  const char* anchoring = anchoring_key(how);
  if (!t.contains("classes") || !t["classes"].is_object() || !t["classes"].contains(anchoring))
    throw InputError("no classes." + std::string(anchoring) +
                         " table: regenerate it with specsim validate "
                         "--write-error-bands",
                     where);
  const json& classes = t["classes"][anchoring];
  const std::string shown = how == BandAnchoring::OtherBatch  ? "anchored at another batch"
                            : how == BandAnchoring::OtherTopk ? "anchored at another top-k"
                                                              : anchoring;
  const std::string kind = s.target.has_moe ? "moe" : "dense";
  const std::string stack =
      s.runtime && (s.runtime->name == "sglang" || s.runtime->name == "vllm") ? s.runtime->name : "any";
  for (const std::string& key : {kind + "/" + stack, kind + "/any", std::string("any/any")}) {
    if (!classes.contains(key) || !classes[key].contains(figure_key(figure))) continue;
    const json& e = classes[key][figure_key(figure)];
    const std::string field = where + ": classes." + anchoring + "." + key + "." + figure_key(figure);
    const int n = json_int(e, "n", field);
    const int sources = e.contains("sources") ? json_int(e, "sources", field) : n;
    if (n < kBandMinCases || sources < kBandMinSources) continue;
    const double lo = json_double(e, "lo_pct", field) / 100, hi = json_double(e, "hi_pct", field) / 100;
    if (lo <= -1 || hi <= -1 || lo > hi) throw InputError("lo_pct/hi_pct out of range: regenerate the file", field);
    ErrorBand b;
    b.lo = predicted / (1 + hi), b.hi = predicted / (1 + lo);
    b.predicted = predicted;
    b.n = n;
    b.cls = shown + " " + key;
    b.percentile = n >= kBandQuantileMinCases;
    return b;
  }
  return std::nullopt;
}

MeasuredFigures measured_figures(const Scenario& s, const ScenarioResult& r, const CycleResult& c) {
  MeasuredFigures m;
  const bool nccl_everywhere = c.backend.kind == AllReduceChoice::Kind::Nccl;
  // another backend's baseline is the measurement too where its step is NCCL's (no all-reduce at tp 1)
  m.baseline = r.reference_measured && (nccl_everywhere || std::abs(c.baseline_tok_s - r.reference_baseline_tok_s) <=
                                                               1e-9 * std::max(1.0, r.reference_baseline_tok_s));
  // The spec figure is the measurement when the acceptance came from a spec tok/s taken at these
  // very settings (same box, batch and draft shape): the run then reproduces it with NCCL.
  if (const AnchorEntry* e = r.anchor_report.acceptance(); e && nccl_everywhere && e->kind == AnchorKind::Spec) {
    const RunSpec& run = s.run;
    m.spec = e->batch_size == run.batch_size && e->steps == run.num_steps && e->topk == run.topk &&
             e->draft_tokens == run.num_draft_tokens && e->box == box_key(s.hw, run, s.target);
  }
  return m;
}

RunBands run_bands(const Scenario& s, const ScenarioResult& r, const CycleResult& c) {
  RunBands b;
  const BandAnchoring anchored = band_anchoring(s, s.run.batch_size);
  const BandAnchoring spec_anchored = spec_band_anchoring(s, s.run.batch_size, s.run.topk);
  const MeasuredFigures m = measured_figures(s, r, c);
  b.baseline_measured = m.baseline, b.spec_measured = m.spec;
  if (!b.baseline_measured) b.baseline = error_band(s, BandFigure::BaselineTokS, c.baseline_tok_s, anchored);
  if (s.run.speculative()) {
    if (!b.spec_measured) b.spec = error_band(s, BandFigure::SpecTokS, c.spec_tok_s, spec_anchored);
    if (!(b.spec_measured && b.baseline_measured))
      b.speedup = error_band(s, BandFigure::Speedup, c.speedup, spec_anchored);
  }
  return b;
}

nlohmann::json band_json(const std::optional<ErrorBand>& b, bool measured, double value) {
  if (measured) return {{"lo", value}, {"hi", value}, {"basis", "measured at these settings"}};
  if (!b) return nullptr;
  return {{"lo", b->lo}, {"hi", b->hi}, {"n", b->n}, {"class", b->cls}, {"basis", band_basis(*b)}};
}

std::string bands_text(const RunBands& b, const std::string& algo) {
  const std::optional<ErrorBand>* figures[] = {&b.baseline, &b.spec, &b.speedup};
  const ErrorBand* first = nullptr;
  for (auto* f : figures)
    if (*f && !first) first = &**f;
  if (!first) return "";
  std::string parts;
  auto add = [&](const std::optional<ErrorBand>& e, const std::string& what, const char* format) {
    if (!e) return;
    // The class is said once; a figure that fell back to a wider class says its own.
    const std::string cls = e->cls == first->cls ? "" : e->cls + ", ";
    // the class's predictions all ran high (or low): the likely measured range excludes the figure
    const char* side = e->predicted > e->hi ? "above" : e->predicted < e->lo ? "below" : nullptr;
    const std::string outside =
        side ? fmt::format(", the figure {} it: held-out cases of this class measured {} than predicted", side,
                           e->predicted > e->hi ? "slower" : "faster")
             : "";
    parts += (parts.empty() ? "" : ", ") + what + " " + fmt::format(fmt::runtime(format), e->lo, e->hi) +
             fmt::format(" ({}n {}{}{})", cls, e->n, e->percentile ? "" : ", all cases", outside);
  };
  add(b.baseline, "baseline", "{:.1f}-{:.1f} tok/s");
  add(b.spec, algo, "{:.1f}-{:.1f} tok/s");
  add(b.speedup, "speedup", "x{:.2f}-{:.2f}");
  return "  likely measured, from the held-out errors of " + first->cls +
         " cases (10th-90th percentile; models/accuracy/error-bands.json): " + parts + "\n";
}

std::string band_basis(const ErrorBand& b) {
  return b.percentile ? fmt::format("10th-90th percentile of {} held-out {} cases", b.n, b.cls)
                      : fmt::format("all {} held-out {} cases", b.n, b.cls);
}

}  // namespace specsim
