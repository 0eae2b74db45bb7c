#pragma once
// `specsim validate --case ID`: one case in words and, when it can be run, the whole report of
// the `specsim run` that replays it.
#include <string>

#include "validate/validate.h"

namespace specsim {

/// The case and its run's report (text, or one JSON object when `json`); a run the model refuses
/// is said, as the table says it.
std::string case_report(const CaseOutcome& o, bool json);

}  // namespace specsim
