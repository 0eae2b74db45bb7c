#pragma once
// What every calibration mode shares: the base profile as raw JSON (so numbers it does not fit keep
// their sources) and the date stamped into the sources of the numbers it does.
#include <nlohmann/json.hpp>
#include <string>

namespace specsim {

/// {"gpu": ..., "topology": ...} of `--hardware GPU:TOPOLOGY` or of a profile file, unparsed.
nlohmann::json base_profile_json(const std::string& hardware_spec);

/// Today's date (UTC) as YYYY-MM-DD.
std::string utc_date_today();

}  // namespace specsim
