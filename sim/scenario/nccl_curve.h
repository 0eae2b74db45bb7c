#pragma once
// A measured all-reduce curve in a hardware profile (topology field `nccl_fit`, written by
// `specsim calibrate --nccl-tests`): pieces of latency + bytes/bandwidth fitted per size range.
// The data and its JSON form; cost/nccl_curve_cost.h evaluates it.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace specsim {

/// time = lat_us + bytes / (algbw * 1e3) over [min_bytes, max_bytes]; algbw = busbw * n / (2(n-1)).
struct NcclFitPiece {
  double min_bytes = 0, max_bytes = 0;
  double lat_us = 0;
  double busbw_gbps = 0;  ///< 0: no size term (a flat, latency-bound range)
};

struct NcclFit {
  int world = 0;                     ///< ranks the log was measured with; the fit is used only at this tp size
  std::vector<NcclFitPiece> pieces;  ///< ascending, adjacent ranges
  std::string source;
};

/// Reads {"world", "source", "pieces": [{min_bytes, max_bytes, lat_us, busbw_gbps}]};
/// InputError naming `where` on a bad field.
NcclFit parse_nccl_fit(const nlohmann::json& j, const std::string& where);
nlohmann::json nccl_fit_json(const NcclFit& f);

}  // namespace specsim
