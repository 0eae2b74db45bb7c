#pragma once
// `specsim check --replay`, the CPU half: which kind of baseline was given and the comparison of
// two replay reports (measured phase `us`, slower is worse). The all-reduces it verifies on the
// GPU are plan/allreduce_cases.h; the GPU work is kernels/replay/allreduce_verify.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "check/check.h"
#include "plan/allreduce_cases.h"

namespace specsim::check {

enum class BaselineKind { Analytic, Replay, Unknown };

/// Analytic: a `specsim run --json` report (has "scenarios"); Replay: a `specsim replay
/// --json`/`-o` report ("kind": "specsim-replay").
BaselineKind baseline_kind(const nlohmann::json& j);

/// Throws InputError naming --baseline when the baseline's kind does not fit the rerun: --replay
/// compares measured times with measured times (a replay baseline), the analytic rerun compares
/// predictions with predictions (a `specsim run --json` baseline).
void require_baseline_kind(const nlohmann::json& j, bool replay, const std::string& where);

/// Throws InputError naming `where` unless `j` is a replay report with measured phase times.
void validate_replay_report(const nlohmann::json& j, const std::string& where);

/// The inputs that differ between two replay reports (scenario fields, device, rank share), as
/// "field: baseline X, now Y". Empty when the same scenario on the same kind of GPU.
std::vector<std::string> replay_input_differences(const nlohmann::json& baseline, const nlohmann::json& now);

/// Every baseline phase's measured `us` against the rerun's (scenario column "replay").
std::vector<CheckRow> compare_replay_reports(const nlohmann::json& baseline, const nlohmann::json& now,
                                             double tolerance);

}  // namespace specsim::check
