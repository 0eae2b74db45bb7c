#pragma once
// What users read: the text table and the JSON object (contract in docs/json-contract.md).
#include <nlohmann/json.hpp>
#include <string>

#include "evaluate/evaluate_scenario.h"

namespace specsim {

/// specsim's version, recorded in every JSON report and baseline.
constexpr const char* kSpecsimVersion = "0.1.0";

/// The JSON report of a scenario.
nlohmann::json report_json(const Scenario& s, const ScenarioResult& r);

/// The human-readable report.
std::string report_text(const Scenario& s, const ScenarioResult& r);

/// JSON of one phase timing (shared with replay and sweeps).
nlohmann::json phase_json(const PhaseTiming& t);

}  // namespace specsim
