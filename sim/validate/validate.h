#pragma once
// `specsim validate`: every published case predicted without anchors and set beside what was
// measured, with the median and worst error per role and the accuracy targets.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "validate/case_run.h"
#include "validate/error_stats.h"
#include "validate/published_case.h"

namespace specsim {

/// One case predicted. `skipped` non-empty: no prediction, and why.
struct CaseOutcome {
  PublishedCase c;
  std::optional<CaseRun> run;  ///< none: the case states too little to model (why in `skipped`)
  std::string skipped;
  std::string spec_skipped;  ///< baseline predicted, speculation not (e.g. no accept length)
  std::optional<double> baseline_tok_s, spec_tok_s, speedup;  ///< predicted, per request stream
  std::optional<double> implied_accept_len;  ///< measured spec tok/s x predicted cycle (no accept length given)
  /// Its plain measurement is an earlier case's (a table's one baseline row repeated beside each
  /// draft setting): the baseline error counts once, at the first case.
  bool baseline_repeat = false;
};

struct ValidateResult {
  std::string set;
  std::vector<CaseOutcome> cases;
  ErrorStats baseline[2], spec[2], speedup[2];  ///< [0] fit, [1] held out
  std::vector<Target> targets;
};

/// Predicts every case of `set` (a folder of case files; `label` names it in the output). InputError naming file:field
/// on a bad case; cases the zoo cannot express are skipped with the reason.
ValidateResult run_validate(const std::string& set_dir, const std::string& label = "");

/// The case `id` of the set, predicted alone; InputError naming --case when there is none.
CaseOutcome validate_case(const std::string& set_dir, const std::string& id, const std::string& label = "");

/// One case in words: source, measured and predicted figures, assumptions, and its `specsim run` command.
std::string case_text(const CaseOutcome& o);
nlohmann::json case_json(const CaseOutcome& o);

/// The table; assumptions are numbered notes under it, each text printed once.
std::string validate_text(const ValidateResult& r);
nlohmann::json validate_json(const ValidateResult& r);

}  // namespace specsim
