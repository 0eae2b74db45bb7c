#pragma once
// `specsim check --replay`, the CPU half: which kind of baseline was given, the comparison of two
// replay reports (measured phase `us`, slower is worse), the distinct all-reduces of a plan that
// the GPU verification runs, and the words it prints. The GPU work is kernels/replay/allreduce_verify.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "check/check.h"
#include "plan/cycle_plan.h"

namespace specsim::sweep {

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

/// One distinct all-reduce of a phase: its payload per rank and how often a forward runs it.
struct AllReduceCase {
  PhaseKind phase = PhaseKind::Verify;
  std::size_t bytes = 0;  ///< payload per rank (bf16 elements x 2)
  int calls = 0;          ///< calls of this size in one forward, block repeats counted
};

/// The distinct (phase, payload) all-reduces of `plan`, in phase order then first appearance.
std::vector<AllReduceCase> distinct_allreduces(const CyclePlan& plan);

/// What verifying one all-reduce (or one backend that could not be verified) found.
struct VerifyResult {
  std::string backend;    ///< "custom:one-shot-push", "nccl", "fixed:40"
  std::string phase;      ///< phase name; empty for a line about the whole backend
  std::size_t bytes = 0;  ///< payload per rank
  int world = 0;
  bool verified = false;     ///< the call ran and its outputs were compared
  std::size_t wrong = 0;     ///< elements (over all ranks) differing from the CPU reference
  std::size_t elements = 0;  ///< elements compared (count x world)
  std::string note;          ///< why not verified, or an error the call threw
  bool failed() const { return wrong > 0 || (!verified && note.rfind("ERROR", 0) == 0); }
};

/// One line per result: "allreduce verify: custom:two-shot verify 65536 B x 8 ranks: ok ...".
std::string verify_line(const VerifyResult& r);

}  // namespace specsim::sweep
