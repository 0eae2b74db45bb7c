#pragma once
// `specsim tune` as one call: where the acceptance comes from (--acceptance's rates, a fit to
// --accept-from's measured accept lens, or the scenario file's own accept len), the deployment
// (scenario file and flags), the search, and its outputs; the caller prints what it returns.
#include <optional>
#include <string>
#include <vector>

#include "scenario/resolve.h"
#include "tune/tune_output.h"

namespace specsim::tune {

/// `specsim tune`'s flags beyond the scenario's.
struct TuneRequest {
  std::vector<std::string> accept_from;  ///< SGLang logs, bench results or a CSV (repeatable)
  std::string acceptance;                ///< per-depth rates and coverage (JSON)
  std::string scenario;                  ///< scenario file: the deployment, and its accept len
  std::string batch = "1,2,4,8,16,32,64";
  /// Parallel layouts to search ("auto" or tpN[-dpM][-epK],...; empty: the deployment's alone).
  std::string layouts;
  std::string csv, plot, plot_script;
  /// The draft settings of an --accept-from log that has no server_args line (as diagnose takes them).
  std::optional<int> log_steps, log_topk, log_draft_tokens;
  bool json = false;
  std::size_t top = 10;
  int max_steps = 8, max_topk = 8, max_draft_tokens = 64;
};

/// The acceptance model tune ranks with and where it came from: --acceptance's rates, else a fit
/// to --accept-from's measurements, else the fit to the accept len `s` (the scenario file's
/// deployment, or --accept-len / --accept-rate at the deployment's setting) reaches at its own
/// settings.
AcceptanceOrigin choose_acceptance(const TuneRequest& q, const Scenario& s, accept::TreeAcceptance& model);

/// One warning per source of `obs` that names a target model other than `s`'s (an SGLang log of
/// DeepSeek-V3 applied to a Llama deployment).
std::vector<std::string> model_mismatches(const std::vector<accept::AcceptObservation>& obs, const Scenario& s);

/// Runs the search and writes --csv and --plot; returns the ranking (text, or JSON with --json).
/// With --layouts, the search runs on each layout and the ranking is of layouts per batch size.
/// InputError on bad input, with no file written.
std::string tune_command(RunArgs& args, const TuneRequest& q);

}  // namespace specsim::tune
