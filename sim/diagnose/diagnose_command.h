#pragma once
// `specsim diagnose LOG` as one call: the log diagnosed, the scenario written (-o, YAML or JSON),
// the diagnosis rendered; the caller prints what it returns.
#include <string>

#include "diagnose/diagnose.h"

namespace specsim::diagnose {

/// Diagnoses `in`, writes the scenario to `out` (empty: not written) and returns the diagnosis
/// (text, or JSON when `as_json`). InputError on bad input, with no file written.
std::string diagnose_command(const DiagnoseInput& in, const std::string& out, bool as_json);

}  // namespace specsim::diagnose
