#pragma once
// `specsim check`: compares a rerun of a scenario against a baseline made by `specsim run --json`.
// Both sides are report JSON objects, so the rerun may come from the analytic engine today and
// from a GPU replay (a measured report of the same shape) later.
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "evaluate/evaluate_scenario.h"

namespace specsim::check {

/// Produces the report JSON of a scenario (analytic: report_json(s, run_scenario(s))).
using MeasureFn = std::function<nlohmann::json(const Scenario&)>;

/// The analytic engine as a MeasureFn.
MeasureFn analytic_measure();

/// "0.03" or "3%" -> 0.03; InputError naming --tolerance unless in [0, 1).
double parse_tolerance(const std::string& text);

/// Throws InputError naming `where` unless `j` looks like a `specsim run --json` report.
void validate_report(const nlohmann::json& j, const std::string& where);

/// The inputs that differ between two reports (model, hardware, settings, measured anchors,
/// all-reduce backends), as "field: baseline X, now Y". Empty when the same scenario.
std::vector<std::string> input_differences(const nlohmann::json& baseline, const nlohmann::json& now);

/// One compared figure.
struct CheckRow {
  std::string scenario;  ///< all-reduce label
  std::string figure;    ///< "verify us", "spec tok/s", ...
  double baseline = 0, now = 0;
  double delta = 0;    ///< (now - baseline) / baseline
  std::string status;  ///< ok, faster, REGRESSED, refused, MISSING
  bool regressed = false;
  bool numeric = true;  ///< false: a refused or missing scenario or phase (no numbers to show)
};

/// Every phase `us` (slower is worse) and the baseline and spec tok/s (lower is worse) per
/// all-reduce scenario; a figure regresses beyond `tolerance` (a fraction).
std::vector<CheckRow> compare_reports(const nlohmann::json& baseline, const nlohmann::json& now, double tolerance);

/// Which figures may fail a check: tok/s (baseline and speculative), cycle and step time, or
/// every phase time. The others are shown and marked "not gated".
enum class Gate { TokPerS, CycleUs, Phases };

/// "tok_per_s" | "cycle_us" | "phases"; InputError naming --gate otherwise.
Gate parse_gate(const std::string& text);
std::string_view gate_name(Gate g);

/// Clears `regressed` on rows the gate does not cover (their status says so).
void apply_gate(std::vector<CheckRow>& rows, Gate gate);

/// What a check compared, beside its rows: the inputs of both sides.
struct CheckContext {
  std::string baseline_file;
  std::string baseline_version;          ///< the specsim that wrote the baseline
  bool carried_scenario = false;         ///< the baseline held its scenario and was rerun from it
  std::vector<std::string> changes;      ///< the flags given beside the baseline (the change under test)
  std::vector<std::string> differences;  ///< input_differences(baseline, rerun)
};

/// The rows and verdict as one JSON object (for CI): the specsim version, the baseline's, the
/// change under test, the inputs that differ, the gate, each row (gated or not) and the verdict.
nlohmann::json check_json(const std::vector<CheckRow>& rows, Gate gate, double tolerance,
                          const CheckContext& context = {});

/// Whether `gate` may fail on row `r` (a missing or newly refused scenario fails every gate).
bool gated(const CheckRow& r, Gate gate);

/// The diff table, one row per figure.
std::string check_table(const std::vector<CheckRow>& rows);

}  // namespace specsim::check
