#pragma once
// The replay report: what a GPU replay measured (plan/replay_measurement.h) held against the
// analytic prediction for the same plan, as JSON and text, and read back (`calibrate --from`).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "evaluate/evaluate_scenario.h"
#include "plan/replay_measurement.h"

namespace specsim {

/// The analytic time of one replayed forward: the stripped phase on `hw`, with no all-reduce and
/// no per-forward scheduler overhead (the replay runs neither), expert GEMMs as dense GEMMs, fp8
/// GEMMs by the block-scaled fp8 terms when `block_fp8` (the replay's block-scaled kernel), else
/// by cuBLASLt's per-tensor fp8 term (what replays before that kernel ran).
PhaseTiming predict_replayed_phase(const PhasePlan& stripped, const Hardware& hw, const RunSpec& run,
                                   bool block_fp8 = true);

/// Whether a replayed phase ran its fp8 GEMMs block-scaled (false: per-tensor, or no fp8 GEMM).
bool ran_block_fp8(const PhaseMeasurement& m);

/// The replay report: scenario, and per phase predicted beside measured, per op class and op,
/// with the error in percent (100 * (predicted - measured) / measured).
nlohmann::json replay_json(const Scenario& s, const ScenarioResult& r, const ReplayMeasurement& m);

/// The text table of a replay report (reads the JSON, so a saved report prints the same).
std::string replay_text(const nlohmann::json& report);

/// The phases of a saved replay report, with their ops (multi-GPU reports: collective ops and
/// measured allreduce_us/allgather_us included); InputError naming `where` and the field.
std::vector<PhaseMeasurement> phases_from_report(const nlohmann::json& report, const std::string& where);

/// A replay report read from disk once, for every fit that needs it.
struct ReplayReport {
  std::string path;
  nlohmann::json json;
};
std::vector<ReplayReport> read_replay_reports(const std::vector<std::string>& paths);

}  // namespace specsim
