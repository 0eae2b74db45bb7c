#include "sweep/sweep_bands.h"

namespace specsim::sweep {
namespace {

BandPair pair_for(const Scenario& base, BandAnchoring how) {
  BandPair p;
  p.baseline = error_band(base, BandFigure::BaselineTokS, 1.0, how);
  if (base.run.speculative()) p.spec = error_band(base, BandFigure::SpecTokS, 1.0, how);
  return p;
}

nlohmann::json pair_json(const BandPair& p) {
  auto one = [](const std::optional<ErrorBand>& b) -> nlohmann::json {
    if (!b) return nullptr;
    return {{"lo_factor", b->lo}, {"hi_factor", b->hi}, {"n", b->n}, {"class", b->cls}, {"basis", band_basis(*b)}};
  };
  return {{"baseline", one(p.baseline)}, {"spec", one(p.spec)}};
}

}  // namespace

BandRef BandFactors::at(int batch, int topk) const {
  if (!anchored) return {at_anchor.baseline, at_anchor.spec};
  switch (spec_band_anchoring(*base, batch, topk)) {
    case BandAnchoring::OtherBatch: return {other_batch.baseline, other_batch.spec};
    case BandAnchoring::OtherTopk: return {at_anchor.baseline, other_topk.spec};
    default: return {at_anchor.baseline, at_anchor.spec};
  }
}

BandFactors band_factors(const Scenario& base) {
  BandFactors f;
  f.base = &base;
  f.anchored = run_is_anchored(base);
  f.at_anchor = pair_for(base, f.anchored ? BandAnchoring::Anchored : BandAnchoring::Unanchored);
  if (f.anchored) {
    f.other_batch = pair_for(base, BandAnchoring::OtherBatch);
    f.other_topk = pair_for(base, BandAnchoring::OtherTopk);
  }
  return f;
}

nlohmann::json band_factors_json(const BandFactors& f) {
  nlohmann::json j = pair_json(f.at_anchor);
  if (f.anchored) {
    j["at_other_batch"] = pair_json(f.other_batch);
    j["at_other_topk"] = {{"spec", pair_json(f.other_topk)["spec"]}};
  }
  j["columns"] =
      "baseline_tok_s_lo/hi and spec_tok_s_lo/hi: the predicted value times lo_factor/hi_factor (at_other_batch's at "
      "a batch size no tok/s measurement was taken at; at_other_topk's spec at a measured batch whose spec tok/s "
      "were measured at another top-k only)";
  return j;
}

}  // namespace specsim::sweep
