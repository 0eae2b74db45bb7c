#pragma once
// The error band of a sweep's tok/s columns. Every point of a sweep shares the base scenario's
// class (model, runtime, anchored or not), so the band is one pair of factors on the predicted value.
#include <nlohmann/json.hpp>
#include <optional>

#include "report/error_band.h"

namespace specsim::sweep {

struct BandFactors {
  std::optional<ErrorBand> baseline, spec;  ///< bands of a predicted 1.0: lo and hi are the factors
};

/// The factors for the sweep's base scenario (none where the table holds no case of its class).
BandFactors band_factors(const Scenario& base);

/// `{"baseline": BAND, "spec": BAND}`, each band in percent of the prediction with its class.
nlohmann::json band_factors_json(const BandFactors& f);

}  // namespace specsim::sweep
