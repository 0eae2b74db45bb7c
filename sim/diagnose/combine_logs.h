#pragma once
// Several logs of one deployment at different settings (draft shape, batch size) -> one scenario
// anchored to all of them: each speculative log's tok/s with its logged accept len is a cycle
// anchor, and with two or more settings the anchors split the unexplained cycle time into per
// draft step and per verify terms by least squares (anchors/anchors.h). Baselines a log only
// implies (a speculative log without --baseline-from) are dropped: each one was made to close its
// own log's cycle, and together they would contradict each other.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "diagnose/diagnose.h"

namespace specsim::diagnose {

/// The first diagnosis' scenario file with every diagnosis' measurements (implied baselines left
/// out, said in the notes); InputError when the logs are of different models or boxes, or the
/// combined measurements do not resolve into one consistent scenario.
nlohmann::json combined_scenario(const std::vector<Diagnosis>& ds, const std::vector<std::string>& logs);

/// One line per log beyond the first and what the combined scenario reproduces.
std::string combined_text(const std::vector<Diagnosis>& ds, const std::vector<std::string>& logs,
                          const nlohmann::json& scenario);

}  // namespace specsim::diagnose
