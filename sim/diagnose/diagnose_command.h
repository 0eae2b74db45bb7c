#pragma once
// `specsim diagnose LOG` as one call: the log diagnosed, the scenario written (-o, YAML or JSON),
// the diagnosis rendered; the caller prints what it returns.
#include <string>
#include <vector>

#include "diagnose/diagnose.h"

namespace specsim::diagnose {

/// Diagnoses `in`, writes the scenario to `out` (empty: not written) and returns the diagnosis
/// (text, or JSON when `as_json`). InputError on bad input, with no file written.
/// `more_logs`: further logs of the same deployment at other settings, each diagnosed with the
/// same flags; the scenario written is then anchored to all of them (diagnose/combine_logs.h).
std::string diagnose_command(const DiagnoseInput& in, const std::string& out, bool as_json,
                             const std::vector<std::string>& more_logs = {});

}  // namespace specsim::diagnose
