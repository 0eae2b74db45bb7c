#pragma once
// The error band printed beside a prediction: where the true value fell, relative to specsim's
// prediction, in the held-out published cases of the run's class (models/accuracy/error-bands.json,
// written by `specsim validate --write-error-bands`).
//
// The file: {"rule", "classes": {"unanchored" | "anchored": {"KIND/STACK": {FIGURE: {"n", "sources",
// "lo_pct", "hi_pct", "median_abs_pct", "cases"}}}}}, KIND moe | dense | any, STACK sglang | vllm | any,
// FIGURE baseline_tok_s | spec_tok_s | speedup; errors are (predicted - measured) / measured.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "evaluate/evaluate_scenario.h"
#include "scenario/scenario.h"

namespace specsim {

/// Below this many held-out cases a band spans all of them (min..max) rather than the 10th-90th percentile.
constexpr int kBandQuantileMinCases = 5;
/// Below this many held-out cases in a class, the next wider class is used (KIND/any, then any/any).
constexpr int kBandMinCases = 3;
/// Below this many sources (publications) behind a class's cases, the next wider class is used too:
/// rows of one table share a deployment, and their spread says little about another one.
constexpr int kBandMinSources = 2;
inline constexpr const char* kBandRule =
    "signed held-out errors (predicted - measured) / measured per class; band = 10th..90th percentile "
    "(all cases when fewer than 5); the true value lies in predicted / (1 + hi) .. predicted / (1 + lo); "
    "a class with fewer than 3 cases, or with cases from one source only, uses KIND/any, then any/any";

/// The range a figure's true value is likely in.
struct ErrorBand {
  double lo = 0, hi = 0;   ///< the figure's units (tok/s, or x for a speedup)
  int n = 0;               ///< held-out cases behind it
  std::string cls;         ///< "unanchored moe/sglang"
  bool percentile = true;  ///< 10th..90th percentile (else all n cases)
  double predicted = 0;    ///< the figure the band is for (it may lie outside: a class predicted high or low)
};

/// Which figure a band is for.
enum class BandFigure { BaselineTokS, SpecTokS, Speedup };

/// Which table of classes a figure takes: not anchored; anchored to measurements at its own batch
/// size (or to an all-reduce time only); anchored to tok/s measured at other batch sizes only
/// (validate --transfer's rows that change the batch: the what-if reaching furthest); a
/// speculative figure at its batch whose spec tok/s measurements were all taken at another top-k
/// (validate --transfer's rows that make a chain a tree or change a tree's width).
enum class BandAnchoring { Unanchored, Anchored, OtherBatch, OtherTopk };

/// The band of `figure` around `predicted` for the run's class (model dense or MoE, runtime
/// sglang or vllm, and how it is anchored); nullopt when the table holds no case for it.
/// InputError naming the bands file when it is malformed.
std::optional<ErrorBand> error_band(const Scenario& s, BandFigure figure, double predicted, BandAnchoring anchoring);

/// Whether any measurement anchors the run (built-in or given).
bool run_is_anchored(const Scenario& s);

/// How a figure at `batch` is anchored: Unanchored without measurements; OtherBatch when tok/s
/// (baseline or speculative) measurements anchor the run and none was taken at `batch`.
BandAnchoring band_anchoring(const Scenario& s, int batch);
/// How a speculative figure at `batch` and `topk` is anchored: band_anchoring's, but OtherTopk
/// where that is Anchored, spec tok/s measurements anchor the run and none of those at `batch`
/// was taken at `topk`.
BandAnchoring spec_band_anchoring(const Scenario& s, int batch, int topk);

/// One backend's figures with their bands. A figure that is the run's own measurement at these
/// settings (NCCL, the measured baseline or spec tok/s) has none: it is the measurement.
/// Which tok/s of a run are its own measurement (NCCL everywhere, taken at these very settings):
/// their band is the value itself.
struct MeasuredFigures {
  bool baseline = false, spec = false;
};
MeasuredFigures measured_figures(const Scenario& s, const ScenarioResult& r, const CycleResult& c);

struct RunBands {
  std::optional<ErrorBand> baseline, spec, speedup;
  bool baseline_measured = false, spec_measured = false;
};
RunBands run_bands(const Scenario& s, const ScenarioResult& r, const CycleResult& c);

/// `{"lo", "hi", "n", "class", "basis"}`; a measured figure: {"lo" = "hi" = value, "basis": "measured ..."};
/// null when the table holds no case of the class.
nlohmann::json band_json(const std::optional<ErrorBand>& b, bool measured, double value);

/// "  likely, from the held-out errors of CLASS cases (...): baseline 80-95 tok/s (n 9), ..." ("" when no band).
std::string bands_text(const RunBands& b, const std::string& algo);

/// "80% of 12 held-out unanchored moe/sglang cases" (what the band stands on, in words).
std::string band_basis(const ErrorBand& b);

}  // namespace specsim
