#include "sweep/sweep_bands.h"

namespace specsim::sweep {

BandFactors band_factors(const Scenario& base) {
  const bool anchored = run_is_anchored(base);
  BandFactors f;
  f.baseline = error_band(base, BandFigure::BaselineTokS, 1.0, anchored);
  if (base.run.speculative()) f.spec = error_band(base, BandFigure::SpecTokS, 1.0, anchored);
  return f;
}

nlohmann::json band_factors_json(const BandFactors& f) {
  auto one = [](const std::optional<ErrorBand>& b) -> nlohmann::json {
    if (!b) return nullptr;
    return {{"lo_factor", b->lo}, {"hi_factor", b->hi}, {"n", b->n}, {"class", b->cls}, {"basis", band_basis(*b)}};
  };
  return {{"baseline", one(f.baseline)},
          {"spec", one(f.spec)},
          {"columns", "baseline_tok_s_lo/hi and spec_tok_s_lo/hi: the predicted value times lo_factor/hi_factor"}};
}

}  // namespace specsim::sweep
