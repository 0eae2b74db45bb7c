#pragma once
// `specsim diagnose`: from an SGLang server log (and optionally a torch trace or an nccl-tests
// log) to the scenario that reproduces its measured tok/s, and the places where the log and
// the model disagree (docs/diagnose.md).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "diagnose/findings.h"
#include "ingest/sglang_log_summary.h"
#include "scenario/scenario.h"

namespace specsim::diagnose {

/// What the user gave: the log and the flags that stand in for what the log does not say.
struct DiagnoseInput {
  std::string log;
  std::optional<std::string> hardware, model, baseline_log, nccl_tests, trace, algorithm;
  /// The draft's config.json (or folder, or zoo MODEL/DRAFT) when the zoo has none for the model.
  std::optional<std::string> draft_model;
  std::optional<int> batch_size, tp_size, num_steps, topk, num_draft_tokens;
};

/// How the scenario reproduces the measured tok/s.
enum class Reproduction {
  Baseline,         ///< no speculation: the measured plain-decode tok/s anchors the per-forward overhead
  ImpliedOverhead,  ///< the logged accept len, and the per-forward overhead that closes the cycle
  ImpliedAccept,    ///< a measured baseline anchors the overhead; the accept len is what the tok/s implies
  NotReproduced,    ///< the model cannot reach the measured tok/s with any plausible term
};

std::string_view reproduction_name(Reproduction r);

struct Diagnosis {
  LogSummary log;
  std::string model, model_from;  ///< zoo name (or config path) and how it was found
  Scenario scenario;              ///< resolved, with its measurements
  nlohmann::json scenario_file;   ///< what -o writes (scenario_file_json)
  Reproduction how = Reproduction::NotReproduced;
  double measured_tok_s = 0;   ///< the log's figure the scenario reproduces
  double predicted_tok_s = 0;  ///< the scenario read back from its file, as `specsim run` evaluates it
  bool reproduces = false;     ///< within kReproduceShare of the measured figure
  Figures figures;             ///< what the findings are computed from
  std::vector<Finding> findings;
};

/// A scenario reproduces a measurement when within this share of it.
constexpr double kReproduceShare = 0.01;

/// Reads the files and builds the diagnosis. InputError (exit 2) on a missing or bad file, a log
/// without decode lines, a model outside the zoo, or a missing flag the log cannot stand in for.
Diagnosis diagnose(const DiagnoseInput& in);

}  // namespace specsim::diagnose
