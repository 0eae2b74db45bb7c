#include "scenario/nccl_curve.h"

#include <cmath>

#include "util/error.h"
#include "util/json_io.h"

namespace specsim {

NcclFit parse_nccl_fit(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) throw InputError("must be an object {world, source, pieces}", where);
  NcclFit f;
  f.world = json_int(j, "world", where);
  f.source = json_string(j, "source", where);
  if (f.world < 2) throw InputError("world must be at least 2", where + ".world");
  if (f.source.empty()) throw InputError("source must say which log and command produced the fit", where + ".source");
  if (!j.contains("pieces") || !j["pieces"].is_array() || j["pieces"].empty())
    throw InputError("pieces must be a non-empty array", where + ".pieces");
  double prev_max = 0;
  for (std::size_t i = 0; i < j["pieces"].size(); ++i) {
    const auto& pj = j["pieces"][i];
    const std::string w = where + ".pieces[" + std::to_string(i) + "]";
    NcclFitPiece p;
    p.min_bytes = json_double(pj, "min_bytes", w);
    p.max_bytes = json_double(pj, "max_bytes", w);
    p.lat_us = json_double(pj, "lat_us", w);
    p.busbw_gbps = json_double(pj, "busbw_gbps", w);
    if (!(p.min_bytes > 0 && p.max_bytes >= p.min_bytes)) throw InputError("needs 0 < min_bytes <= max_bytes", w);
    if (p.min_bytes < prev_max) throw InputError("ranges must ascend without overlap", w);
    if (!(p.lat_us >= 0) || !(p.busbw_gbps >= 0) || !std::isfinite(p.lat_us) || !std::isfinite(p.busbw_gbps))
      throw InputError("lat_us and busbw_gbps must be finite and >= 0", w);
    prev_max = p.max_bytes;
    f.pieces.push_back(p);
  }
  return f;
}

nlohmann::json nccl_fit_json(const NcclFit& f) {
  nlohmann::json pieces = nlohmann::json::array();
  for (const auto& p : f.pieces)
    pieces.push_back(
        {{"min_bytes", p.min_bytes}, {"max_bytes", p.max_bytes}, {"lat_us", p.lat_us}, {"busbw_gbps", p.busbw_gbps}});
  return {{"world", f.world}, {"source", f.source}, {"pieces", pieces}};
}

}  // namespace specsim
