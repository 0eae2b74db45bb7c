#pragma once
// What `specsim diagnose` prints: the diagnosis as text or as one JSON object (docs/diagnose.md).
#include <nlohmann/json.hpp>
#include <string>

#include "diagnose/diagnose.h"

namespace specsim::diagnose {

/// The diagnosis as JSON; `out` is the scenario file written (empty: none).
nlohmann::json diagnosis_json(const Diagnosis& d, const std::string& out);

/// The diagnosis in words, one line per figure and finding; `out` as for diagnosis_json.
std::string diagnosis_text(const Diagnosis& d, const std::string& out);

}  // namespace specsim::diagnose
