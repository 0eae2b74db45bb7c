#pragma once
// The last check before a result is printed or written: every computed figure finite, and every
// time and rate positive. An input out of range (an anchor of 1e300 tok/s, a trace of 1e308 us)
// becomes an error naming the inputs, not an inf, a NaN or a negative time in the report.
#include <nlohmann/json.hpp>
#include <string>

#include "evaluate/evaluate_scenario.h"

namespace specsim {

/// "" when the backend's phase times, cycle, baseline step and tok/s are finite and positive, else
/// the error line (what, then the inputs that fed it in parentheses).
std::string figure_problem(const RunSpec& run, const CycleResult& c);

/// InputError when a backend's phase times, cycle, baseline step or tok/s are not finite and
/// positive; `where` names the inputs that fed them (the measured anchors when given).
void check_result_figures(const Scenario& s, const ScenarioResult& r);

/// InputError naming `where` and the JSON path of the first non-finite number in `j`.
void require_finite_json(const nlohmann::json& j, const std::string& where);

}  // namespace specsim
