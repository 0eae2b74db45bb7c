#include "cost/allreduce_fusion.h"

#include <algorithm>

#include "scenario/paths.h"
#include "util/error.h"
#include "util/json_io.h"

namespace specsim {

double AllReduceFusionModel::flashinfer_us(double bytes, int world) const {
  const double f = std::clamp((world - 2) / 6.0, 0.0, 1.0);  // TP2 .. TP8, linear between
  const double base = fi_tp2_base_us + f * (fi_tp8_base_us - fi_tp2_base_us);
  const double slope = fi_tp2_us_per_kib + f * (fi_tp8_us_per_kib - fi_tp2_us_per_kib);
  return base + slope * bytes / 1024.0 + fi_norm_extra_us;
}

double AllReduceFusionModel::custom_extra_for(double rows) const {
  return rows >= custom_two_shot_min_rows && rows > 0 ? custom_two_shot_extra_us : custom_extra_us;
}

const AllReduceFusionModel& allreduce_fusion_model() {
  static const AllReduceFusionModel m = [] {
    const std::string path = models_dir() + "/kernels/allreduce_fusion.json";
    const nlohmann::json j = read_json_file(path);
    for (const char* k : {"flashinfer", "custom"})
      if (!j.is_object() || !j.contains(k) || !j[k].is_object())
        throw InputError(path + ": needs an object \"" + k + "\"", "models/kernels/allreduce_fusion.json");
    const nlohmann::json& fi = j["flashinfer"];
    const nlohmann::json& cu = j["custom"];
    AllReduceFusionModel r;
    const std::string w = path + ": ";
    r.fi_tp2_base_us = sourced_number(fi, "tp2_base_us", w + "flashinfer");
    r.fi_tp2_us_per_kib = sourced_number(fi, "tp2_us_per_kib", w + "flashinfer");
    r.fi_tp8_base_us = sourced_number(fi, "tp8_base_us", w + "flashinfer");
    r.fi_tp8_us_per_kib = sourced_number(fi, "tp8_us_per_kib", w + "flashinfer");
    r.fi_norm_extra_us = sourced_number(fi, "norm_extra_us", w + "flashinfer");
    r.custom_extra_us = sourced_number(cu, "extra_us", w + "custom");
    r.custom_two_shot_min_rows = sourced_number(cu, "two_shot_min_rows", w + "custom");
    r.custom_two_shot_extra_us = sourced_number(cu, "two_shot_extra_us", w + "custom");
    r.custom_max_bytes = sourced_number(cu, "max_bytes", w + "custom");
    r.custom_max_hidden = sourced_number(cu, "max_hidden", w + "custom");
    return r;
  }();
  return m;
}

}  // namespace specsim
