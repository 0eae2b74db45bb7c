#pragma once
// The error band of a sweep's tok/s columns. Every point of a sweep shares the base scenario's
// model and runtime, so its band is one pair of factors on the predicted value, chosen by how the
// point is anchored: at its own batch size, only by tok/s measured at another one, or (its spec
// figure) by spec tok/s measured at its batch but another top-k.
#include <nlohmann/json.hpp>
#include <optional>

#include "report/error_band.h"

namespace specsim::sweep {

struct BandPair {
  std::optional<ErrorBand> baseline, spec;  ///< bands of a predicted 1.0: lo and hi are the factors
};

/// The bands one point takes (references into its BandFactors).
struct BandRef {
  const std::optional<ErrorBand>& baseline;
  const std::optional<ErrorBand>& spec;
};

struct BandFactors {
  const Scenario* base = nullptr;
  bool anchored = false;  ///< any measurement anchors the base scenario
  BandPair at_anchor;     ///< unanchored, or anchored at the point's batch
  BandPair other_batch;   ///< anchored only by tok/s measured at other batch sizes
  BandPair other_topk;    ///< the spec band of a point whose spec tok/s anchors are at another top-k
  /// The pair for a point of batch size `batch` and top-k `topk`.
  BandRef at(int batch, int topk) const;
};

/// The factors for the sweep's base scenario (none where the table holds no case of its class).
BandFactors band_factors(const Scenario& base);

/// `{"baseline": BAND, "spec": BAND}`, each band in percent of the prediction with its class; an
/// anchored sweep adds `"at_other_batch": {"baseline", "spec"}`, the bands of its points whose
/// batch size no tok/s measurement was taken at, and `"at_other_topk": {"spec"}`, the spec band of
/// its points at a measured batch whose spec tok/s were measured at another top-k only.
nlohmann::json band_factors_json(const BandFactors& f);

}  // namespace specsim::sweep
